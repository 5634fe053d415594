package dev.mrtrstate.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.InvalidRequestStateException;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.binding.TargetKind;
import dev.mrtrstate.token.StrictJson;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.modern.McpException;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.RequestStateCodec;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * A {@link RequestStateCodec} for the official Java MCP SDK ({@code io.modelcontextprotocol.modern}) that seals
 * the SDK's {@code requestState} into a token of the profile, which every other language's library opens, in
 * place of the SDK's {@code HmacRequestStateCodec}:
 *
 * <pre>{@code
 * McpServer.builder()
 *     .requestStateCodec(MrtrStateCodec.builder(sealer).principal(ctx -> (String) ctx.get("user")).build())
 * }</pre>
 *
 * <p>The token is bound to the user (from the transport context, by {@code principal}), the target (the
 * request's method and primitive name: {@code tools/call:<tool>}, {@code prompts/get:<prompt>},
 * {@code resources/read:<uri>}) and the sealer's lifetime. It is <strong>not</strong> bound to the request's
 * arguments: the SDK's seam hands a codec the request context, which does not hold them, so no
 * {@code args_sha256} is written, and a token that carries one (minted by another replica that binds arguments)
 * is refused {@code wrong_request}. The sealer must not require the binding.
 *
 * <p>A refused token makes {@link #open} throw an {@link McpException} that the SDK sends as the JSON-RPC error
 * {@code -32602} (Invalid params) with the reason code's safe sentence as its message and
 * {@code {"reason": "<code>"}} as its data (profile, section 8.3): never the token, a claim or the state.
 */
public final class MrtrStateCodec implements RequestStateCodec {
    /** The JSON-RPC error code of a refusal: Invalid params. */
    public static final int INVALID_PARAMS = -32602;

    private final StateSealer sealer;
    private final Function<McpTransportContext, String> principal;
    private final boolean consume;

    private MrtrStateCodec(Builder builder) {
        this.sealer = builder.sealer;
        this.principal = builder.principal;
        this.consume = builder.consume;
        if (sealer.requireArguments()) {
            throw new IllegalArgumentException("the SDK's codec seam does not carry the request's arguments: build"
                    + " the StateSealer for MrtrStateCodec without requireArguments");
        }
    }

    /**
     * A builder.
     *
     * @param sealer the sealer: its keys, issuer, lifetime, clock and replay store
     * @return the builder
     */
    public static Builder builder(StateSealer sealer) {
        return new Builder(sealer);
    }

    /** The options of a {@link MrtrStateCodec}. */
    public static final class Builder {
        private final StateSealer sealer;
        private Function<McpTransportContext, String> principal;
        private boolean consume;

        private Builder(StateSealer sealer) {
            this.sealer = Objects.requireNonNull(sealer, "sealer");
        }

        /**
         * How to find the authenticated user in the transport context (required), e.g. the value an
         * authentication filter put there. A request without a user is never sealed for.
         *
         * @param principal returns the user, or null when there is none
         * @return this builder
         */
        public Builder principal(Function<McpTransportContext, String> principal) {
            this.principal = Objects.requireNonNull(principal, "principal");
            return this;
        }

        /**
         * Redeem every token when it is opened, so it opens at most once (profile, step 20): the sealer needs a
         * replay store. Default false.
         *
         * @param consume whether to redeem
         * @return this builder
         */
        public Builder consume(boolean consume) {
            this.consume = consume;
            return this;
        }

        /**
         * The codec.
         *
         * @return the codec
         * @throws IllegalStateException without a principal, or consuming without a replay store
         * @throws IllegalArgumentException for a sealer that requires the argument binding
         */
        public MrtrStateCodec build() {
            if (principal == null) {
                throw new IllegalStateException("MrtrStateCodec needs a principal: how to find the user in the"
                        + " transport context");
            }
            return new MrtrStateCodec(this);
        }
    }

    /**
     * Seal the SDK's state into a token bound to the user and the target.
     *
     * @param context the request answered with input required
     * @param state the SDK's state
     * @return the token
     * @throws IllegalStateException when the request has no user or no target of the profile
     */
    @Override
    public String seal(McpRequestContext context, String state) {
        return sealer.seal(state, binding(context, true));
    }

    /**
     * Open the token of a retry.
     *
     * @param context the retry
     * @param token the {@code requestState} the client sent back
     * @return the SDK's state (a state that is not a JSON string, sealed by another replica, as its JSON text)
     * @throws McpException {@code -32602} with {@code {"reason": "<code>"}} when the token is refused
     */
    @Override
    public String open(McpRequestContext context, String token) {
        Binding binding = binding(context, false);
        if (binding == null) {
            throw refusal(InvalidRequestStateException.Reason.WRONG_USER);
        }
        try {
            JsonNode state = sealer.open(token, binding, consume, false);
            return state.isTextual() ? state.textValue() : StrictJson.write(state);
        } catch (InvalidRequestStateException refused) {
            throw refusal(refused.reason());
        }
    }

    private static McpException refusal(InvalidRequestStateException.Reason reason) {
        return new McpException(INVALID_PARAMS, reason.sentence(), Map.of("reason", reason.code()));
    }

    /** The binding of a request (no arguments: the seam does not carry them); null without a user on open. */
    private Binding binding(McpRequestContext context, boolean sealing) {
        String user = principal.apply(context.transportContext());
        TargetKind kind = TargetKind.ofMethod(context.method());
        String name = context.primitiveName();
        if (kind == null || name == null || name.isEmpty()) {
            if (sealing) {
                throw new IllegalStateException("requestState is sealed for tools/call, prompts/get and"
                        + " resources/read only");
            }
            return null;
        }
        if (user == null || user.isEmpty()) {
            if (sealing) {
                throw new IllegalStateException("no authenticated user in the transport context: a requestState"
                        + " is sealed for a user");
            }
            return null;
        }
        return Binding.of(user, kind, name, null);
    }

    @Override
    public String toString() {
        return "MrtrStateCodec(" + sealer + ", consume=" + consume + ")";
    }
}
