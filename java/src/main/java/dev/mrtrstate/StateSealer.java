package dev.mrtrstate;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.InvalidRequestStateException.Reason;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.binding.TargetKind;
import dev.mrtrstate.keys.A256GcmKey;
import dev.mrtrstate.keys.Key;
import dev.mrtrstate.keys.KeySource;
import dev.mrtrstate.keys.KeyringException;
import dev.mrtrstate.metrics.StateMetrics;
import dev.mrtrstate.replay.ReplayStore;
import dev.mrtrstate.replay.ReplayStoreException;
import dev.mrtrstate.token.Base64Url;
import dev.mrtrstate.token.Claims;
import dev.mrtrstate.token.Jwe;
import dev.mrtrstate.token.Jws;
import dev.mrtrstate.token.Segments;
import dev.mrtrstate.token.StrictJson;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Objects;
import java.util.function.IntFunction;

/**
 * Seals state into a {@code requestState} token, and opens it on the retry (profile, sections 4 and 5).
 *
 * <p>Made with {@link #builder(KeySource, String)}. A sealer holds no mutable state and is safe to share between
 * threads. With a signing key first in the ring the token is signed (the client can read the state: never put a
 * secret in it); with an encryption key first it is encrypted (section 3.6).
 *
 * <pre>{@code
 * StateSealer sealer = StateSealer.builder(Keyring.fromEnv(), "https://mcp.example.com").build();
 * String token = sealer.seal(state, Binding.tool(user, "deploy", arguments));
 * JsonNode back = sealer.open(token, Binding.tool(user, "deploy", arguments));
 * }</pre>
 */
public final class StateSealer {
    /** The default and usual maximum lifetime, 600 seconds (rule AGT-18). */
    public static final long DEFAULT_TTL = 600;
    /** The default size cap, 8192 bytes. */
    public static final long DEFAULT_MAX_TOKEN_BYTES = 8192;
    /** The largest leeway the profile allows, 300 seconds. */
    public static final long MAX_LEEWAY = 300;

    private static final int JTI_BYTES = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final KeySource ring;
    private final String issuer;
    private final long ttl;
    private final long maxLifetime;
    private final long leeway;
    private final long maxTokenBytes;
    private final Clock clock;
    private final IntFunction<byte[]> entropy;
    private final ReplayStore replayStore;
    private final boolean requireArguments;
    private final StateMetrics metrics;

    private StateSealer(Builder b) {
        this.ring = b.ring;
        this.issuer = b.issuer;
        this.maxLifetime = b.maxLifetime;
        this.ttl = b.ttl != null ? b.ttl : Math.min(DEFAULT_TTL, b.maxLifetime);
        this.leeway = b.leeway;
        this.maxTokenBytes = b.maxTokenBytes;
        this.clock = b.clock;
        this.entropy = b.entropy;
        this.replayStore = b.replayStore;
        this.requireArguments = b.requireArguments;
        this.metrics = b.metrics;
        if (ttl < 1 || ttl > maxLifetime) {
            throw new IllegalArgumentException("ttl must be from 1 to maxLifetime (" + maxLifetime + ") seconds");
        }
    }

    /**
     * A builder.
     *
     * @param ring the keys: a {@link Keyring}, or a source whose keys change while the server runs
     * @param issuer this server's identity, written to and required in {@code iss}
     * @return the builder
     */
    public static Builder builder(KeySource ring, String issuer) {
        return new Builder(ring, issuer);
    }

    /** The options of a {@link StateSealer}, each with a documented default. */
    public static final class Builder {
        private final KeySource ring;
        private final String issuer;
        private Long ttl;
        private long maxLifetime = DEFAULT_TTL;
        private long leeway;
        private long maxTokenBytes = DEFAULT_MAX_TOKEN_BYTES;
        private Clock clock = Clock.systemUTC();
        private IntFunction<byte[]> entropy = Builder::secureRandom;
        private ReplayStore replayStore;
        private boolean requireArguments;
        private StateMetrics metrics;

        private Builder(KeySource ring, String issuer) {
            this.ring = Objects.requireNonNull(ring, "ring");
            if (issuer == null || issuer.isEmpty()) {
                throw new IllegalArgumentException("issuer must be a non-empty string");
            }
            this.issuer = issuer;
        }

        private static byte[] secureRandom(int size) {
            byte[] bytes = new byte[size];
            RANDOM.nextBytes(bytes);
            return bytes;
        }

        /**
         * The lifetime of sealed tokens. Default: 600 seconds, or {@code maxLifetime} when that is shorter.
         *
         * @param seconds 1 to {@code maxLifetime}
         * @return this builder
         */
        public Builder ttl(long seconds) {
            this.ttl = seconds;
            return this;
        }

