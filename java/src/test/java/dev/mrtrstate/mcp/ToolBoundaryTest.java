package dev.mrtrstate.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mrtrstate.Keyring;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.keys.KeyAlgorithm;
import dev.mrtrstate.replay.MemoryReplayStore;
import io.modelcontextprotocol.modern.JsonRpc.JSONRPCResponse;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpRequestManager;
import io.modelcontextprotocol.modern.server.McpServer;
import io.modelcontextprotocol.modern.server.McpSyncResponse;
import io.modelcontextprotocol.modern.server.feature.McpSyncTool;
import io.modelcontextprotocol.modern.server.feature.McpSyncToolRepository;
import io.modelcontextprotocol.modern.server.feature.ToolsFeature;
import io.modelcontextprotocol.modern.server.feature.ToolsPage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The boundary in front of the SDK's own server, driven as a transport drives it: the edge inputs of profile 8.2
 * get the Python boundary's answers, before the SDK's schema check and tool lookup can answer without a reason.
 */
class ToolBoundaryTest {
    private static final String ISSUER = "https://mcp.example.com";
    private static final Map<String, Object> BRANCH = Map.of("branch", "main");

    /** What the handler saw, one entry per call: its requestState and whether inputResponses reached it. */
    private final List<String> seen = new ArrayList<>();
    private final Keyring ring = Keyring.generate(KeyAlgorithm.EDDSA);
    private final StateSealer sealer = StateSealer.builder(ring, ISSUER).replayStore(new MemoryReplayStore())
            .requireArguments(true).build();

    /** delete_branch (branch required by its schema): asks on a first round, acts on a retry. */
    private McpRequestManager server(ToolBoundary boundary) {
        return boundary.around(sdkServer(boundary));
    }

    private McpServer sdkServer(ToolBoundary boundary) {
        McpSchema.Tool definition = McpSchema.Tool.builder("delete_branch", Map.of("type", "object",
                "properties", Map.of("branch", Map.of("type", "string")), "required", List.of("branch"))).build();
        McpSyncTool.Handler handler = (McpRequestContext ctx, McpSchema.CallToolRequest request) -> {
            seen.add(request.requestState() + "|" + (request.inputResponses() != null));
            if (request.requestState() == null) {
                return McpSyncResponse.result(McpSchema.InputRequiredResult.builder()
                        .elicit("confirm", McpSchema.ElicitFormRequest.builder("Delete?", Map.of("type", "object",
                                "properties", Map.of("confirm", Map.of("type", "boolean")))).build())
                        .requestState("{\"branch\":\"main\"}").build());
            }
            return McpSyncResponse.result(McpSchema.CallToolResult.builder()
                    .addContent(McpSchema.TextContent.builder("deleted " + request.requestState()).build()).build());
        };
        McpSyncTool tool = McpSyncTool.of(definition, handler);
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
                .feature(ToolsFeature.ofSync(tools)).requestStateCodec(boundary.codec()).build();
    }

    private ToolBoundary boundary(ToolBoundary.ToolRefusal mode) {
        return ToolBoundary.builder(sealer).principal(ctx -> (String) ctx.get("user")).singleUse(true)
                .toolRefusal(mode).build();
    }

    /** Send tools/call with {@code members} (a member mapped to ABSENT is left out). */
    private static JSONRPCResponse call(McpRequestManager server, String tool, Map<String, Object> members) {
        Map<String, Object> params = new HashMap<>();
        params.put("name", tool);
        params.put("arguments", BRANCH);
        params.putAll(members);
        params.values().removeIf(value -> value == ABSENT);
        return ToolsCalls.send(server, "alice", params);
    }

    private static final Object ABSENT = new Object();

    @SuppressWarnings("unchecked")
    private static Map<String, Object> result(JSONRPCResponse response) {
        assertNull(response.error(), () -> "an error: " + response.error());
        return (Map<String, Object>) response.result();
    }

    /** The reason code of a refusal: the tool error's _meta, or the JSON-RPC error's data. */
    @SuppressWarnings("unchecked")
    private static String reason(JSONRPCResponse response) {
        if (response.error() != null) {
            assertEquals(-32602, response.error().code());
            return (String) ((Map<String, Object>) response.error().data()).get("reason");
        }
        Map<String, Object> result = result(response);
        assertEquals(Boolean.TRUE, result.get("isError"));
        return (String) ((Map<String, Object>) result.get("_meta")).get(MrtrStateTools.REASON_META_KEY);
    }

    private String token(McpRequestManager server) {
        return (String) result(call(server, "delete_branch", Map.of())).get("requestState");
    }

