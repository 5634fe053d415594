package mrtrstate.interop;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.InvalidRequestStateException;
import dev.mrtrstate.Keyring;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.binding.ArgumentDigest;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.binding.TargetKind;
import dev.mrtrstate.conformance.ConformanceMain;
import dev.mrtrstate.keys.Key;
import dev.mrtrstate.keys.KeyringException;
import dev.mrtrstate.token.Base64Url;
import dev.mrtrstate.token.StrictJson;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

/**
 * The interop program, a user of the mrtr-state Java library ({@code java/}): {@code vectors <dir>} (tokens,
 * arguments and invalid keys), {@code verify} and {@code mint} (see tests/interop/harness.py), and
 * {@code conformance} (the JSON-lines protocol of {@code mrtr-state conformance}, see docs/conformance.md, answered
 * by the library's own adapter).
 *
 * <p>{@code verify} and {@code mint} read {@code {"jobs": [...]}} on stdin and write {@code {"results": [...]}}
 * on stdout. A job that cannot be run (unreadable JSON, a missing field, an unusable key) stops the program
 * with a message on stderr and exit status 2; a refused token is a result, not an error.
 */
public final class Main {
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private Main() {}

    public static void main(String[] args) {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        int status;
        try {
            status = run(args, out);
        } catch (BadJob e) {
            System.err.println("interop: " + e.getMessage());
            status = 2;
        }
        out.flush();
        System.exit(status);
    }

    private static int run(String[] args, PrintStream out) throws BadJob {
        if (args.length == 2 && args[0].equals("vectors")) {
            return vectors(Path.of(args[1]), out);
        }
        if (args.length == 1 && args[0].equals("conformance")) {
            return conformance(out);
        }
        if (args.length == 1 && (args[0].equals("verify") || args[0].equals("mint"))) {
            JsonNode input = parseJob(readStdin(), "stdin");
            if (!input.path("jobs").isArray()) {
                throw new BadJob("stdin must be {\"jobs\": [...]}");
            }
            ArrayNode results = NODES.arrayNode();
            int index = 0;
            for (JsonNode job : input.get("jobs")) {
                try {
                    results.add(args[0].equals("verify") ? verifyJob(job) : mintJob(job));
                } catch (BadJob e) {
                    throw new BadJob("job " + index + ": " + e.getMessage());
                }
                index++;
            }
            ObjectNode output = NODES.objectNode();
            output.set("results", results);
            out.println(StrictJson.writeAscii(output));
            return 0;
        }
        throw new BadJob("usage: interop vectors <dir> | interop verify | interop mint | interop conformance");
    }

    // --- verify -----------------------------------------------------------------------------------------

    private static ObjectNode verifyJob(JsonNode job) throws BadJob {
        requireObject(job, "a verify job");
        return verdict(sealer(job, ring(job.get("keys")), job.get("now")), job.get("token"), binding(job, true));
    }

    /** A sealer for a job's settings: its issuer, limits, clock and whether the binding is required. */
    private static StateSealer sealer(JsonNode settings, Keyring ring, JsonNode now) throws BadJob {
        try {
            return StateSealer.builder(ring, text(settings, "issuer"))
                    .maxLifetime(integer(settings, "max_lifetime", 600, 1))
                    .leeway(integer(settings, "leeway", 0, 0))
                    .maxTokenBytes(integer(settings, "max_token_bytes", 8192, 1))
                    .requireArguments(flag(settings, "require_arguments"))
                    .clock(clock(now))
                    .build();
        } catch (IllegalArgumentException e) {
            throw new BadJob(e.getMessage());
        }
    }

    private static ObjectNode verdict(StateSealer sealer, JsonNode token, Binding binding) {
        ObjectNode result = NODES.objectNode();
        try {
            JsonNode state = sealer.open(token != null && token.isTextual() ? token.textValue() : null, binding);
            result.put("valid", true);
            result.set("state", state);
        } catch (InvalidRequestStateException refusal) {
            result.put("valid", false);
            result.put("reason", refusal.reason().code());
        }
        return result;
    }

    // --- mint -------------------------------------------------------------------------------------------

    private static ObjectNode mintJob(JsonNode job) throws BadJob {
        requireObject(job, "a mint job");
        if (!job.has("state")) {
            throw new BadJob("'state' is required (it may be null)");
        }
        JsonNode jti = job.get("jti");
        if (jti != null && !jti.isTextual()) {
            throw new BadJob("'jti' must be a string");
        }
        byte[] fixedJti = jti == null ? null : Base64Url.decodeCanonical(jti.textValue());
        if (jti != null && (fixedJti == null || fixedJti.length < 16 || jti.textValue().length() > 64)) {
            throw new BadJob("'jti' must be 22 to 64 characters of canonical base64url");
        }
        long ttl = integer(job, "ttl", null, 1);
        Keyring ring;
        try {
            ring = Keyring.of(Key.fromJwk(job.get("key")));
        } catch (KeyringException e) {
            throw new BadJob(e.getMessage());
        }
        StateSealer.Builder builder = StateSealer.builder(ring, text(job, "issuer"))
                .maxLifetime(Math.max(ttl, 600)).ttl(ttl).clock(clock(job.get("now")));
        if (fixedJti != null) {
            builder.entropy(size -> fixedJti.clone());
        }
        ObjectNode result = NODES.objectNode();
        try {
            result.put("token", builder.build().seal(job.get("state"), binding(job, false)));
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new BadJob(e.getMessage());
        }
        return result;
    }