        /**
         * The longest {@code exp - iat} this verifier accepts (step 13). Default 600 seconds.
         *
         * @param seconds at least 1
         * @return this builder
         */
        public Builder maxLifetime(long seconds) {
            if (seconds < 1) {
                throw new IllegalArgumentException("maxLifetime must be at least 1 second");
            }
            this.maxLifetime = seconds;
            return this;
        }

        /**
         * Clock skew allowed on {@code iat} and {@code exp} (steps 14 and 15). Default 0.
         *
         * @param seconds 0 to 300
         * @return this builder
         */
        public Builder leeway(long seconds) {
            if (seconds < 0 || seconds > MAX_LEEWAY) {
                throw new IllegalArgumentException("leeway must be from 0 to " + MAX_LEEWAY + " seconds");
            }
            this.leeway = seconds;
            return this;
        }

        /**
         * The size cap, in UTF-8 bytes, checked before any decoding (step 1). Default 8192.
         *
         * @param bytes at least 1
         * @return this builder
         */
        public Builder maxTokenBytes(long bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("maxTokenBytes must be at least 1");
            }
            this.maxTokenBytes = bytes;
            return this;
        }

        /**
         * The clock: {@code iat} when sealing, {@code now} when opening. Default {@code Clock.systemUTC()}.
         *
         * @param clock the clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Where the {@code jti} bytes come from (a test hook). Default: the system's {@link SecureRandom}. The IV
         * of the encrypted form never comes from here: always from the system's secure random source (D6).
         *
         * @param entropy returns that many random bytes
         * @return this builder
         */
        public Builder entropy(IntFunction<byte[]> entropy) {
            this.entropy = Objects.requireNonNull(entropy, "entropy");
            return this;
        }

        /**
         * Where {@code open(..., consume = true)} records redeemed tokens (step 20). Default: none, and
         * consuming is then a configuration error.
         *
         * @param store the store
         * @return this builder
         */
        public Builder replayStore(ReplayStore store) {
            this.replayStore = store;
            return this;
        }

        /**
         * Require the argument binding (step 19): a token for a tool or prompt without {@code args_sha256} is
         * refused {@code wrong_request}, and sealing for a tool or prompt needs arguments. Default false.
         *
         * @param required whether to require it
         * @return this builder
         */
        public Builder requireArguments(boolean required) {
            this.requireArguments = required;
            return this;
        }

        /**
         * Where seals, opens, refusals (by reason code), redemptions and store outages are counted
         * ({@code spec/metrics.json}): {@link dev.mrtrstate.metrics.OpenTelemetryMetrics}, or any callback. Default:
         * none (nothing is counted).
         *
         * @param metrics the metrics, or null for none
         * @return this builder
         */
        public Builder metrics(StateMetrics metrics) {
            this.metrics = metrics;
            return this;
        }

