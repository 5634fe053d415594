import dev.mrtrstate.Keyring;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.mcp.ToolBoundary;
import dev.mrtrstate.replay.MemoryReplayStore;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpServer;
import io.modelcontextprotocol.modern.server.McpSyncResponse;
import io.modelcontextprotocol.modern.server.feature.McpSyncTool;
import io.modelcontextprotocol.modern.server.feature.McpSyncToolRepository;
import io.modelcontextprotocol.modern.server.feature.ToolsFeature;
import io.modelcontextprotocol.modern.server.feature.ToolsPage;
import io.modelcontextprotocol.modern.server.transport.HttpServletMcpTransport;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;

/** java/README.md's server in one screen: delete_branch asks first, its state sealed by the ToolBoundary. */
public final class OneScreenServer {
    private OneScreenServer() {}

    /** Your authentication: here one bearer token (EXAMPLE_BEARER_TOKEN) is alice; anything else gets 401. */
    static Filter bearer(String expected) {
        return (request, response, chain) -> {
            String header = ((HttpServletRequest) request).getHeader("Authorization");
            byte[] given = (header == null ? "" : header).getBytes(StandardCharsets.UTF_8);
            if (expected.isEmpty() || !MessageDigest.isEqual(given, ("Bearer " + expected).getBytes(StandardCharsets.UTF_8))) {
                ((HttpServletResponse) response).setStatus(401);
                return;
            }
            request.setAttribute("user", "alice");
            chain.doFilter(request, response);
        };
    }

    /** Serve delete_branch on http://127.0.0.1:8080/mcp, or on the port given as the first argument. */
    public static void main(String[] args) throws Exception {
        StateSealer sealer = StateSealer.builder(Keyring.fromEnv(), "https://tools.example.com")
                .replayStore(new MemoryReplayStore()).build();  // one replica; RedisReplayStore for several
        ToolBoundary boundary = ToolBoundary.builder(sealer)
                .principal(ctx -> (String) ctx.get("user"))     // whatever your auth filter put there
                .singleUse(true)                                // every state opens once
                .build();
        McpSchema.Tool definition = McpSchema.Tool.builder("delete_branch", Map.of("type", "object",
                "properties", Map.of("branch", Map.of("type", "string")), "required", List.of("branch"))).build();
        McpSyncTool tool = McpSyncTool.of(definition, (ctx, request) -> request.requestState() == null
                ? McpSyncResponse.result(McpSchema.InputRequiredResult.builder()
                        .elicit("confirm", McpSchema.ElicitFormRequest.builder("Delete it?", Map.of("type", "object",
                                "properties", Map.of("confirm", Map.of("type", "boolean")))).build())
                        .requestState("{\"head\": \"4b1d0aa\"}").build())
                : McpSyncResponse.result(McpSchema.CallToolResult.builder()
                        .addContent(McpSchema.TextContent.builder("Deleted (" + request.requestState() + ")").build()).build()));
        McpServer server = McpServer.builder()
                .serverInfo(McpSchema.Implementation.builder("files", "1.0").build())
                .feature(ToolsFeature.ofSync(new McpSyncToolRepository() {
                    @Override
                    public ToolsPage list(McpRequestContext ctx, String cursor) { return ToolsPage.of(List.of(definition)); }
                    @Override
                    public McpSyncTool find(McpRequestContext ctx, String name) { return tool; }
                }))
                .requestStateCodec(boundary.codec())
                .build();
        HttpServletMcpTransport transport = HttpServletMcpTransport.builder(boundary.around(server))
                .contextExtractor(http -> McpTransportContext.create(Map.of("user", http.getAttribute("user"))))
                .build();
        Tomcat tomcat = new Tomcat();
        tomcat.getConnector().setProperty("address", "127.0.0.1");
        tomcat.getConnector().setPort(args.length > 0 ? Integer.parseInt(args[0]) : 8080);
        Context context = tomcat.addContext("", null);
        Tomcat.addServlet(context, "mcp", transport).setAsyncSupported(true);
        context.addServletMappingDecoded("/mcp", "mcp");
        FilterDef auth = new FilterDef();
        auth.setFilterName("bearer");
        auth.setFilter(bearer(System.getenv().getOrDefault("EXAMPLE_BEARER_TOKEN", "")));
        auth.setAsyncSupported("true");
        context.addFilterDef(auth);
        FilterMap everything = new FilterMap();
        everything.setFilterName("bearer");
        everything.addURLPattern("/*");
        context.addFilterMap(everything);
        tomcat.start();
        tomcat.getServer().await();
    }
}
