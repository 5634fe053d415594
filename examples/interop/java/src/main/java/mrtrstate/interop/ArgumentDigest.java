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
 * fractions), and the canonicalizer reads every number as the nearest double, as RFC 8785 says: 2^53 + 1
 * becomes 9007199254740992, and {@code 1e400} cannot be canonicalized at all. It sorts members with
 * {@code String.compareTo}, which is the order of UTF-16 code units that RFC 8785 asks for.
 */
final class ArgumentDigest {
    private ArgumentDigest() {}

    /** The RFC 8785 canonical text of a JSON object or array; IOException when it has none (1e400). */
    static String canonicalize(JsonNode value) throws IOException {
        return new JsonCanonicalizer(StrictJson.writePlain(value)).getEncodedString();
    }

    /** The argument digest of an {@code arguments} object; IOException when it cannot be canonicalized. */
    static String digest(JsonNode arguments) throws IOException {
        byte[] canonical = canonicalize(arguments).getBytes(StandardCharsets.UTF_8);
        try {
            return Base64Url.encode(MessageDigest.getInstance("SHA-256").digest(canonical));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
