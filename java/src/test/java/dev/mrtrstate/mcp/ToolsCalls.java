package dev.mrtrstate.mcp;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.modern.JsonRpc.JSONRPCRequest;
import io.modelcontextprotocol.modern.JsonRpc.JSONRPCResponse;
import io.modelcontextprotocol.modern.server.McpRequestManager;
import io.modelcontextprotocol.modern.server.McpTransportResponse;
import java.util.HashMap;
import java.util.Map;

/** A {@code tools/call} sent to a server the way the SDK's transports hand it one, for this package's tests. */
final class ToolsCalls {
    private ToolsCalls() {}

    /** The {@code _meta} a 2026-07-28 client with form elicitation sends with every request. */
    static final Map<String, Object> CLIENT_META = Map.of(
            "io.modelcontextprotocol/protocolVersion", "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities", Map.of("elicitation", Map.of("form", Map.of())),
            "io.modelcontextprotocol/clientInfo", Map.of("name", "test-client", "version", "1"));

    /**
     * Send {@code tools/call} with {@code params} plus {@link #CLIENT_META}, for {@code user}.
     *
     * @param server the server, or a boundary around it
     * @param user the authenticated user the transport context carries, or null for none
     * @param params the request's params, without {@code _meta}
     * @return the JSON-RPC response, a result or an error
     */
    static JSONRPCResponse send(McpRequestManager server, String user, Map<String, Object> params) {
        Map<String, Object> withMeta = new HashMap<>(params);
        withMeta.put("_meta", CLIENT_META);
        McpTransportContext context = McpTransportContext.create(user == null ? Map.of() : Map.of("user", user));
        McpTransportResponse response = server.handle(context, new JSONRPCRequest("tools/call", "1", withMeta)).block();
        assertNotNull(response);
        if (response instanceof McpTransportResponse.Error error) {
            return error.response();
        }
        return assertInstanceOf(McpTransportResponse.Result.class, response).response();
    }
}
