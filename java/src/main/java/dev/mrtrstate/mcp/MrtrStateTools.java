package dev.mrtrstate.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.InvalidRequestStateException;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.token.Base64Url;
import dev.mrtrstate.token.StrictJson;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpSyncResponse;
import io.modelcontextprotocol.modern.server.RequestStateCodec;
import io.modelcontextprotocol.modern.server.feature.McpSyncTool;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Argument binding for tools of the official Java MCP SDK: a tool handler wrapper, the one place the SDK's public
 * API shows the library a request's arguments.
 *
 * <p>{@link #bind} wraps a {@link McpSyncTool.Handler}. When the handler answers an
 * {@code InputRequiredResult} with a {@code requestState}, the wrapper seals that state into a profile token bound
 * to the user, the tool and the call's arguments ({@code args_sha256}; absent arguments are {@code {}}). On the
 * retry it opens the token with the retry's arguments, and hands the handler the state it sealed; a refused token
 * never reaches the handler: the client gets the tool error of the profile's section 8.3 ({@code isError}, the
 * reason's fixed sentence, and the code in {@code _meta} under {@value #REASON_META_KEY}).
 *
 * <p>Arguments that are present but not a JSON object are unbindable (profile 3.4 and 8.2, decision D2). The SDK
 * decodes {@code params} into {@link McpSchema.CallToolRequest}, whose {@code arguments} is a map: a present
 * {@code "arguments": null} and absent arguments both reach the wrapper as a null map, and the raw {@code params}
 * are not shown to a handler, so the wrapper reads both as {@code {}} (absent). A replica of another language that
 * sees the raw request refuses a {@code null} that this wrapper accepts; the profile's rule for {@code null} cannot
 * be applied through the SDK's typed request.
 *
 * <p>The handler's {@code requestState} text that is the JSON text of an object or array is sealed as that JSON
 * value, so a replica in another language reads the same state (and the handler gets back JSON text); any other
 * text is sealed as a JSON string.
 *
 * <p>Since the wrapper's tokens are already sealed, the server's codec must pass them through:
 * {@code McpServer.builder().requestStateCodec(MrtrStateTools.passThrough())}. That codec refuses to let any
 * other state out (a tool that answers input required without the wrapper fails loudly instead of sending its
 * state unsealed), so wrap every tool that answers input required.
 */
public final class MrtrStateTools {
    /** The {@code _meta} key of the reason code in a tool error (profile, section 8.3). */
    public static final String REASON_META_KEY = "io.github.mrtr-state/reason";

    private MrtrStateTools() {}

    /**
     * Wrap a tool handler so that its {@code requestState} is a profile token bound to user, tool and arguments.
     *
     * @param sealer the sealer (require the binding with {@code requireArguments(true)} if every replica binds)
     * @param principal how to find the authenticated user in the transport context
     * @param consume whether a token opens at most once (the sealer needs a replay store)
     * @param handler the tool's handler; it answers with {@code McpSyncResponse.result(...)}
     * @return the wrapped handler
     */
    public static McpSyncTool.Handler bind(StateSealer sealer, Function<McpTransportContext, String> principal,
            boolean consume, McpSyncTool.Handler handler) {
        Objects.requireNonNull(sealer, "sealer");
        Objects.requireNonNull(principal, "principal");
        Objects.requireNonNull(handler, "handler");
        return (context, request) -> {
            String user = principal.apply(context.transportContext());
            Map<String, Object> arguments = request.arguments() == null ? Map.of() : request.arguments();
            McpSchema.CallToolRequest call = request;
            if (request.requestState() != null) {
                if (user == null || user.isEmpty()) {
                    return refusal(InvalidRequestStateException.Reason.WRONG_USER);
                }
                JsonNode state;
                try {
                    state = sealer.open(request.requestState(), Binding.tool(user, request.name(), arguments),
                            consume, null);
                } catch (InvalidRequestStateException refused) {
                    return refusal(refused.reason());
                }
                call = new McpSchema.CallToolRequest(request.name(), request.arguments(), request.inputResponses(),
                        stateText(state), request.meta());
            }
            McpSyncResponse<McpSchema.CallToolOutcome> response = handler.call(context, call);
            if (response instanceof McpSyncResponse.Result<McpSchema.CallToolOutcome> result
                    && result.result() instanceof McpSchema.InputRequiredResult asked
                    && asked.requestState() != null) {
                if (user == null || user.isEmpty()) {
                    throw new IllegalStateException("no authenticated user in the transport context: a"
                            + " requestState is sealed for a user");
                }
                String token = sealer.seal(stateValue(asked.requestState()),
                        Binding.tool(user, request.name(), arguments));
                return McpSyncResponse.result(new McpSchema.InputRequiredResult(asked.inputRequests(), token,
                        asked.resultType(), asked.meta()));
            }
            return response;
        };
    }

    /**
     * The state a handler's {@code requestState} text seals: the JSON object or array it holds when it is the
     * strict JSON text of one (so every language's replica reads the same state), else the text as a string.
     *
     * @param text the handler's requestState
     * @return the state to seal
     */
    public static JsonNode stateValue(String text) {
        String trimmed = text.strip();
        if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
            JsonNode value = StrictJson.parseSegment(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            if (value != null && value.isContainerNode()) {
                return value;
            }
        }
        return com.fasterxml.jackson.databind.node.TextNode.valueOf(text);
    }

    /**
     * The {@code requestState} text a handler gets back for an opened state: a string as it is, any other value
     * as its JSON text.
     *
     * @param state the opened state
     * @return the text
     */
    public static String stateText(JsonNode state) {
        return state.isTextual() ? state.textValue() : StrictJson.write(state);
    }

    private static McpSyncResponse<McpSchema.CallToolOutcome> refusal(InvalidRequestStateException.Reason reason) {
        McpSchema.CallToolOutcome error = McpSchema.CallToolResult.builder()
                .addContent(McpSchema.TextContent.builder(reason.sentence()).build())
                .isError(true)
                .meta(Map.of(REASON_META_KEY, reason.code()))
                .build();
        return McpSyncResponse.result(error);
    }

    /**
     * The codec for a server whose input-required tools are all wrapped by {@link #bind}: it passes the wrapper's
     * tokens through unchanged, and refuses to send any state that is not a token of the profile's form.
     *
     * @return the codec
     */
    public static RequestStateCodec passThrough() {
        return new RequestStateCodec() {
            @Override
            public String seal(McpRequestContext context, String state) {
                if (!looksSealed(state)) {
                    throw new IllegalStateException("a requestState that no MrtrStateTools wrapper sealed: wrap"
                            + " every tool that answers input required");
                }
                return state;
            }

            @Override
            public String open(McpRequestContext context, String token) {
                return token; // the wrapper opens it, with the arguments
            }

            @Override
            public String toString() {
                return "MrtrStateTools.passThrough()";
            }
        };
    }

    /** Whether {@code state} has the form of a token: three or five segments of base64url. */
    private static boolean looksSealed(String state) {
        if (state == null) {
            return false;
        }
        String[] segments = state.split("\\.", -1);
        if (segments.length != 3 && segments.length != 5) {
            return false;
        }
        for (int i = 0; i < segments.length; i++) {
            boolean emptyAllowed = segments.length == 5 && i == 1;
            if ((segments[i].isEmpty() && !emptyAllowed) || !Base64Url.isAlphabet(segments[i])) {
                return false;
            }
        }
        return true;
    }
}
