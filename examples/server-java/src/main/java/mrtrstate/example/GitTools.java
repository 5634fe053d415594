package mrtrstate.example;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpSyncResponse;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code delete_branch}: a risky action that needs the person's yes, bound to the exact request (the twin of
 * examples/server/git_tools.py and examples/server-ts/src/git-tools.ts, with the same state, so a state any
 * replica seals another continues). The wrapper checks user, tool and arguments before this code runs, and
 * redeems the state once.
 */
final class GitTools {
    /** The tool's definition. */
    static final McpSchema.Tool DEFINITION = McpSchema.Tool.builder("delete_branch", Map.of("type", "object",
            "properties", Map.of("repo", Map.of("type", "string"), "branch", Map.of("type", "string")),
            "required", List.of("repo", "branch")))
            .description("Delete a branch of a repository, after the person confirms this exact branch and commit.")
            .build();

    private record Repository(String defaultBranch, Map<String, String> branches) {}

    private final Map<String, Repository> repositories = new HashMap<>();

    /** The repositories the example servers start with. */
    GitTools() {
        repositories.put("acme/api", new Repository("main", new HashMap<>(Map.of("main", "9f2c1e7",
                "old-feature", "4b1d0aa", "release-1.0", "77e0c3b", "spike/cache", "c0ffee1"))));
        repositories.put("acme/web", new Repository("main", new HashMap<>(Map.of("main", "1a2b3c4",
                "redesign", "5d6e7f8"))));
    }

    private synchronized String head(String repo, String branch) {
        Repository repository = repositories.get(repo);
        if (repository == null) {
            throw new Rounds.ToolFailure("There is no repository '" + repo + "'.");
        }
        String head = repository.branches().get(branch);
        if (head == null) {
            throw new Rounds.ToolFailure(repo + " has no branch '" + branch + "'.");
        }
        if (branch.equals(repository.defaultBranch())) {
            throw new Rounds.ToolFailure("'" + branch + "' is the default branch of " + repo + "; it cannot be deleted.");
        }
        return head;
    }

    private synchronized boolean delete(String repo, String branch, String head) {
        Repository repository = repositories.get(repo);
        if (repository == null || !head.equals(repository.branches().get(branch))) {
            return false;
        }
        repository.branches().remove(branch);
        return true;
    }

    private static McpSyncResponse<McpSchema.CallToolOutcome> confirm(String repo, String branch, String head) {
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("type", "object");
        schema.put("properties", Map.of("confirm", Map.of("type", "boolean", "title", "Delete " + branch)));
        schema.put("required", List.of("confirm"));
        return Rounds.ask("confirm", "Delete branch '" + branch + "' of " + repo + " (at commit " + head
                + ")? This cannot be undone.", schema, JsonNodeFactory.instance.objectNode().put("head", head));
    }

    /** The handler (before the mrtr-state wrapper). */
    McpSyncResponse<McpSchema.CallToolOutcome> call(McpRequestContext context, McpSchema.CallToolRequest request) {
        Map<String, Object> arguments = request.arguments() == null ? Map.of() : request.arguments();
        String repo = String.valueOf(arguments.get("repo"));
        String branch = String.valueOf(arguments.get("branch"));
        String head = head(repo, branch);
        Rounds.needsElicitation(context, "delete_branch");
        Rounds.Retry retry = Rounds.Retry.of(request);
        if (retry.state() == null) {
            return confirm(repo, branch, head);
        }
        String kept = "Kept branch '" + branch + "' of " + repo + ": the deletion was not confirmed.";
        if (retry.declined("confirm")) {
            return Rounds.text(kept);
        }
        Map<?, ?> answer = retry.accepted("confirm");
        if (answer == null) {
            return confirm(repo, branch, head); // no answer yet: ask again
        }
        if (!Boolean.TRUE.equals(answer.get("confirm"))) {
            return Rounds.text(kept);
        }
        if (!head.equals(retry.state().path("head").asText(null)) || !delete(repo, branch, head)) {
            return confirm(repo, branch, head); // it moved
        }
        return Rounds.text("Deleted branch '" + branch + "' of " + repo + " (it was at " + head + ").");
    }
}
