package dev.mrtrstate.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.mrtrstate.InvalidRequestStateException;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.binding.TargetKind;
import dev.mrtrstate.token.StrictJson;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.modern.JsonRpc;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpRequestManager;
import io.modelcontextprotocol.modern.server.McpTransportResponse;
import io.modelcontextprotocol.modern.server.RequestStateCodec;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;
import reactor.core.publisher.Mono;

/**
 * The mrtr-state boundary of a server of the official Java MCP SDK: it stands between the transport and the
 * {@code McpServer}, where it sees every request as the client sent it (the raw JSON-RPC {@code params}), before
 * the SDK decodes them, checks a tool's arguments against its schema, or looks the tool up.
 *
 * <pre>{@code
 * ToolBoundary boundary = ToolBoundary.builder(sealer)
 *     .principal(context -> (String) context.get("user"))
 *     .singleUse(true)                          // every state opens once (the sealer has a replay store)
 *     .toolRefusal(ToolBoundary.ToolRefusal.TOOL_ERROR)
 *     .build();
 * McpServer server = McpServer.builder()...requestStateCodec(boundary.codec()).build();
 * HttpServletMcpTransport transport = HttpServletMcpTransport.builder(boundary.around(server))...build();
 * }</pre>
 *
 * <p>On {@code tools/call}, {@code prompts/get} and {@code resources/read} it gives the answers of the Python
 * boundary (profile, section 8.2):
 * <ul>
 * <li>{@code requestState} absent or {@code null}: a first round; {@code inputResponses} are dropped (they answer
 *     no round a verified state records) and never reach the handler.</li>
 * <li>{@code requestState} present: it must be a token (a non-string or {@code ""} is {@code malformed}), opened
 *     for the user, the target as the client named it (a state sent to another or unknown tool is
 *     {@code wrong_tool}, not the SDK's "Unknown tool") and the arguments as sent: absent arguments are {@code {}};
 *     {@code null}, a non-object, or arguments with no digest (an integer beyond 2^53 - 1, nesting deeper than
 *     256 levels) are unbindable, and a state bound to arguments is refused {@code wrong_request}. The handler
 *     gets the opened state as the request's {@code requestState}.</li>
 * <li>A result that asks for input with a {@code requestState}: the state is sealed bound to user, target and
 *     arguments; unbindable arguments are answered {@code -32602} with a sentence that says why.</li>
 * </ul>
 * A refusal on {@code tools/call} is a tool error ({@code isError}, the reason's sentence, the code in
 * {@code _meta} under {@value MrtrStateTools#REASON_META_KEY}) or, with {@link ToolRefusal#JSONRPC}, the JSON-RPC
 * error {@code -32602} with {@code {"reason": code}} as its data; {@code prompts/get} and {@code resources/read}
 * always get the latter. Neither holds the token, a claim or the state.
 */
public final class ToolBoundary {
    /** The JSON-RPC error code of a refusal and of unbindable arguments: Invalid params. */
    public static final int INVALID_PARAMS = -32602;
    /** The JSON-RPC error code when the server cannot bind a state to a user: Internal error. */
    public static final int INTERNAL_ERROR = -32603;
    /** The transport context key under which the boundary marks the requests it saw (see {@link #codec()}). */
    static final String CONTEXT_KEY = "dev.mrtrstate.mcp.ToolBoundary";
    /** How deep arguments may nest (profile 3.4): deeper ones have no digest. */
    static final int MAX_ARGUMENT_DEPTH = 256;

    private static final Logger LOG = Logger.getLogger(ToolBoundary.class.getName());
    private static final Map<String, String> TARGET_FIELDS = Map.of("tools/call", "name", "prompts/get", "name",
            "resources/read", "uri");
    private static final String NO_PRINCIPAL = "The server cannot bind request state to a user: no authenticated"
            + " principal.";
    private static final String BAD_ARGUMENTS = "The request's arguments cannot be bound to a request state (they"
            + " must be I-JSON): %s.";
    private static final String UNBINDABLE_NUMBER = "the arguments hold a number whose value is an integer beyond"
            + " +/-(2**53 - 1); RFC 8785 writes numbers as IEEE 754 doubles, so neighbouring integers there share one"
            + " digest and cannot be bound: pass such ids (64-bit ids, nanosecond timestamps) as strings";

