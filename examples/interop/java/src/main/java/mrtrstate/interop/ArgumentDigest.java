package mrtrstate.interop;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.erdtman.jcs.JsonCanonicalizer;

/**
 * The request binding {@code args_sha256} (profile, section 3.4): base64url(SHA-256(JCS(arguments))).
 *
 * <p>JCS (RFC 8785) is {@code org.erdtman.jcs.JsonCanonicalizer}, the Java implementation by the RFC's authors.
 * It reads JSON text, so the arguments are written out first; they were read exactly (big integers, decimal
 * fractions), and the canonicalizer reads every number as the nearest double, as RFC 8785 says; so
 * arguments holding an integer beyond 2^53 - 1 are refused before (they are unbindable), and {@code 1e400}
 * cannot be canonicalized at all. It sorts members with
 * {@code String.compareTo}, which is the order of UTF-16 code units that RFC 8785 asks for.
 */
final class ArgumentDigest {
    private static final double MAX_SAFE_INTEGER = 9007199254740991.0;

    private ArgumentDigest() {}

    /** The RFC 8785 canonical text of a JSON object or array; IOException when it has none (1e400). */
    static String canonicalize(JsonNode value) throws IOException {
        return new JsonCanonicalizer(StrictJson.writePlain(value)).getEncodedString();
    }

    /**
     * The RFC 8785 text of an {@code arguments} object; IOException when the arguments are unbindable (profile,
     * 3.4): a number whose value is an integer beyond +/-(2^53 - 1), however it is written. Every double of
     * magnitude 2^53 or more is an integer, so the rule is on the nearest double; an underflow (1e-400) is 0.
     */
    static String canonicalArguments(JsonNode arguments) throws IOException {
        // Profile 3.4 and 8.2: arguments present but not an object (null too) are unbindable.
        if (!arguments.isObject()) {
            throw new IOException("unbindable: the arguments are not a JSON object");
        }
        if (!bindable(arguments)) {
            throw new IOException("unbindable: a number whose value is an integer beyond +/-(2^53 - 1)");
        }
        return canonicalize(arguments);
    }

    private static boolean bindable(JsonNode value) {
        if (value.isNumber()) {
            return Math.abs(value.doubleValue()) <= MAX_SAFE_INTEGER;
        }
        for (JsonNode item : value) { // the members of an object or the items of an array
            if (!bindable(item)) {
                return false;
            }
        }
        return true;
    }

    /** The argument digest of an {@code arguments} object; IOException when they are unbindable. */
    static String digest(JsonNode arguments) throws IOException {
        byte[] canonical = canonicalArguments(arguments).getBytes(StandardCharsets.UTF_8);
        try {
            return Base64Url.encode(MessageDigest.getInstance("SHA-256").digest(canonical));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