    // --- conformance ------------------------------------------------------------------------------------

    /** One request per line on stdin, one answer per line on stdout, in order, flushed after each. */
    private static int conformance(PrintStream out) throws BadJob {
        try {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                out.println(StrictJson.writeAscii(answer(line)));
                out.flush();
            }
        } catch (IOException e) {
            throw new BadJob("cannot read stdin: " + e.getMessage());
        }
        return 0;
    }

    /** The answer to one request: the library's own conformance adapter. */
    private static ObjectNode answer(String line) {
        return ConformanceMain.answer(line);
    }

    // --- vectors ----------------------------------------------------------------------------------------

    private static int vectors(Path dir, PrintStream out) throws BadJob {
        JsonNode keys = parseJob(read(dir.resolve("keys.json")), "keys.json");
        JsonNode tokens = parseJob(read(dir.resolve("tokens.json")), "tokens.json");
        JsonNode encrypted = parseJob(read(dir.resolve("encrypted.json")), "encrypted.json");
        JsonNode arguments = parseJob(read(dir.resolve("arguments.json")), "arguments.json");
        JsonNode invalidKeys = parseJob(read(dir.resolve("invalid-keys.json")), "invalid-keys.json");
        int passed = 0;
        int failed = 0;

        // tokens.json against verifier_jwks; encrypted.json (the encrypted form) against encrypted_verifier_jwks.
        for (JsonNode[] file : new JsonNode[][] {
                {tokens, keys.get("verifier_jwks")}, {encrypted, keys.get("encrypted_verifier_jwks")}}) {
            Keyring ring = ring(file[1]);
            JsonNode defaults = file[0].path("defaults");
            for (JsonNode vector : file[0].path("vectors")) {
                String id = vector.path("id").asText();
                JsonNode settings = merged(defaults, vector);
                ObjectNode actual = verdict(sealer(settings, ring, vector.get("now")), vector.get("token"),
                        binding(vector, true));
                JsonNode expected = vector.get("expected");
                boolean ok = sameVerdict(actual, expected);
                out.printf("%s %s: got %s, expected %s%n",
                        ok ? "pass" : "FAIL", id, describe(actual), describe(expected));
                if (ok) {
                    passed++;
                } else {
                    failed++;
                }
            }
        }

        for (JsonNode vector : arguments.path("vectors")) {
            String id = "arguments/" + vector.path("id").asText();
            String canonical = ArgumentDigest.canonicalArguments(vector.get("arguments"));
            String got = canonical == null ? "unbindable" : canonical + " " + ArgumentDigest.digest(vector.get("arguments"));
            String expected = vector.path("unbindable").asBoolean()
                    ? "unbindable"
                    : vector.path("canonical").asText() + " " + vector.path("digest").asText();
            boolean ok = got.equals(expected);
            out.printf("%s %s: got %s, expected %s%n", ok ? "pass" : "FAIL", id, got, expected);
            if (ok) {
                passed++;
            } else {
                failed++;
            }
        }

        // Every one must be refused when it is loaded: a key under "jwk", a whole ring under "jwks" (the rules
        // between its keys, D4), whose keys must each load alone so that the ring rule is what refuses it.
        for (JsonNode vector : invalidKeys.path("vectors")) {
            String id = "invalid-keys/" + vector.path("id").asText();
            String got = "loaded";
            boolean ok;
            if (vector.has("jwks")) {
                String alone = null;
                for (JsonNode member : vector.get("jwks").path("keys")) {
                    try {
                        Key.fromJwk(member);
                    } catch (KeyringException refused) {
                        alone = refused.getMessage();
                    }
                }
                try {
                    Keyring.fromJwks(vector.get("jwks"));
                } catch (KeyringException refused) {
                    got = "refused: " + refused.getMessage();
                }
                if (alone != null) {
                    got = "a key of the ring refused alone (" + alone + "), so the ring rule is untested";
                }
                ok = alone == null && !got.equals("loaded");
            } else {
                try {
                    Key.fromJwk(vector.get("jwk"));
                } catch (KeyringException refused) {
                    got = "refused: " + refused.getMessage();
                }
                ok = !got.equals("loaded");
            }
            out.printf("%s %s: got %s, expected refused%n", ok ? "pass" : "FAIL", id, got);
            if (ok) {
                passed++;
            } else {
                failed++;
            }
        }
        out.printf("%d passed, %d failed%n", passed, failed);
        return failed == 0 ? 0 : 1;
    }

    /** Same verdict, same reason, and for a valid token the same state (compared as RFC 8785 text). */
    private static boolean sameVerdict(JsonNode actual, JsonNode expected) {
        if (expected == null || actual.path("valid").asBoolean() != expected.path("valid").asBoolean()) {
            return false;
        }
        if (!actual.path("valid").asBoolean()) {
            return actual.path("reason").asText().equals(expected.path("reason").asText());
        }
        String got = ArgumentDigest.canonicalize(actual.get("state"));
        return got != null && got.equals(ArgumentDigest.canonicalize(expected.get("state")));
    }

    private static String describe(JsonNode verdict) {
        return verdict.path("valid").asBoolean() ? "valid" : verdict.path("reason").asText("?");
    }

    private static JsonNode merged(JsonNode defaults, JsonNode vector) {
        ObjectNode settings = defaults.isObject() ? ((ObjectNode) defaults).deepCopy() : NODES.objectNode();
        for (String name : List.of("issuer", "max_lifetime", "leeway", "max_token_bytes", "require_arguments")) {
            if (vector.has(name)) {
                settings.set(name, vector.get(name));
            }
        }
        return settings;
    }

    // --- job fields -------------------------------------------------------------------------------------

    private static void requireObject(JsonNode job, String what) throws BadJob {
        if (job == null || !job.isObject()) {
            throw new BadJob(what + " must be a JSON object");
        }
    }

    private static String text(JsonNode job, String name) throws BadJob {
        JsonNode value = job.get(name);
        if (value == null || !value.isTextual() || value.textValue().isEmpty()) {
            throw new BadJob("'" + name + "' must be a non-empty string");
        }
        return value.textValue();
    }

    /** An integer field of at least {@code minimum}; {@code fallback} when absent (null: required). */
    private static long integer(JsonNode job, String name, Integer fallback, long minimum) throws BadJob {
        JsonNode value = job.get(name);
        if (value == null && fallback != null) {
            return fallback;
        }
        if (value == null || !value.isIntegralNumber() || !value.canConvertToLong() || value.longValue() < minimum
                || value.longValue() > 9007199254740991L) {
            throw new BadJob("'" + name + "' must be an integer from " + minimum + " to 2^53 - 1");
        }
        return value.longValue();
    }

    /** The clock of a job: {@code now}, any integer of seconds an Instant holds. */
    private static Clock clock(JsonNode now) throws BadJob {
        if (now == null || !now.isIntegralNumber() || !now.canConvertToLong()) {
            throw new BadJob("'now' must be an integer of seconds");
        }
        try {
            return Clock.fixed(Instant.ofEpochSecond(now.longValue()), ZoneOffset.UTC);
        } catch (java.time.DateTimeException e) {
            throw new BadJob("'now' is beyond the range of an Instant");
        }
    }

    /** A JWKS of a job as a ring. */
    private static Keyring ring(JsonNode jwks) throws BadJob {
        try {
            return Keyring.fromJwks(jwks);
        } catch (KeyringException e) {
            throw new BadJob(e.getMessage());
        }
    }

    /** A boolean field, false when absent. */
    private static boolean flag(JsonNode job, String name) throws BadJob {
        JsonNode value = job.get(name);
        if (value != null && !value.isBoolean()) {
            throw new BadJob("'" + name + "' must be true or false");
        }
        return value != null && value.booleanValue();
    }

    /**
     * The request of a job: the user, exactly one of tool, prompt, resource, and the arguments; absent arguments
     * are {} for a verifier (profile, 3.4) and none (no binding) for a minter.
     */
    private static Binding binding(JsonNode job, boolean absentIsEmpty) throws BadJob {
        Binding binding = null;
        JsonNode arguments = job.get("arguments");
        if (arguments == null && absentIsEmpty) {
            arguments = NODES.objectNode();
        }
        for (TargetKind kind : TargetKind.values()) {
            String field = kind.name().toLowerCase(java.util.Locale.ROOT);
            if (job.has(field)) {
                if (binding != null) {
                    throw new BadJob("give exactly one of 'tool', 'prompt', 'resource'");
                }
                binding = Binding.of(text(job, "user"), kind, text(job, field), arguments);
            }
        }
        if (binding == null) {
            throw new BadJob("give exactly one of 'tool', 'prompt', 'resource'");
        }
        return binding;
    }

    /** JSON text of a job: strict syntax, no duplicate names, numbers exact. */
    private static JsonNode parseJob(String text, String what) throws BadJob {
        JsonNode value = StrictJson.parseExact(text);
        if (value == null) {
            throw new BadJob(what + " is not valid JSON");
        }
        return value;
    }

    // --- input ------------------------------------------------------------------------------------------

    private static String readStdin() throws BadJob {
        try (InputStream in = System.in) {
            return utf8(in.readAllBytes(), "stdin");
        } catch (IOException e) {
            throw new BadJob("cannot read stdin: " + e.getMessage());
        }
    }

    private static String read(Path file) throws BadJob {
        try {
            return utf8(Files.readAllBytes(file), file.toString());
        } catch (IOException e) {
            throw new BadJob("cannot read " + file + ": " + e.getMessage());
        }
    }

    private static String utf8(byte[] bytes, String what) throws BadJob {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new BadJob(what + " is not valid UTF-8");
        }
    }
}