    /** How a refused {@code requestState} on {@code tools/call} is answered. */
    public enum ToolRefusal {
        /** A tool error: {@code isError}, the reason's sentence, the code in {@code _meta} (the default). */
        TOOL_ERROR,
        /** The JSON-RPC error {@code -32602} with {@code data.reason}, as on prompts and resources. */
        JSONRPC
    }

    private final StateSealer sealer;
    private final Function<McpTransportContext, String> principal;
    private final Set<String> singleUse;
    private final boolean allSingleUse;
    private final ToolRefusal toolRefusal;

    private ToolBoundary(Builder builder) {
        this.sealer = builder.sealer;
        this.principal = builder.principal;
        this.singleUse = builder.singleUse;
        this.allSingleUse = builder.allSingleUse;
        this.toolRefusal = builder.toolRefusal;
    }

    /**
     * A builder.
     *
     * @param sealer the sealer: keys, issuer, lifetime and, for single use, a replay store
     * @return the builder
     */
    public static Builder builder(StateSealer sealer) {
        return new Builder(sealer);
    }

    /** The options of a {@link ToolBoundary}. */
    public static final class Builder {
        private final StateSealer sealer;
        private Function<McpTransportContext, String> principal;
        private Set<String> singleUse = Set.of();
        private boolean allSingleUse;
        private ToolRefusal toolRefusal = ToolRefusal.TOOL_ERROR;

        private Builder(StateSealer sealer) {
            this.sealer = Objects.requireNonNull(sealer, "sealer");
        }

        /**
         * How to find the authenticated user in the transport context (required).
         *
         * @param principal returns the user, or null when there is none
         * @return this builder
         */
        public Builder principal(Function<McpTransportContext, String> principal) {
            this.principal = Objects.requireNonNull(principal, "principal");
            return this;
        }

        /**
         * Whether every state opens at most once (profile, step 20: redeemed in the sealer's replay store, which
         * single use needs; without one a retry is answered {@code -32603} and the reason is logged). Default
         * false: a state opens until it expires.
         *
         * @param every true to redeem every state
         * @return this builder
         */
        public Builder singleUse(boolean every) {
            this.allSingleUse = every;
            this.singleUse = Set.of();
            return this;
        }

        /**
         * Redeem only the states of these targets, as their {@code aud} ({@code tools/call:delete_branch}).
         *
         * @param audiences the single-use targets
         * @return this builder
         */
        public Builder singleUse(Set<String> audiences) {
            this.singleUse = Set.copyOf(audiences);
            this.allSingleUse = false;
            return this;
        }

        /**
         * How a refused state on {@code tools/call} is answered (default {@link ToolRefusal#TOOL_ERROR}).
         *
         * @param mode the mode
         * @return this builder
         */
        public Builder toolRefusal(ToolRefusal mode) {
            this.toolRefusal = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /**
         * The boundary.
         *
         * @return the boundary
         * @throws IllegalStateException without a principal
         */
        public ToolBoundary build() {
            if (principal == null) {
                throw new IllegalStateException("ToolBoundary needs a principal: how to find the user in the"
                        + " transport context");
            }
            return new ToolBoundary(this);
        }
    }

    /**
     * The server's request state codec: the boundary seals and opens, so the codec passes states through, and
     * only for requests the boundary saw (a server whose transport skips the boundary fails loudly instead of
     * sending a state unsealed).
     *
     * @return the codec for {@code McpServer.builder().requestStateCodec(...)}
     */
    public RequestStateCodec codec() {
        ToolBoundary self = this;
        return new RequestStateCodec() {
            @Override
            public String seal(McpRequestContext context, String state) {
                check(context);
                return state; // sealed by the boundary on the way out, with the request's raw arguments
            }

            @Override
            public String open(McpRequestContext context, String token) {
                check(context);
                return token; // opened by the boundary already
            }

            private void check(McpRequestContext context) {
                if (context.transportContext() == null || context.transportContext().get(CONTEXT_KEY) != self) {
                    throw new IllegalStateException("a request state outside the ToolBoundary: give the transport"
                            + " boundary.around(server)");
                }
            }

            @Override
            public String toString() {
                return "ToolBoundary.codec()";
            }
        };
    }

