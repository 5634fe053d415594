package dev.mrtrstate.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.mrtrstate.Keyring;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.keys.KeyAlgorithm;
import dev.mrtrstate.replay.MemoryReplayStore;
import io.modelcontextprotocol.modern.JsonRpc.JSONRPCResponse;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.McpSchema.CallToolOutcome;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpServer;
import io.modelcontextprotocol.modern.server.McpSyncResponse;
import io.modelcontextprotocol.modern.server.feature.McpSyncTool;
import io.modelcontextprotocol.modern.server.feature.McpSyncToolRepository;
import io.modelcontextprotocol.modern.server.feature.ToolsFeature;
import io.modelcontextprotocol.modern.server.feature.ToolsPage;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The codec inside the SDK's own server, driven through {@link McpServer#handle}, the entry point the SDK's
 * transports call: a tool answers input required with a state, the client retries with the sealed token.
 */
class MrtrStateCodecTest {
    private static final String ISSUER = "https://mcp.example.com";
    private static final Clock T0 = Clock.fixed(Instant.ofEpochSecond(1_767_225_600L), ZoneOffset.UTC);

    /** delete_branch: the first call asks for input and keeps the branch in requestState; the retry acts. */
    private static McpServer server(MrtrStateCodec codec) {
        return server(codec, null);
    }

    /** With a sealer, the tool is wrapped by MrtrStateTools.bind and the codec passes its tokens through. */
    private static McpServer server(io.modelcontextprotocol.modern.server.RequestStateCodec codec, StateSealer bound) {
        McpSchema.Tool definition = McpSchema.Tool.builder("delete_branch",
                Map.of("type", "object", "properties", Map.of("branch", Map.of("type", "string")))).build();
        McpSyncTool.Handler handler = (McpRequestContext ctx, McpSchema.CallToolRequest request) -> {
            if (request.requestState() == null) {
                CallToolOutcome ask = McpSchema.InputRequiredResult.builder()
                        .elicit("confirm", McpSchema.ElicitFormRequest.builder("Delete the branch?",
                                Map.of("type", "object", "properties", Map.of())).build())
                        .requestState("branch=" + (request.arguments() == null ? null : request.arguments().get("branch")))
                        .build();
                return McpSyncResponse.result(ask);
            }
            CallToolOutcome done = McpSchema.CallToolResult.builder()
                    .addContent(McpSchema.TextContent.builder("deleted " + request.requestState()).build()).build();
            return McpSyncResponse.result(done);
        };
        McpSyncTool tool = McpSyncTool.of(definition, bound == null ? handler
                : MrtrStateTools.bind(bound, ctx -> (String) ctx.get("user"), false, handler));
        McpSyncToolRepository tools = new McpSyncToolRepository() {
            @Override
            public ToolsPage list(McpRequestContext ctx, String cursor) {
                return ToolsPage.of(List.of(definition));
            }

            @Override
            public McpSyncTool find(McpRequestContext ctx, String name) {
                return name.equals("delete_branch") ? tool : null;
            }
        };
        return McpServer.builder().serverInfo(McpSchema.Implementation.builder("test", "1").build())
                .feature(ToolsFeature.ofSync(tools)).requestStateCodec(codec).build();
    }

    private static JSONRPCResponse call(McpServer server, String user, Map<String, Object> extra) {
        return call(server, user, "main", extra);
    }

    private static JSONRPCResponse call(McpServer server, String user, String branch, Map<String, Object> extra) {
        Map<String, Object> params = new HashMap<>();
        params.put("name", "delete_branch");
        params.put("arguments", Map.of("branch", branch));
        params.putAll(extra);
        return ToolsCalls.send(server, user, params);
    }

    private static MrtrStateCodec codec(Keyring ring, Clock clock, boolean consume) {
        StateSealer.Builder sealer = StateSealer.builder(ring, ISSUER).clock(clock);
        if (consume) {
            sealer.replayStore(new MemoryReplayStore(100, clock));
        }
        return MrtrStateCodec.builder(sealer.build()).principal(ctx -> (String) ctx.get("user")).consume(consume)
                .build();
    }

    @SuppressWarnings("unchecked")
    private static String requestState(JSONRPCResponse response) {
        Map<String, Object> result = (Map<String, Object>) response.result();
        return (String) result.get("requestState");
    }

    @SuppressWarnings("unchecked")
    private static String text(JSONRPCResponse response) {
        Map<String, Object> result = (Map<String, Object>) response.result();
        List<Map<String, Object>> content = (List<Map<String, Object>>) result.get("content");
        return (String) content.get(0).get("text");
    }

    private static Map<String, Object> retry(String token) {
        return Map.of("requestState", token, "inputResponses", Map.of("confirm", Map.of("action", "accept", "content", Map.of())));
    }

    @Test
    void theSdkRoundTripsAProfileToken() {
        Keyring ring = Keyring.generate(KeyAlgorithm.EDDSA);
        McpServer server = server(codec(ring, T0, false));
        String token = requestState(call(server, "alice", Map.of()));
        assertEquals(3, token.split("\\.", -1).length);
        assertFalse(token.contains("branch=main") || token.contains("alice")); // base64url, not plain text
        assertEquals("deleted branch=main", text(call(server, "alice", retry(token))));
        // The token is the profile's: the library opens it directly, bound to user and target.
        StateSealer reader = StateSealer.builder(ring, ISSUER).clock(T0).build();
        try {
            assertEquals("branch=main", reader.open(token, Binding.tool("alice", "delete_branch", null)).textValue());
        } catch (dev.mrtrstate.InvalidRequestStateException e) {
            throw new AssertionError(e.toString());
        }
        assertEquals(dev.mrtrstate.InvalidRequestStateException.Reason.WRONG_TOOL,
                assertThrows(dev.mrtrstate.InvalidRequestStateException.class,
                        () -> reader.open(token, Binding.tool("alice", "book_trip", null))).reason());
    }

