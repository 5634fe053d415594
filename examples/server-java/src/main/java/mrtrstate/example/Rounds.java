package mrtrstate.example;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mrtrstate.token.StrictJson;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpSyncResponse;
import java.util.Map;

/**
 * What both tools share: the retry's verified state and answers, input-required results, text results and the
 * elicitation check (the twin of examples/server-ts/src/tools.ts and the TypeScript package's rounds).
 */
final class Rounds {
    /** A failure the tool reports to the person, as a tool error. */
    static final class ToolFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ToolFailure(String message) {
            super(message, null, false, false);
        }
    }

    /** The retry: the state the wrapper verified (null on a first call) and the person's answers. */
    record Retry(ObjectNode state, Map<String, Object> responses) {
        static Retry of(McpSchema.CallToolRequest request) {
            return of(request.requestState(), request.inputResponses());
        }

        /** The retry of any request: its (verified) {@code requestState} and {@code inputResponses}. */
        static Retry of(String requestState, Map<String, Object> inputResponses) {
            if (requestState == null) {
                return new Retry(null, Map.of()); // answers count only with a verified state (profile 8.2)
            }
            JsonNode state = StrictJson.parseExact(requestState);
            if (state == null || !state.isObject()) {
                throw new IllegalStateException("the verified requestState is not a JSON object");
            }
            return new Retry((ObjectNode) state, inputResponses == null ? Map.of() : inputResponses);
        }

        private Map<?, ?> response(String key) {
            return responses.get(key) instanceof Map<?, ?> map ? map : null;
        }

        /** The form content of an accepted elicitation under {@code key}, else null. */
        Map<?, ?> accepted(String key) {
            Map<?, ?> response = response(key);
            if (response == null || !"accept".equals(response.get("action"))) {
                return null;
            }
            return response.get("content") instanceof Map<?, ?> content ? content : Map.of();
        }

        /** Whether the person declined or cancelled the elicitation under {@code key}. */
        boolean declined(String key) {
            Map<?, ?> response = response(key);
            return response != null && ("decline".equals(response.get("action")) || "cancel".equals(response.get("action")));
        }
    }

    private Rounds() {}

    /** An input-required result: one elicitation, and the state (JSON text) the wrapper seals. */
    static McpSyncResponse<McpSchema.CallToolOutcome> ask(String key, String message, Map<String, Object> schema,
            JsonNode state) {
        McpSchema.CallToolOutcome asked = McpSchema.InputRequiredResult.builder()
                .elicit(key, McpSchema.ElicitFormRequest.builder(message, schema).build())
                .requestState(StrictJson.write(state))
                .build();
        return McpSyncResponse.result(asked);
    }

    /** A result of one text item. */
    static McpSyncResponse<McpSchema.CallToolOutcome> text(String message) {
        McpSchema.CallToolOutcome result = McpSchema.CallToolResult.builder()
                .addContent(McpSchema.TextContent.builder(message).build()).build();
        return McpSyncResponse.result(result);
    }

    /** A tool error of one text item. */
    static McpSyncResponse<McpSchema.CallToolOutcome> failure(String message) {
        McpSchema.CallToolOutcome result = McpSchema.CallToolResult.builder()
                .addContent(McpSchema.TextContent.builder(message).build()).isError(true).build();
        return McpSyncResponse.result(result);
    }

    /** Fail unless the request's client can ask the person (declared in the per-request envelope). */
    static void needsElicitation(McpRequestContext context, String tool) {
        McpSchema.ClientCapabilities capabilities = context.clientCapabilities();
        if (capabilities == null || capabilities.elicitation() == null) {
            throw new ToolFailure(tool + " needs a client that can ask the person (elicitation).");
        }
    }
}