    /**
     * The request manager a transport serves: {@code server} behind this boundary.
     *
     * @param server the SDK's server (built with {@link #codec()})
     * @return the manager to give {@code HttpServletMcpTransport.builder} or {@code StdioMcpTransport}
     */
    public McpRequestManager around(McpRequestManager server) {
        Objects.requireNonNull(server, "server");
        return new McpRequestManager() {
            @Override
            public Mono<McpTransportResponse> handle(McpTransportContext context, JsonRpc.JSONRPCRequest request) {
                return ToolBoundary.this.handle(context, request, server::handle);
            }

            @Override
            public Mono<McpTransportResponse> handleBlocking(McpTransportContext context,
                    JsonRpc.JSONRPCRequest request) {
                return ToolBoundary.this.handle(context, request, server::handleBlocking);
            }

            @Override
            public Mono<Void> handleNotification(McpTransportContext context,
                    JsonRpc.JSONRPCNotification notification) {
                return server.handleNotification(context, notification);
            }
        };
    }

    private Mono<McpTransportResponse> handle(McpTransportContext transport, JsonRpc.JSONRPCRequest request,
            BiFunction<McpTransportContext, JsonRpc.JSONRPCRequest, Mono<McpTransportResponse>> next) {
        McpTransportContext context = (transport == null ? McpTransportContext.EMPTY : transport)
                .putAll(Map.of(CONTEXT_KEY, this));
        String field = TARGET_FIELDS.get(request.method());
        if (field == null || request.id() == null || !(request.params() instanceof Map<?, ?> raw)) {
            return next.apply(context, request);
        }
        Map<String, Object> params = copy(raw);
        Object wire = params.get("requestState");
        if (wire == null) { // absent or null: a first round
            if (params.remove("inputResponses") != null) {
                LOG.info(() -> "inputResponses without a requestState on " + request.method() + " were dropped");
            }
            JsonRpc.JSONRPCRequest first = new JsonRpc.JSONRPCRequest(request.jsonrpc(), request.method(),
                    request.id(), params);
            return next.apply(context, first).map(response -> seal(context, request, params, response));
        }
        Binding binding;
        try {
            binding = binding(transport, request.method(), params);
        } catch (Answer answer) {
            return Mono.just(error(request.id(), answer.code, answer.getMessage(), null));
        }
        JsonNode state;
        try {
            if (!(wire instanceof String token) || token.isEmpty()) {
                throw new InvalidRequestStateException(InvalidRequestStateException.Reason.MALFORMED,
                        "the requestState is not a non-empty string");
            }
            state = sealer.open(token, binding, allSingleUse || singleUse.contains(binding.aud()), null);
        } catch (InvalidRequestStateException refused) {
            LOG.warning(() -> "requestState refused on " + request.method() + ": " + refused.reason().code());
            return Mono.just(refusal(request, refused.reason()));
        } catch (RuntimeException e) { // configuration (single use without a replay store), a store that failed
            LOG.log(Level.SEVERE, "cannot open requestState on " + request.method() + ": " + e.getMessage());
            return Mono.just(error(request.id(), INTERNAL_ERROR, "Internal error", null));
        }
        params.put("requestState", MrtrStateTools.stateText(state));
        JsonRpc.JSONRPCRequest retry = new JsonRpc.JSONRPCRequest(request.jsonrpc(), request.method(), request.id(),
                params);
        return next.apply(context, retry).map(response -> seal(context, request, params, response));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> copy(Map<?, ?> raw) {
        return new LinkedHashMap<>((Map<String, Object>) raw);
    }

    /** A request answered before the server: a JSON-RPC error. */
    private static final class Answer extends Exception {
        private static final long serialVersionUID = 1L;
        private final int code;

        Answer(int code, String message) {
            super(message, null, false, false);
            this.code = code;
        }
    }

    /** The binding of a request as the client sent it; arguments with a problem are bound as unbindable. */
    private Binding binding(McpTransportContext transport, String method, Map<String, Object> params)
            throws Answer {
        String field = TARGET_FIELDS.get(method);
        if (!(params.get(field) instanceof String name) || name.isEmpty()) {
            throw new Answer(INVALID_PARAMS, method + " needs a non-empty string '" + field + "'");
        }
        String user;
        try {
            user = principal.apply(transport == null ? McpTransportContext.EMPTY : transport);
        } catch (RuntimeException e) {
            LOG.log(Level.SEVERE, "the principal function failed on " + method, e);
            throw new Answer(INTERNAL_ERROR, "Internal error");
        }
        if (user == null || user.isEmpty()) {
            LOG.severe(() -> "no authenticated principal to bind requestState to on " + method
                    + ": give ToolBoundary a principal that finds the user in the transport context");
            throw new Answer(INTERNAL_ERROR, NO_PRINCIPAL);
        }
        if (method.equals("resources/read")) {
            return Binding.resource(user, name);
        }
        TargetKind kind = method.equals("tools/call") ? TargetKind.TOOL : TargetKind.PROMPT;
        JsonNode arguments = arguments(params);
        return Binding.of(user, kind, name, problem(arguments) == null ? arguments : NullNode.getInstance());
    }

    /** Absent arguments are {@code {}}; present ones are bound as they are ({@code null} too: unbindable). */
    private static JsonNode arguments(Map<String, Object> params) {
        if (!params.containsKey("arguments")) {
            return JsonNodeFactory.instance.objectNode();
        }
        Object value = params.get("arguments");
        if (value == null) {
            return NullNode.getInstance();
        }
        try {
            return StrictJson.toTree(value);
        } catch (IllegalArgumentException e) {
            return NullNode.getInstance();
        }
    }

    /**
     * Why arguments have no digest, in the Python library's words (a fixed sentence that names no value), or null
     * when they are bindable.
     *
     * @param arguments the arguments as the request carried them
     * @return the problem, or null
     */
    static String problem(JsonNode arguments) {
        if (arguments == null || !arguments.isObject()) {
            return "arguments must be a JSON object, not " + kind(arguments);
        }
        return problemIn(arguments, 1);
    }

    private static String problemIn(JsonNode value, int depth) {
        if (depth > MAX_ARGUMENT_DEPTH) {
            return "the value nests deeper than " + MAX_ARGUMENT_DEPTH + " levels";
        }
        if (value.isNumber()) {
            double number = value.doubleValue();
            if (!Double.isFinite(number)) {
                return "an integer too large for an IEEE 754 double";
            }
            // Every double beyond 2^53 - 1 is an integer (decision D1: the rule is on the double).
            return Math.abs(number) > 9007199254740991.0 ? UNBINDABLE_NUMBER : null;
        }
        if (value.isTextual()) {
            return StrictJson.isValidUnicode(value.textValue()) ? null
                    : "a string holds a lone surrogate, which is not valid Unicode";
        }
        if (value.isContainerNode()) {
            for (Map.Entry<String, JsonNode> member : value.properties()) {
                if (!StrictJson.isValidUnicode(member.getKey())) {
                    return "a string holds a lone surrogate, which is not valid Unicode";
                }
            }
            Iterable<JsonNode> items = value.isObject() ? value::elements : value;
            for (JsonNode item : items) {
                String problem = problemIn(item, depth + 1);
                if (problem != null) {
                    return problem;
                }
            }
        }
        return null;
    }

    private static String kind(JsonNode value) {
        if (value == null || value.isNull()) {
            return "null";
        }
        if (value.isBoolean()) {
            return "a boolean";
        }
        if (value.isNumber()) {
            return "a number";
        }
        if (value.isTextual()) {
            return "a string";
        }
        return value.isArray() ? "an array" : "a value that is not JSON";
    }

    /** Seal the state of a result that asks for input, bound to the request as the client sent it. */
    private McpTransportResponse seal(McpTransportContext transport, JsonRpc.JSONRPCRequest request,
            Map<String, Object> params, McpTransportResponse response) {
        if (response instanceof McpTransportResponse.Result answered) {
            JsonRpc.JSONRPCResponse sealed = seal(transport, request, params, answered.response());
            return sealed.error() != null ? McpTransportResponse.error(sealed) : McpTransportResponse.result(sealed);
        }
        if (response instanceof McpTransportResponse.Streaming streaming) {
            return McpTransportResponse.streaming(streaming.messages().map(message ->
                    message instanceof JsonRpc.JSONRPCResponse answer && Objects.equals(answer.id(), request.id())
                            ? seal(transport, request, params, answer) : message));
        }
        return response;
    }

    private JsonRpc.JSONRPCResponse seal(McpTransportContext transport, JsonRpc.JSONRPCRequest request,
            Map<String, Object> params, JsonRpc.JSONRPCResponse response) {
        Object result = response.result();
        String state;
        if (result instanceof McpSchema.InputRequiredResult asked) {
            state = asked.requestState();
        } else if (result instanceof Map<?, ?> map && "input_required".equals(map.get("resultType"))
                && map.get("requestState") != null) {
            if (!(map.get("requestState") instanceof String text)) {
                LOG.severe(() -> "an input_required result on " + request.method() + " has a requestState that is"
                        + " not a string");
                return errorResponse(request.id(), INTERNAL_ERROR, "Internal error", null);
            }
            state = text;
        } else {
            return response;
        }
        if (state == null) {
            return response;
        }
        Binding binding;
        try {
            binding = binding(transport, request.method(), params);
        } catch (Answer answer) {
            return errorResponse(request.id(), answer.code, answer.getMessage(), null);
        }
        if (binding.kind() != TargetKind.RESOURCE) {
            String problem = problem(arguments(params));
            if (problem != null) {
                LOG.warning(() -> "arguments on " + request.method() + " cannot be bound to requestState: "
                        + problem);
                return errorResponse(request.id(), INVALID_PARAMS, String.format(BAD_ARGUMENTS, problem), null);
            }
        }
        String token;
        try {
            token = sealer.seal(MrtrStateTools.stateValue(state), binding);
        } catch (RuntimeException e) {
            LOG.severe(() -> "cannot seal requestState on " + request.method() + ": " + e.getClass().getSimpleName());
            return errorResponse(request.id(), INTERNAL_ERROR, "Internal error", null);
        }
        Object sealed;
        if (result instanceof McpSchema.InputRequiredResult asked) {
            sealed = new McpSchema.InputRequiredResult(asked.inputRequests(), token, asked.resultType(), asked.meta());
        } else {
            Map<String, Object> copy = copy((Map<?, ?>) result);
            copy.put("requestState", token);
            sealed = copy;
        }
        return JsonRpc.JSONRPCResponse.result(request.id(), sealed);
    }

    private McpTransportResponse refusal(JsonRpc.JSONRPCRequest request, InvalidRequestStateException.Reason reason) {
        if (request.method().equals("tools/call") && toolRefusal == ToolRefusal.TOOL_ERROR) {
            // The handler does not run: the result the SDK would write for a tool error (resultType included).
            Map<String, Object> error = new LinkedHashMap<>();
            error.put("content", java.util.List.of(Map.of("type", "text", "text", reason.sentence())));
            error.put("isError", true);
            error.put("resultType", "complete");
            error.put("_meta", Map.of(MrtrStateTools.REASON_META_KEY, reason.code()));
            return McpTransportResponse.result(JsonRpc.JSONRPCResponse.result(request.id(), error));
        }
        return error(request.id(), INVALID_PARAMS, reason.sentence(), Map.of("reason", reason.code()));
    }

    private static McpTransportResponse error(Object id, int code, String message, Object data) {
        return McpTransportResponse.error(errorResponse(id, code, message, data));
    }

    private static JsonRpc.JSONRPCResponse errorResponse(Object id, int code, String message, Object data) {
        return JsonRpc.JSONRPCResponse.error(id, new JsonRpc.JSONRPCResponse.JSONRPCError(code, message, data));
    }

    @Override
    public String toString() {
        return "ToolBoundary(" + toolRefusal + ")";
    }
}
