package mrtrstate.interop;

import com.fasterxml.jackson.databind.JsonNode;
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
import java.util.ArrayList;
import java.util.List;

/**
 * The interop program: {@code vectors <dir>} (tokens, arguments and invalid keys), {@code verify} and {@code mint}
 * (see tests/interop/harness.py), and {@code conformance} (the JSON-lines protocol of {@code mrtr-state
 * conformance}, see docs/conformance.md).
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
            JsonNode input = StrictJson.parseJob(readStdin(), "stdin");
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
            out.println(StrictJson.write(output));
            return 0;
        }
        throw new BadJob("usage: interop vectors <dir> | interop verify | interop mint | interop conformance");
    }

    // --- verify -----------------------------------------------------------------------------------------

    private static ObjectNode verifyJob(JsonNode job) throws BadJob {
        requireObject(job, "a verify job");
        StateVerifier.Options options = new StateVerifier.Options(
                KeyRing.fromJwks(job.get("keys")),
                text(job, "issuer"),
                integer(job, "max_lifetime", 600, 1),
                integer(job, "leeway", 0, 0),
                integer(job, "max_token_bytes", 8192, 1),
                flag(job, "require_arguments"));
        if (options.leeway() > 300) {
            throw new BadJob("'leeway' is at most 300 seconds");
        }
        StateVerifier.Request request = new StateVerifier.Request(
                text(job, "user"), audience(job), arguments(job, true), now(job));
        return verdict(new StateVerifier(options), job.get("token"), request);
    }

    private static ObjectNode verdict(StateVerifier verifier, JsonNode token, StateVerifier.Request request) {
        ObjectNode result = NODES.objectNode();
        try {
            JsonNode state = verifier.verify(token, request);
            result.put("valid", true);
            result.set("state", state);
        } catch (Refusal refusal) {
            result.put("valid", false);
            result.put("reason", refusal.reason());
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
        StateMinter.Claims claims = new StateMinter.Claims(
                text(job, "issuer"),
                text(job, "user"),
                audience(job),
                arguments(job, false),
                integer(job, "now", null, 0),
                integer(job, "ttl", null, 1),
                job.get("state"),
                jti == null ? null : jti.textValue());
        ObjectNode result = NODES.objectNode();
        result.put("token", StateMinter.mint(KeyRing.load(job.get("key")), claims));
        return result;
    }

    // --- conformance ------------------------------------------------------------------------------------

    /** One request per line on stdin, one answer per line on stdout, in order, flushed after each. */
    private static int conformance(PrintStream out) throws BadJob {
        try {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                out.println(StrictJson.write(answer(line)));
                out.flush();
            }
        } catch (IOException e) {
            throw new BadJob("cannot read stdin: " + e.getMessage());
        }
        return 0;
    }

    /** The answer to one request: the verify job, the argument digest and the key loader, as for the jobs. */
    private static ObjectNode answer(String line) {
        ObjectNode reply = NODES.objectNode();
        JsonNode request;
        try {
            request = StrictJson.parseJob(line, "a request");
            requireObject(request, "a request");
        } catch (BadJob e) {
            reply.putNull("id");
            reply.put("error", e.getMessage());
            return reply;
        }
        reply.set("id", request.has("id") ? request.get("id") : NODES.nullNode());
        try {
            switch (request.path("op").asText()) {
                case "verify" -> reply.setAll(verifyJob(request));
                case "digest" -> {
                    JsonNode arguments = arguments(request, true); // absent: {} (profile 8.2)
                    try {
                        reply.put("digest", ArgumentDigest.digest(arguments));
                    } catch (IOException unbindable) {
                        reply.put("unbindable", true);
                    }
                }
                case "load_key" -> {
                    try {
                        loadKeyOrRing(request);
                        reply.put("loaded", true);
                    } catch (BadJob refused) {
                        reply.put("loaded", false);
                    }
                }
                default -> reply.put("unsupported", true);
            }
        } catch (BadJob e) {
            reply.put("error", e.getMessage());
        }
        return reply;
    }

    // --- vectors ----------------------------------------------------------------------------------------

    private static int vectors(Path dir, PrintStream out) throws BadJob {
        JsonNode keys = StrictJson.parseJob(read(dir.resolve("keys.json")), "keys.json");
        JsonNode tokens = StrictJson.parseJob(read(dir.resolve("tokens.json")), "tokens.json");
        JsonNode encrypted = StrictJson.parseJob(read(dir.resolve("encrypted.json")), "encrypted.json");
        JsonNode arguments = StrictJson.parseJob(read(dir.resolve("arguments.json")), "arguments.json");
        JsonNode invalidKeys = StrictJson.parseJob(read(dir.resolve("invalid-keys.json")), "invalid-keys.json");
        int passed = 0;
        int failed = 0;

        // tokens.json against verifier_jwks; encrypted.json (the encrypted form) against encrypted_verifier_jwks.
        for (JsonNode[] file : new JsonNode[][] {
                {tokens, keys.get("verifier_jwks")}, {encrypted, keys.get("encrypted_verifier_jwks")}}) {
            KeyRing ring = KeyRing.fromJwks(file[1]);
            JsonNode defaults = file[0].path("defaults");
            for (JsonNode vector : file[0].path("vectors")) {
                String id = vector.path("id").asText();
                JsonNode settings = merged(defaults, vector);
                StateVerifier verifier = new StateVerifier(new StateVerifier.Options(ring,
                        text(settings, "issuer"),
                        integer(settings, "max_lifetime", null, 1),
                        integer(settings, "leeway", null, 0),
                        integer(settings, "max_token_bytes", null, 1),
                        flag(settings, "require_arguments")));
                StateVerifier.Request request = new StateVerifier.Request(text(vector, "user"), audience(vector),
                        arguments(vector, true), now(vector));
                ObjectNode actual = verdict(verifier, vector.get("token"), request);
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
            String got;
            try {
                got = ArgumentDigest.canonicalArguments(vector.get("arguments")) + " "
                        + ArgumentDigest.digest(vector.get("arguments"));
            } catch (IOException e) {
                got = "unbindable";
            }
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

        for (JsonNode vector : invalidKeys.path("vectors")) { // every one must be refused when it is loaded
            String id = "invalid-keys/" + vector.path("id").asText();
            String got = "loaded";
            try {
                loadKeyOrRing(vector);
            } catch (BadJob refused) {
                got = "refused: " + refused.getMessage();
            }
            boolean ok = !got.equals("loaded");
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
        try { // wrapped in an array: the canonicalizer takes objects and arrays only, a state may be a scalar
            return ArgumentDigest.canonicalize(NODES.arrayNode().add(actual.get("state")))
                    .equals(ArgumentDigest.canonicalize(NODES.arrayNode().add(expected.get("state"))));
        } catch (IOException e) {
            return false;
        }
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

    /**
     * The verifier's clock {@code now}, in seconds: any integer, negative or beyond 2^53 - 1 too (the reference
     * takes any), within what Nimbus's clock holds in milliseconds.
     */
    private static long now(JsonNode job) throws BadJob {
        JsonNode value = job.get("now");
        if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()
                || Math.abs(value.longValue()) > Long.MAX_VALUE / 1000) {
            throw new BadJob("'now' must be an integer of seconds (within +/-(2^63 - 1) milliseconds)");
        }
        return value.longValue();
    }

    /** A boolean field, false when absent. */
    private static boolean flag(JsonNode job, String name) throws BadJob {
        JsonNode value = job.get(name);
        if (value != null && !value.isBoolean()) {
            throw new BadJob("'" + name + "' must be true or false");
        }
        return value != null && value.booleanValue();
    }

    /** The target as {@code aud}: exactly one of tool, prompt, resource (profile, section 3.5). */
    private static String audience(JsonNode job) throws BadJob {
        List<String> methods = new ArrayList<>();
        String aud = null;
        for (String[] kind : new String[][] {{"tool", "tools/call"}, {"prompt", "prompts/get"},
                {"resource", "resources/read"}}) {
            if (job.has(kind[0])) {
                methods.add(kind[0]);
                aud = kind[1] + ":" + text(job, kind[0]);
            }
        }
        if (methods.size() != 1) {
            throw new BadJob("give exactly one of 'tool', 'prompt', 'resource'");
        }
        return aud;
    }

    /** The request's arguments object; when absent, {} for a verifier (profile, 3.4) and none for a minter. */
    /** A {@code jwk}, or a ring given as {@code jwks}, whose keys must also keep their secrets apart (7.6). */
    private static void loadKeyOrRing(JsonNode request) throws BadJob {
        if (request.has("jwks")) {
            KeyRing.fromJwks(request.get("jwks"));
        } else {
            KeyRing.load(request.get("jwk"));
        }
    }

    private static JsonNode arguments(JsonNode job, boolean absentIsEmpty) throws BadJob {
        JsonNode value = job.get("arguments");
        if (value == null) {
            return absentIsEmpty ? NODES.objectNode() : null;
        }
        // Any JSON value: arguments present but not an object (null too) are unbindable (profile 3.4 and
        // 8.2), which the digest decides; only absent arguments are {}.
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