    @Test
    void aRefusalReachesTheClientAsInvalidParamsWithTheReasonCode() {
        Keyring ring = Keyring.generate(KeyAlgorithm.HS256);
        McpServer server = server(codec(ring, T0, false));
        String token = requestState(call(server, "alice", Map.of()));
        JSONRPCResponse refused = call(server, "bob", retry(token));
        assertEquals(MrtrStateCodec.INVALID_PARAMS, refused.error().code());
        assertEquals("The request state belongs to another user.", refused.error().message());
        assertEquals(Map.of("reason", "wrong_user"), refused.error().data());

        McpServer later = server(codec(ring, Clock.offset(T0, java.time.Duration.ofSeconds(600)), false));
        assertEquals(Map.of("reason", "expired"), call(later, "alice", retry(token)).error().data());
        String tampered = token.substring(0, token.length() - 2) + (token.endsWith("A") ? "BA" : "AA");
        assertEquals(Map.of("reason", "bad_signature"), call(server, "alice", retry(tampered)).error().data());
        assertFalse(String.valueOf(refused.error()).contains(token));
    }

    @Test
    void singleUseThroughTheCodec() {
        McpServer server = server(codec(Keyring.generate(KeyAlgorithm.A256GCM), T0, true));
        String token = requestState(call(server, "alice", Map.of()));
        assertEquals(5, token.split("\\.", -1).length);
        assertEquals("deleted branch=main", text(call(server, "alice", retry(token))));
        assertEquals(Map.of("reason", "replayed"), call(server, "alice", retry(token)).error().data());
    }

    @Test
    void noUserNoToken() {
        McpServer server = server(codec(Keyring.generate(KeyAlgorithm.HS256), T0, false));
        JSONRPCResponse response = call(server, null, Map.of());
        // The codec refuses to seal for nobody; the SDK turns that exception into an internal error.
        assertEquals(-32603, response.error().code());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> result(JSONRPCResponse response) {
        return (Map<String, Object>) response.result();
    }

    @SuppressWarnings("unchecked")
    private static Object reason(JSONRPCResponse response) {
        return ((Map<String, Object>) result(response).get("_meta")).get(MrtrStateTools.REASON_META_KEY);
    }

    @Test
    void theToolWrapperBindsTheArgumentsAndRefusesAsAToolError() throws Exception {
        Keyring ring = Keyring.generate(KeyAlgorithm.HS256);
        StateSealer sealer = StateSealer.builder(ring, ISSUER).clock(T0).requireArguments(true).build();
        McpServer server = server(MrtrStateTools.passThrough(), sealer);
        String token = requestState(call(server, "alice", Map.of()));
        // A profile token bound to the arguments: the library opens it with them, and only with them.
        assertEquals("branch=main",
                sealer.open(token, Binding.tool("alice", "delete_branch", Map.of("branch", "main"))).textValue());
        assertEquals(dev.mrtrstate.InvalidRequestStateException.Reason.WRONG_REQUEST,
                assertThrows(dev.mrtrstate.InvalidRequestStateException.class,
                        () -> sealer.open(token, Binding.tool("alice", "delete_branch", Map.of("branch", "prod"))))
                        .reason());
        assertEquals("deleted branch=main", text(call(server, "alice", retry(token))));
        // The retry with other arguments is refused before the handler runs, as the profile's tool error.
        JSONRPCResponse other = call(server, "alice", "prod", retry(token));
        assertEquals(Boolean.TRUE, result(other).get("isError"));
        assertEquals("wrong_request", reason(other));
        assertEquals("The request state was issued for a request with other arguments.", text(other));
        JSONRPCResponse bob = call(server, "bob", retry(token));
        assertEquals("wrong_user", reason(bob));
    }

    /**
     * Profile 3.4 and 8.2 (D2) through the SDK: arguments that are not an object never get a token; the SDK does not
     * decode them. A present {@code null} reaches the wrapper as absent arguments (the SDK's record cannot tell them
     * apart), so it is bound as {@code {}}: the limitation MrtrStateTools documents.
     */
    @Test
    void theToolWrapperMintsNoTokenForArgumentsThatAreNotAnObject() throws Exception {
        Keyring ring = Keyring.generate(KeyAlgorithm.HS256);
        StateSealer sealer = StateSealer.builder(ring, ISSUER).clock(T0).requireArguments(true).build();
        McpServer server = server(MrtrStateTools.passThrough(), sealer);
        for (Object notObject : List.of(List.of("main"), "main", 7, true)) {
            JSONRPCResponse response = call(server, "alice", Map.of("arguments", notObject));
            assertNotNull(response.error(), String.valueOf(notObject));
            assertEquals(null, response.result(), String.valueOf(notObject));
        }
        Map<String, Object> nullArguments = new HashMap<>();
        nullArguments.put("arguments", null);
        String token = requestState(call(server, "alice", nullArguments));
        assertEquals("branch=null", sealer.open(token, Binding.tool("alice", "delete_branch", Map.of())).textValue());
    }

    @Test
    void thePassThroughCodecRefusesAnUnsealedState() {
        McpServer server = server(MrtrStateTools.passThrough(), null); // the tool is not wrapped
        assertEquals(-32603, call(server, "alice", Map.of()).error().code());
    }
}
