package mrtrstate.example;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.mrtrstate.token.StrictJson;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpSyncResponse;
import io.modelcontextprotocol.modern.server.feature.McpSyncPrompt;
import io.modelcontextprotocol.modern.server.feature.McpSyncPromptRepository;
import io.modelcontextprotocol.modern.server.feature.McpSyncResource;
import io.modelcontextprotocol.modern.server.feature.McpSyncResourceRepository;
import io.modelcontextprotocol.modern.server.feature.PromptsPage;
import io.modelcontextprotocol.modern.server.feature.ResourceTemplatesPage;
import io.modelcontextprotocol.modern.server.feature.ResourcesPage;
import java.util.List;
import java.util.Map;

/**
 * The prompt and the resource that ask before they answer (the twins of examples/server/asking.py): the first
 * round answers {@code input_required} with an elicitation and a state the {@code ToolBoundary} seals (bound to
 * the user, the target and, for the prompt, its arguments); the retry with the answer completes.
 *
 * <ul>
 * <li>{@code review_branch} (arguments {@code repo}, default {@code acme/api}, and {@code branch}, default
 *     {@code main}, both optional): asks what the review should focus on, then gives one user message naming the
 *     branch and the focus.</li>
 * <li>{@code trips://fares/{destination}} (a template: {@code trips://fares/Lisbon}): asks whether the person
 *     leaves on a weekend, then gives the return fare (15% more on a weekend); a destination the airline does not
 *     fly to is said at once, without asking.</li>
 * </ul>
 */
final class Asking {
    /** The URI template of the resource that asks. */
    static final String FARES_TEMPLATE = "trips://fares/{destination}";
    private static final String FARES_PREFIX = "trips://fares/";

    private Asking() {}

    private static McpSchema.InputRequiredResult ask(String key, String message, String kind) {
        return McpSchema.InputRequiredResult.builder()
                .elicit(key, McpSchema.ElicitFormRequest.builder(message, Map.of("type", "object", "properties",
                        Map.of(key, Map.of("type", kind)), "required", List.of(key))).build())
                .requestState(StrictJson.write(JsonNodeFactory.instance.objectNode().put("asked", key)))
                .build();
    }

    /** The accepted answer under {@code key} of a retry whose verified state says it was asked, else null. */
    private static Map<?, ?> answer(String requestState, Map<String, Object> inputResponses, String key) {
        Rounds.Retry retry = Rounds.Retry.of(requestState, inputResponses);
        if (retry.state() == null || !key.equals(retry.state().path("asked").asText(null))) {
            return null;
        }
        return retry.accepted(key);
    }

    /**
     * The text of {@code trips://fares/<destination>}: the return fare, 15% more for a weekend departure.
     *
     * @param destination a destination the airline flies to
     * @param weekend whether the person leaves on a weekend
     * @return the text
     */
    static String fareText(String destination, boolean weekend) {
        int base = Trips.DESTINATIONS.get(destination);
        return weekend
                ? "Return fare to " + destination + ", leaving on a weekend: " + Math.round(base * 1.15) + " EUR."
                : "Return fare to " + destination + ": " + base + " EUR.";
    }

    /** The prompt {@code review_branch}. */
    static McpSyncPromptRepository prompts() {
        McpSchema.Prompt definition = McpSchema.Prompt.builder("review_branch")
                .description("Review a branch, after the person says what to focus on.")
                .arguments(List.of(
                        McpSchema.PromptArgument.builder("repo").description("the repository (default acme/api)")
                                .build(),
                        McpSchema.PromptArgument.builder("branch").description("the branch (default main)").build()))
                .build();
        McpSyncPrompt prompt = McpSyncPrompt.of(definition, (context, request) -> {
            Map<String, String> arguments = request.arguments() == null ? Map.of() : request.arguments();
            String repo = arguments.getOrDefault("repo", "acme/api");
            String branch = arguments.getOrDefault("branch", "main");
            Map<?, ?> answer = answer(request.requestState(), request.inputResponses(), "focus");
            if (answer == null || !(answer.get("focus") instanceof String focus)) {
                McpSchema.GetPromptOutcome asked = ask("focus",
                        "What should the review of " + branch + " in " + repo + " focus on?", "string");
                return McpSyncResponse.result(asked);
            }
            McpSchema.GetPromptOutcome messages = McpSchema.GetPromptResult.builder(List.of(new McpSchema.PromptMessage(
                    McpSchema.Role.USER, McpSchema.TextContent.builder(
                            "Review branch " + branch + " of " + repo + ", focusing on: " + focus + ".").build())))
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

    /** The resource template {@code trips://fares/{destination}}. */
    static McpSyncResourceRepository resources() {
        McpSchema.ResourceTemplate template = McpSchema.ResourceTemplate.builder(FARES_TEMPLATE, "fares")
                .description("The return fare to a destination, after the person says whether they leave on a"
                        + " weekend.")
                .mimeType("text/plain").build();
        McpSyncResource fares = McpSyncResource.of((context, request) -> {
            String uri = request.uri();
            String destination = uri.substring(FARES_PREFIX.length());
            if (!Trips.DESTINATIONS.containsKey(destination)) {
                return McpSyncResponse.result(contents(uri, "The example airline does not fly to " + destination
                        + "."));
            }
            Map<?, ?> answer = answer(request.requestState(), request.inputResponses(), "weekend");
            if (answer == null || !(answer.get("weekend") instanceof Boolean weekend)) {
                McpSchema.ReadResourceOutcome asked = ask("weekend", "Do you leave for " + destination
                        + " on a weekend?", "boolean");
                return McpSyncResponse.result(asked);
            }
            return McpSyncResponse.result(contents(uri, fareText(destination, weekend)));
        });
        return new McpSyncResourceRepository() {
            @Override
            public ResourcesPage list(McpRequestContext context, String cursor) {
                return ResourcesPage.of(List.of());
            }

            @Override
            public ResourceTemplatesPage listTemplates(McpRequestContext context, String cursor) {
                return ResourceTemplatesPage.of(List.of(template));
            }

            @Override
            public McpSyncResource find(McpRequestContext context, String uri) {
                return uri.startsWith(FARES_PREFIX) && uri.length() > FARES_PREFIX.length() ? fares : null;
            }
        };
    }

    private static McpSchema.ReadResourceOutcome contents(String uri, String text) {
        return McpSchema.ReadResourceResult.builder(List.of(
                McpSchema.TextResourceContents.builder(uri, text).mimeType("text/plain").build())).build();
    }
}
