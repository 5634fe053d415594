package mrtrstate.example;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mrtrstate.token.StrictJson;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpSyncResponse;
import io.modelcontextprotocol.modern.server.feature.McpSyncPrompt;
import io.modelcontextprotocol.modern.server.feature.McpSyncPromptRepository;
import io.modelcontextprotocol.modern.server.feature.McpSyncTool;
import io.modelcontextprotocol.modern.server.feature.McpSyncToolRepository;
import io.modelcontextprotocol.modern.server.feature.PromptsPage;
import io.modelcontextprotocol.modern.server.feature.ToolsPage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The fixtures the MCP conformance suite's {@code input-required-result-*} scenarios call (the twin of
 * examples/server/conformance.py). Every state goes through the server's {@code MrtrStateCodec}, bound to the
 * one fixed principal of the conformance mode (the suite's harness sends no credentials).
 */
final class Conformance {
    private static final Map<String, Object> NO_ARGUMENTS = Map.of("type", "object", "properties", Map.of());

    /** One fixture: its handler over the retry, answering a text or asking again. */
    private interface Fixture {
        McpSchema.CallToolOutcome call(McpRequestContext context, Retry retry);
    }

    /** The verified state (null on a first call) and the answers, which count only with a state. */
    record Retry(ObjectNode state, Map<String, Object> responses) {
        static Retry of(String requestState, Map<String, Object> inputResponses) {
            if (requestState == null) {
                return new Retry(null, Map.of());
            }
            JsonNode state = StrictJson.parseExact(requestState);
            return new Retry(state != null && state.isObject() ? (ObjectNode) state : null,
                    inputResponses == null ? Map.of() : inputResponses);
        }

        Map<?, ?> accepted(String key) {
            if (!(responses.get(key) instanceof Map<?, ?> response) || !"accept".equals(response.get("action"))) {
                return null;
            }
            return response.get("content") instanceof Map<?, ?> content ? content : Map.of();
        }

        String sampled(String key) {
            if (responses.get(key) instanceof Map<?, ?> result && result.get("content") instanceof Map<?, ?> content
                    && "text".equals(content.get("type")) && content.get("text") instanceof String text) {
                return text;
            }
            return null;
        }

        List<String> roots(String key) {
            if (!(responses.get(key) instanceof Map<?, ?> result) || !(result.get("roots") instanceof List<?> roots)) {
                return null;
            }
            List<String> uris = new ArrayList<>();
            for (Object root : roots) {
                if (root instanceof Map<?, ?> map) {
                    uris.add(String.valueOf(map.get("uri")));
                }
            }
            return uris;
        }

        boolean has(String key) {
            return responses.containsKey(key);
        }
    }

    private Conformance() {}

    private static McpSchema.ElicitFormRequest form(String message, String field, String kind) {
        return McpSchema.ElicitFormRequest.builder(message, Map.of("type", "object", "properties",
                Map.of(field, Map.of("type", kind)), "required", List.of(field))).build();
    }

    private static McpSchema.CreateMessageRequest sample(String text, int maxTokens) {
        return McpSchema.CreateMessageRequest.builder(List.of(new McpSchema.SamplingMessage(McpSchema.Role.USER,
                McpSchema.TextContent.builder(text).build())), maxTokens).build();
    }

    private static ObjectNode asked(String... keys) {
        ObjectNode state = JsonNodeFactory.instance.objectNode();
        var list = state.putArray("asked");
        for (String key : new java.util.TreeSet<>(List.of(keys))) {
            list.add(key);
        }
        return state;
    }

    private static McpSchema.CallToolOutcome text(String message) {
        return McpSchema.CallToolResult.builder().addContent(McpSchema.TextContent.builder(message).build()).build();
    }

    @SuppressWarnings("deprecation") // listRoots: a scenario asks for roots, which the SDK marks deprecated
    private static McpSchema.InputRequiredResult.Builder roots(McpSchema.InputRequiredResult.Builder builder,
            String key) {
        return builder.listRoots(key);
    }

    // The scenarios exercise sampling and roots, which the SDK marks deprecated in input requests.
    @SuppressWarnings("deprecation")
    private static Map<String, Fixture> fixtures() {
        Map<String, Fixture> fixtures = new LinkedHashMap<>();
        fixtures.put("test_input_required_result_elicitation", (context, retry) -> {
            Map<?, ?> answer = retry.accepted("user_name");
            if (answer == null || !(answer.get("name") instanceof String name)) {
                return McpSchema.InputRequiredResult.builder().elicit("user_name", form("What is your name?", "name",
                        "string")).requestState(StrictJson.write(asked("user_name"))).build();
            }
            return text("Hello, " + name + "!");
        });
        fixtures.put("test_input_required_result_sampling", (context, retry) -> {
            String sampled = retry.sampled("capital_question");
            if (sampled == null) {
                return McpSchema.InputRequiredResult.builder().createMessage("capital_question",
                        sample("What is the capital of France?", 100))
                        .requestState(StrictJson.write(asked("capital_question"))).build();
            }
            return text("The model said: " + sampled);
        });
        fixtures.put("test_input_required_result_list_roots", (context, retry) -> {
            List<String> roots = retry.roots("client_roots");
            if (roots == null) {
                return roots(McpSchema.InputRequiredResult.builder(), "client_roots")
                        .requestState(StrictJson.write(asked("client_roots"))).build();
            }
            return text("Roots: " + String.join(", ", roots));
        });
        fixtures.put("test_input_required_result_request_state", (context, retry) -> {
            Map<?, ?> answer = retry.accepted("confirm");
            ObjectNode expected = JsonNodeFactory.instance.objectNode().put("asked", "confirm");
            if (!expected.equals(retry.state()) || answer == null) {
                return McpSchema.InputRequiredResult.builder().elicit("confirm", form("Please confirm", "ok", "boolean"))
                        .requestState(StrictJson.write(expected)).build();
            }
            return text("state-ok: the sealed requestState verified; ok=" + pythonic(answer.get("ok")));
        });
        fixtures.put("test_input_required_result_multiple_inputs", (context, retry) -> {
            Map<?, ?> name = retry.accepted("user_name");
            String greeting = retry.sampled("greeting");
            List<String> roots = retry.roots("client_roots");
            if (retry.state() == null || name == null || greeting == null || roots == null) {
                return roots(McpSchema.InputRequiredResult.builder()
                        .elicit("user_name", form("What is your name?", "name", "string"))
                        .createMessage("greeting", sample("Generate a greeting", 50)), "client_roots")
                        .requestState(StrictJson.write(asked("user_name", "greeting", "client_roots"))).build();
            }
            return text(greeting + " " + name.get("name") + "; roots: " + String.join(", ", roots));
        });
        fixtures.put("test_input_required_result_multi_round", (context, retry) -> {
            ObjectNode state = retry.state() == null ? JsonNodeFactory.instance.objectNode() : retry.state();
            if ("color".equals(state.path("step").asText(null))) {
                Map<?, ?> color = retry.accepted("step2");
                if (color == null) {
                    return McpSchema.InputRequiredResult.builder().elicit("step2",
                            form("Step 2: What is your favorite color?", "color", "string"))
                            .requestState(StrictJson.write(state)).build();
                }
                return text(state.path("name").asText() + " likes " + color.get("color") + ".");
            }
            Map<?, ?> name = "name".equals(state.path("step").asText(null)) ? retry.accepted("step1") : null;
            if (name == null) {
                return McpSchema.InputRequiredResult.builder().elicit("step1",
                        form("Step 1: What is your name?", "name", "string"))
                        .requestState(StrictJson.write(JsonNodeFactory.instance.objectNode().put("step", "name")))
                        .build();
            }
            ObjectNode next = JsonNodeFactory.instance.objectNode().put("step", "color")
                    .put("name", String.valueOf(name.get("name")));
            return McpSchema.InputRequiredResult.builder().elicit("step2",
                    form("Step 2: What is your favorite color?", "color", "string"))
                    .requestState(StrictJson.write(next)).build();
        });
        fixtures.put("test_input_required_result_tampered_state", (context, retry) -> {
            if (retry.state() == null || retry.accepted("confirm") == null) {
                return McpSchema.InputRequiredResult.builder().elicit("confirm", form("Please confirm", "ok", "boolean"))
                        .requestState(StrictJson.write(JsonNodeFactory.instance.objectNode().put("asked", "confirm")))
                        .build();
            }
            return text("The state verified.");
        });
        fixtures.put("test_input_required_result_capabilities", (context, retry) -> {
            McpSchema.ClientCapabilities capabilities = context.clientCapabilities();
            McpSchema.InputRequiredResult.Builder builder = McpSchema.InputRequiredResult.builder();
            List<String> keys = new ArrayList<>();
            if (capabilities != null && capabilities.elicitation() != null) {
                builder.elicit("user_name", form("What is your name?", "name", "string"));
                keys.add("user_name");
            }
            if (capabilities != null && capabilities.sampling() != null) {
                builder.createMessage("greeting", sample("Generate a greeting", 50));
                keys.add("greeting");
            }
            if (keys.isEmpty()) {
                return text("The client declared neither elicitation nor sampling; nothing to ask.");
            }
            if (retry.state() != null && keys.stream().allMatch(retry::has)) {
                return text("Every declared input arrived.");
            }
            return builder.requestState(StrictJson.write(asked(keys.toArray(new String[0])))).build();
        });
        return fixtures;
    }

    /** Python's str() of a JSON boolean, so the text is the Python fixture's. */
    private static String pythonic(Object value) {
        return Boolean.TRUE.equals(value) ? "True" : Boolean.FALSE.equals(value) ? "False" : String.valueOf(value);
    }

    /** The fixture tools. */
    static McpSyncToolRepository tools() {
        Map<String, McpSyncTool> tools = new TreeMap<>();
        fixtures().forEach((name, fixture) -> tools.put(name, McpSyncTool.of(
                McpSchema.Tool.builder(name, NO_ARGUMENTS).build(),
                (context, request) -> McpSyncResponse.result(fixture.call(context,
                        Retry.of(request.requestState(), request.inputResponses()))))));
        return new McpSyncToolRepository() {
            @Override
            public ToolsPage list(McpRequestContext context, String cursor) {
                return ToolsPage.of(tools.values().stream().map(McpSyncTool::definition).toList());
            }

            @Override
            public McpSyncTool find(McpRequestContext context, String name) {
                return tools.get(name);
            }
        };
    }

    /** The fixture prompt: it asks for context first. */
    static McpSyncPromptRepository prompts() {
        McpSchema.Prompt definition = McpSchema.Prompt.builder("test_input_required_result_prompt")
                .description("A prompt that asks for context first.").build();
        McpSyncPrompt prompt = McpSyncPrompt.of(definition, (context, request) -> {
            Retry retry = Retry.of(request.requestState(), request.inputResponses());
            Map<?, ?> answer = retry.accepted("user_context");
            if (answer == null) {
                McpSchema.GetPromptOutcome ask = McpSchema.InputRequiredResult.builder().elicit("user_context",
                        form("What context should the prompt use?", "context", "string"))
                        .requestState(StrictJson.write(JsonNodeFactory.instance.objectNode().put("asked", "user_context")))
                        .build();
                return McpSyncResponse.result(ask);
            }
            McpSchema.GetPromptOutcome messages = McpSchema.GetPromptResult.builder(List.of(new McpSchema.PromptMessage(
                    McpSchema.Role.USER, McpSchema.TextContent.builder("Use this context: " + answer.get("context")).build())))
                    .build();
            return McpSyncResponse.result(messages);
        });
        return new McpSyncPromptRepository() {
            @Override
            public PromptsPage list(McpRequestContext context, String cursor) {
                return PromptsPage.of(List.of(definition));
            }

            @Override
            public McpSyncPrompt find(McpRequestContext context, String name) {
                return name.equals(definition.name()) ? prompt : null;
            }
        };
    }
}