    @Test
    void aFirstRoundIsSealedForTheArgumentsAndTheRetryOpensOnce() throws Exception {
        McpRequestManager server = server(boundary(ToolBoundary.ToolRefusal.TOOL_ERROR));
        String token = token(server);
        assertEquals(3, token.split("\\.", -1).length);
        assertFalse(token.contains("main"));
        // The library opens it bound to user, tool and arguments.
        StateSealer.builder(ring, ISSUER).build().open(token, Binding.tool("alice", "delete_branch", BRANCH));
        Map<String, Object> done = result(call(server, "delete_branch", Map.of("requestState", token)));
        assertEquals(null, done.get("isError"));
        assertEquals("{\"branch\":\"main\"}|false", seen.get(1));
        assertEquals("replayed", reason(call(server, "delete_branch", Map.of("requestState", token))));
    }

    @Test
    void aRequestStateThatIsNotANonEmptyStringIsMalformedAndNeverReachesTheHandler() {
        McpRequestManager server = server(boundary(ToolBoundary.ToolRefusal.TOOL_ERROR));
        for (Object wire : List.of("", 42, 1.5, true, Map.of(), List.of())) {
            assertEquals("malformed", reason(call(server, "delete_branch", Map.of("requestState", wire))));
        }
        assertTrue(seen.isEmpty());
    }

    @Test
    void aRetryWithArgumentsAbsentNullEmptyOrUnbindableIsWrongRequestNotTheSchemaCheck() {
        McpRequestManager server = server(boundary(ToolBoundary.ToolRefusal.TOOL_ERROR));
        Map<String, Object> deep = Map.of("x", 1);
        for (int i = 0; i < 300; i++) {
            deep = Map.of("x", deep);
        }
        List<Object> arguments = new ArrayList<>(List.of(ABSENT, Map.of(), "x", List.of(1),
                Map.of("branch", "main", "n", 1L << 60), deep));
        arguments.add(null);
        for (Object value : arguments) {
            Map<String, Object> members = new HashMap<>();
            members.put("arguments", value);
            members.put("requestState", token(server));
            assertEquals("wrong_request", reason(call(server, "delete_branch", members)), String.valueOf(value));
        }
    }

    @Test
    void aStateSentToAnUnknownToolIsWrongToolNotUnknownTool() {
        McpRequestManager server = server(boundary(ToolBoundary.ToolRefusal.TOOL_ERROR));
        assertEquals("wrong_tool", reason(call(server, "no_such_tool", Map.of("requestState", token(server)))));
    }

    @Test
    void theJsonRpcModeAnswersInvalidParamsWithTheReason() {
        McpRequestManager server = server(boundary(ToolBoundary.ToolRefusal.JSONRPC));
        JSONRPCResponse refused = call(server, "delete_branch", Map.of("requestState", 42));
        assertNotNull(refused.error());
        assertEquals("malformed", reason(refused));
        assertEquals("The request state is not a well-formed token of this profile.", refused.error().message());
    }

    @Test
    void unbindableArgumentsOnAFirstRoundAreAnsweredWithWhy() {
        McpRequestManager server = server(boundary(ToolBoundary.ToolRefusal.TOOL_ERROR));
        JSONRPCResponse answer = call(server, "delete_branch",
                Map.of("arguments", Map.of("branch", "main", "n", 1L << 60)));
        assertNotNull(answer.error());
        assertEquals(-32602, answer.error().code());
        assertTrue(answer.error().message().startsWith("The request's arguments cannot be bound to a request state"
                + " (they must be I-JSON): the arguments hold a number whose value is an integer beyond"),
                answer.error().message());
    }

    @Test
    void inputResponsesOnAFirstRoundNeverReachTheHandler() {
        McpRequestManager server = server(boundary(ToolBoundary.ToolRefusal.TOOL_ERROR));
        result(call(server, "delete_branch", Map.of("inputResponses",
                Map.of("confirm", Map.of("action", "accept", "content", Map.of("confirm", true))))));
        assertEquals("null|false", seen.get(0));
    }

    @Test
    void theCodecRefusesARequestTheBoundaryDidNotSee() {
        ToolBoundary boundary = boundary(ToolBoundary.ToolRefusal.TOOL_ERROR);
        // The SDK's server alone, as a transport that skips the boundary calls it: no state leaves unsealed.
        JSONRPCResponse bare = call(sdkServer(boundary), "delete_branch", Map.of());
        assertNotNull(bare.error());
        assertFalse(String.valueOf(bare).contains("\"branch\":\"main\""), String.valueOf(bare));
        assertEquals(1, seen.size()); // the handler ran; its state did not leave
    }
}