        /**
         * The sealer.
         *
         * @return the sealer
         * @throws IllegalArgumentException for a ttl longer than the maximum lifetime
         */
        public StateSealer build() {
            return new StateSealer(this);
        }
    }

    /** {@return this server's identity} */
    public String issuer() {
        return issuer;
    }

    /** {@return the lifetime of sealed tokens, in seconds} */
    public long ttl() {
        return ttl;
    }

    /** {@return the size cap in bytes} */
    public long maxTokenBytes() {
        return maxTokenBytes;
    }

    /** {@return whether the argument binding is required} */
    public boolean requireArguments() {
        return requireArguments;
    }

    /** {@return the key source} */
    public KeySource ring() {
        return ring;
    }

    /**
     * Seal {@code state} for a request (profile, section 4).
     *
     * @param state any JSON value: a JsonNode, or a Map, List, String, Number, Boolean or null
     * @param binding the request: user, target and, to bind them, the arguments
     * @return the token
     * @throws IllegalArgumentException the state is not I-JSON or nests deeper than 32 levels, the token would
     *     exceed the size cap, the arguments are unbindable (pass integers beyond 2^53 - 1 as strings), or the
     *     binding is required and the arguments are missing for a tool or prompt
     * @throws KeyringException the ring cannot seal (its first key is a public key)
     */
    public String seal(Object state, Binding binding) {
        Objects.requireNonNull(binding, "binding");
        JsonNode value;
        try {
            value = StrictJson.toTree(state);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("the state is not a JSON value");
        }
        // Profile 4, point 1: I-JSON, at most 32 levels deep.
        if (!StrictJson.isIJson(value)) {
            throw new IllegalArgumentException("the state is not I-JSON (RFC 7493): it holds an integer beyond"
                    + " +/-(2^53 - 1), a number beyond a double, a lone surrogate or a non-JSON value");
        }
        if (StrictJson.depth(value, StrictJson.MAX_STATE_DEPTH) > StrictJson.MAX_STATE_DEPTH) {
            throw new IllegalArgumentException("the state nests deeper than " + StrictJson.MAX_STATE_DEPTH + " levels");
        }
        if (binding.arguments() == null && requireArguments && binding.kind() != TargetKind.RESOURCE) {
            throw new IllegalArgumentException("this sealer requires the argument binding: pass the request's"
                    + " arguments (an empty object when it has none)");
        }
        // Profile 4, point 4: never a token bound to unbindable arguments.
        String digest = binding.digest();
        if (binding.arguments() != null && digest == null) {
            throw new IllegalArgumentException("the arguments are unbindable (profile 3.4): they are not a JSON"
                    + " object, or hold a number of magnitude 2^53 or more, a number beyond a double or a lone"
                    + " surrogate; pass 64-bit ids and nanosecond timestamps as strings");
        }
        Key key = ring.signingKey();
        byte[] jtiBytes = entropy.apply(JTI_BYTES);
        if (jtiBytes == null || jtiBytes.length < JTI_BYTES) {
            throw new IllegalStateException("the entropy source returned fewer than " + JTI_BYTES + " bytes");
        }
        // Profile 4, point 3: iat is now rounded down, exp = iat + ttl, a fresh jti.
        long iat = clock.instant().getEpochSecond();
        if (iat < 0 || iat > StrictJson.MAX_SAFE_INTEGER - ttl) {
            throw new IllegalStateException("the clock must give 0 <= iat and iat + ttl <= 2^53 - 1");
        }
        Claims claims = new Claims(issuer, binding.user(), binding.aud(), iat, iat + ttl,
                Base64Url.encode(jtiBytes), digest, value);
        byte[] payload = claims.encode();
        String token;
        if (key instanceof A256GcmKey aes) {
            String header = Jwe.headerSegment(aes);
            if (Jwe.size(header, payload.length) > maxTokenBytes) {
                throw tooLarge(Jwe.size(header, payload.length));
            }
            token = Jwe.encrypt(aes, header, payload);
        } else {
            token = Jws.sign(key, Jws.headerSegment(key), payload);
        }
        if (token.length() > maxTokenBytes) {
            throw tooLarge(token.length());
        }
        StateMetrics.record(metrics, "seal", "method", binding.kind().method());
        return token;
    }

    private IllegalArgumentException tooLarge(long size) {
        return new IllegalArgumentException("the sealed state would be " + size + " bytes, over the cap of "
                + maxTokenBytes + "; keep less in requestState");
    }

    /**
     * Open a token without redeeming it.
     *
     * @param token the {@code requestState} of the retry
     * @param binding the retry being served
     * @return the state
     * @throws InvalidRequestStateException with the reason code of the first step that fails
     */
    public JsonNode open(String token, Binding binding) throws InvalidRequestStateException {
        return open(token, binding, false, null);
    }

    /**
     * Open a token (profile, section 5, steps 1 to 19, and step 20 when {@code consume}).
     *
     * @param token the {@code requestState} of the retry (any value that is not a string is {@code malformed})
     * @param binding the retry being served: user, target and arguments
     * @param consume redeem the token in the replay store after every other check, so it opens at most once
     * @param requireArguments overrides the sealer's setting for this call; null keeps it
     * @return the state
     * @throws InvalidRequestStateException with the reason code of the first step that fails
     * @throws IllegalStateException {@code consume} on a sealer without a replay store
     */
    public JsonNode open(String token, Binding binding, boolean consume, Boolean requireArguments)
            throws InvalidRequestStateException {
        Objects.requireNonNull(binding, "binding");
        if (consume && replayStore == null) {
            throw new IllegalStateException("open with consume needs a StateSealer built with a replayStore");
        }
        String method = binding.kind().method();
        JsonNode state;
        try {
            state = verifyAndRedeem(token, binding, consume, requireArguments);
        } catch (InvalidRequestStateException refused) {
            // The method and the reason code only: never a value from the token or the request.
            StateMetrics.record(metrics, "open", "method", method, "outcome", "refused");
            StateMetrics.record(metrics, "refusal", "method", method, "reason", refused.reason().code());
            if (refused.reason() == Reason.STORE_UNAVAILABLE) {
                StateMetrics.record(metrics, "store_outage", "method", method);
            }
            throw refused;
        }
        StateMetrics.record(metrics, "open", "method", method, "outcome", "accepted");
        if (consume) {
            StateMetrics.record(metrics, "redemption", "method", method);
        }
        return state;
    }

    private JsonNode verifyAndRedeem(String token, Binding binding, boolean consume, Boolean requireArguments)
            throws InvalidRequestStateException {
        Claims claims = verify(token, binding, requireArguments == null ? this.requireArguments : requireArguments);
        if (consume) {
            // Profile 5, step 20: single use, last, so that a refused token never costs a store write. The
            // retention runs to exp plus twice the leeway.
            boolean first;
            try {
                first = replayStore.redeem(ReplayStore.key(claims.iss(), claims.jti()), claims.exp() + 2 * leeway);
            } catch (ReplayStoreException e) {
                throw new InvalidRequestStateException(Reason.STORE_UNAVAILABLE, e.getMessage());
            } catch (RuntimeException e) {
                throw new InvalidRequestStateException(Reason.STORE_UNAVAILABLE,
                        "the replay store raised " + e.getClass().getSimpleName());
            }
            if (!first) {
                throw new InvalidRequestStateException(Reason.REPLAYED, "this token has already been redeemed");
            }
        }
        return claims.state();
    }

    /** Steps 1 to 19; the validated claims. */
    private Claims verify(String token, Binding binding, boolean required) throws InvalidRequestStateException {
        if (token == null) {
            throw new InvalidRequestStateException(Reason.MALFORMED, "the token is not a string");
        }
        // Profile 5, step 1 (and Profile 5.1, step 1): the size, before any decoding.
        Segments.checkSize(token, maxTokenBytes);
        String[] segments = Segments.split(token);
        // Profile 5, step 2: five segments are the encrypted form (section 5.1, steps 2 to 10), else JWS.
        byte[] payload = segments.length == 5 ? Jwe.decrypt(segments, ring) : Jws.verify(segments, ring);
        // Profile 5, steps 11 and 12 (shared by both forms).
        Claims claims = Claims.read(payload);
        // Profile 5, step 13: lifetime.
        if (claims.exp() - claims.iat() > maxLifetime) {
            throw new InvalidRequestStateException(Reason.LIFETIME_TOO_LONG, "exp - iat exceeds the maximum lifetime");
        }
        long now = clock.instant().getEpochSecond();
        // Profile 5, step 14: not from the future.
        if (claims.iat() > now + leeway) {
            throw new InvalidRequestStateException(Reason.ISSUED_IN_FUTURE, "claim 'iat' is ahead of the clock");
        }
        // Profile 5, step 15: not expired, from the second exp itself.
        if (now >= claims.exp() + leeway) {
            throw new InvalidRequestStateException(Reason.EXPIRED, "the token has expired");
        }
        // Profile 5, step 16: issuer.
        if (!claims.iss().equals(issuer)) {
            throw new InvalidRequestStateException(Reason.WRONG_ISSUER, "claim 'iss' is not this server");
        }
        // Profile 5, step 17: user.
        if (!claims.sub().equals(binding.user())) {
            throw new InvalidRequestStateException(Reason.WRONG_USER, "claim 'sub' is not the requesting user");
        }
        // Profile 5, step 18: target.
        if (!claims.aud().equals(binding.aud())) {
            throw new InvalidRequestStateException(Reason.WRONG_TOOL, "claim 'aud' is not the requested target");
        }
        // Profile 5, step 19: request binding; unbindable arguments match no digest. A resource read has none.
        String digest = claims.argsSha256();
        if (digest == null && required && binding.kind() != TargetKind.RESOURCE) {
            throw new InvalidRequestStateException(Reason.WRONG_REQUEST,
                    "the verifier requires claim 'args_sha256'; it is absent");
        }
        if (digest != null) {
            if (binding.arguments() == null) {
                throw new InvalidRequestStateException(Reason.WRONG_REQUEST,
                        "claim 'args_sha256' is present, arguments are not");
            }
            String actual = binding.digest();
            if (actual == null) {
                throw new InvalidRequestStateException(Reason.WRONG_REQUEST,
                        "the arguments are unbindable: they match no digest");
            }
            if (!actual.equals(digest)) {
                throw new InvalidRequestStateException(Reason.WRONG_REQUEST,
                        "claim 'args_sha256' does not match the arguments");
            }
        }
        return claims;
    }

    @Override
    public String toString() {
        return "StateSealer(issuer=" + issuer + ", ttl=" + ttl + ", ring=" + ring + ")";
    }
}
