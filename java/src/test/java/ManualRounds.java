import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.client.McpClient;
import io.modelcontextprotocol.modern.client.McpSyncClient;
import io.modelcontextprotocol.modern.client.transport.HttpClientMcpTransport;
import io.modelcontextprotocol.modern.client.transport.McpHttpRequestCustomizer;
import java.util.Map;

/** java/README.md's client: the rounds of delete_branch by hand, the sealed requestState carried back as it came. */
public final class ManualRounds {
    private ManualRounds() {}

    /** Usage: ManualRounds URL (the bearer token in EXAMPLE_BEARER_TOKEN). */
    public static void main(String[] args) {
        String bearer = System.getenv().getOrDefault("EXAMPLE_BEARER_TOKEN", "");
        HttpClientMcpTransport transport = HttpClientMcpTransport.builder(args[0])
                .requestCustomizer(McpHttpRequestCustomizer.fromSync((request, headers, context) ->
                        headers.set("Authorization", "Bearer " + bearer)))
                .build();
        McpSyncClient client = McpClient.sync(transport)
                .clientInfo(McpSchema.Implementation.builder("manual-rounds", "1.0").build())
                // Declares that this client can ask the person; callOnce() below never calls it.
                .formElicitation(form -> McpSchema.ElicitResult.decline())
                .build();
        Map<String, Object> arguments = Map.of("repo", "acme/api", "branch", "old-feature");
        // Round 1: callOnce() returns the server's answer as it is, here an InputRequiredResult.
        McpSchema.CallToolOutcome first = client.tool("delete_branch").arguments(arguments).callOnce();
        if (!(first instanceof McpSchema.InputRequiredResult asked)) {
            throw new IllegalStateException("the server did not ask: " + first);
        }
        System.out.println("asked: " + asked.inputRequests().keySet());
        // Round 2: the same arguments, the answers, and the requestState exactly as the server sent it.
        McpSchema.CallToolOutcome second = client.tool("delete_branch").arguments(arguments)
                .inputResponses(Map.of("confirm", McpSchema.ElicitResult.accept(Map.of("confirm", true))))
                .requestState(asked.requestState())
                .callOnce();
        if (!(second instanceof McpSchema.CallToolResult done)) {
            throw new IllegalStateException("the server asked again: " + second);
        }
        for (McpSchema.Content content : done.content()) {
            if (content instanceof McpSchema.TextContent text) {
                System.out.println((Boolean.TRUE.equals(done.isError()) ? "error: " : "done: ") + text.text());
            }
        }
    }
}
