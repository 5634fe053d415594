package dev.mrtrstate.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mrtrstate.InvalidRequestStateException;
import dev.mrtrstate.Keyring;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.binding.ArgumentDigest;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.binding.TargetKind;
import dev.mrtrstate.keys.Key;
import dev.mrtrstate.keys.KeyringException;
import dev.mrtrstate.token.StrictJson;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The conformance adapter: the JSON-lines protocol of {@code mrtr-state conformance} (docs/conformance.md) over
 * this library. One request per line on standard input, one answer per line on standard output, in order:
 * {@code verify} (a {@link StateSealer} opening the token), {@code digest} ({@link ArgumentDigest}) and
 * {@code load_key} ({@link Key#fromJwk(JsonNode)} for {@code jwk}, {@link Keyring#fromJwks(JsonNode)} for a ring
 * under {@code jwks}).
 */
public final class ConformanceMain {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    /** Rings by the text of their JWKS: the runner sends few distinct rings, many times. */
    private static final Map<String, Keyring> RINGS = new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Keyring> eldest) {
            return size() > 64;
        }
    };

    private ConformanceMain() {}

    /**
     * Speak the protocol on standard input and output until standard input ends.
     *
     * @param args none
     * @throws IOException when standard input cannot be read
     */
    public static void main(String[] args) throws IOException {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            out.println(StrictJson.writeAscii(answer(line)));
            out.flush();
        }
    }

    /**
     * The answer to one request line.
     *
     * @param line the request, one JSON object
     * @return the answer, carrying the request's id
     */
    public static ObjectNode answer(String line) {
        ObjectNode reply = NODES.objectNode();
        JsonNode request = StrictJson.parseExact(line);
        if (request == null || !request.isObject()) {
            reply.putNull("id");
            reply.put("error", "a request must be one JSON object");
            return reply;
        }
        reply.set("id", request.has("id") ? request.get("id") : NODES.nullNode());
        try {
            switch (request.path("op").asText()) {
                case "verify" -> verify(request, reply);
                case "digest" -> {
                    // Profile 3.4 (D2): absent arguments are {}; present ones that are not an object are unbindable.
                    JsonNode arguments = request.has("arguments") ? request.get("arguments") : NODES.objectNode();
                    String digest = ArgumentDigest.digest(arguments);
                    if (digest == null) {
                        reply.put("unbindable", true);
                    } else {
                        reply.put("digest", digest);
                    }
                }
                case "load_key" -> {
                    try {
                        if (request.has("jwks")) { // a ring: the rules between its keys apply too (7.6, D4)
                            Keyring.fromJwks(request.get("jwks"));
                        } else {
                            Key.fromJwk(request.get("jwk"));
                        }
                        reply.put("loaded", true);
                    } catch (KeyringException refused) {
                        reply.put("loaded", false);
                    }
                }
                default -> reply.put("unsupported", true);
            }
        } catch (IllegalArgumentException | java.time.DateTimeException e) {
            reply.put("error", e.getMessage());
        } catch (RuntimeException e) { // a request the adapter cannot run never stops the loop
            reply.put("error", "the request cannot be run (" + e.getClass().getSimpleName() + ")");
        }
        return reply;
    }

    private static void verify(JsonNode request, ObjectNode reply) {
        JsonNode jwks = request.get("keys");
        String key = jwks == null ? "" : StrictJson.write(jwks);
        Keyring ring;
        synchronized (RINGS) {
            ring = RINGS.get(key);
            if (ring == null) {
                try {
                    ring = Keyring.fromJwks(jwks);
                } catch (KeyringException e) { // no verifier holds such a ring: an error, not a verdict
                    throw new IllegalArgumentException("the verifier's ring does not load: " + e.getMessage(), e);
                }
                RINGS.put(key, ring);
            }
        }
        JsonNode now = request.get("now");
        if (now == null || !now.isIntegralNumber() || !now.canConvertToLong()) {
            throw new IllegalArgumentException("'now' must be an integer of seconds");
        }
        StateSealer.Builder builder = StateSealer.builder(ring, text(request, "issuer"))
                .clock(Clock.fixed(Instant.ofEpochSecond(now.longValue()), ZoneOffset.UTC));
        if (request.has("max_lifetime")) {
            builder.maxLifetime(request.get("max_lifetime").longValue());
        }
        if (request.has("leeway")) {
            builder.leeway(request.get("leeway").longValue());
        }
        if (request.has("max_token_bytes")) {
            builder.maxTokenBytes(request.get("max_token_bytes").longValue());
        }
        if (request.path("require_arguments").asBoolean(false)) {
            builder.requireArguments(true);
        }
        StateSealer sealer = builder.build();
        JsonNode arguments = request.has("arguments") ? request.get("arguments") : NODES.objectNode();
        Binding binding = null;
        for (TargetKind kind : TargetKind.values()) {
            String field = kind.name().toLowerCase(java.util.Locale.ROOT);
            if (request.has(field)) {
                if (binding != null) {
                    throw new IllegalArgumentException("give exactly one of 'tool', 'prompt', 'resource'");
                }
                binding = Binding.of(text(request, "user"), kind, text(request, field), arguments);
            }
        }
        if (binding == null) {
            throw new IllegalArgumentException("give exactly one of 'tool', 'prompt', 'resource'");
        }
        JsonNode token = request.get("token");
        try {
            JsonNode state = sealer.open(token != null && token.isTextual() ? token.textValue() : null, binding);
            reply.put("valid", true);
            reply.set("state", state);
        } catch (InvalidRequestStateException refusal) {
            reply.put("valid", false);
            reply.put("reason", refusal.reason().code());
        }
    }

    private static String text(JsonNode request, String name) {
        JsonNode value = request.get(name);
        if (value == null || !value.isTextual() || value.textValue().isEmpty()) {
            throw new IllegalArgumentException("'" + name + "' must be a non-empty string");
        }
        return value.textValue();
    }
}
