package dev.mrtrstate.binding;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.token.Base64Url;
import dev.mrtrstate.token.StrictJson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Map;
import org.erdtman.jcs.JsonCanonicalizer;

/**
 * The request binding {@code args_sha256} (profile, section 3.4): base64url(SHA-256(JCS(arguments))).
 *
 * <p>JCS (RFC 8785) is {@code org.erdtman.jcs.JsonCanonicalizer}, the Java implementation by the RFC's authors:
 * it reads every number as the nearest double and writes it as ECMAScript does, and sorts members by UTF-16 code
 * units. Arguments are <em>unbindable</em> (they have no digest) when they are not a JSON object, or hold at any
 * depth a number whose nearest double has magnitude above 2^53 - 1 (so 2^53, {@code 9007199254740991.5} and
 * {@code 1e23} alike: the rule is on the double, decision D1), a number beyond the range of a double
 * ({@code 1e400}), or a lone surrogate, or when they nest deeper than {@link #MAX_DEPTH} levels (issue 32, D3).
 * A member name repeated in the arguments' text is the parser's to read: the last member wins (profile 3.4,
 * issue 32 D2), which is what {@link StrictJson#parseExact} and Jackson's default reader give.
 */
public final class ArgumentDigest {
    private static final double MAX_SAFE_INTEGER = 9007199254740991.0;
    /** The deepest arguments bind: 256 levels, the arguments object being level 1 (profile 3.4, issue 32 D3). */
    public static final int MAX_DEPTH = 256;

    private ArgumentDigest() {}

    /**
     * Whether {@code arguments} can be bound: a JSON object whose every number and string is bindable.
     *
     * @param arguments the request's arguments (null is not an object: unbindable)
     * @return true when the arguments have a digest
     */
    public static boolean isBindable(JsonNode arguments) {
        return arguments != null && arguments.isObject() && StrictJson.depth(arguments, MAX_DEPTH) <= MAX_DEPTH
                && bindable(arguments);
    }

    private static boolean bindable(JsonNode value) {
        if (value.isNumber()) {
            double number = value.doubleValue(); // BigDecimal and BigInteger round to nearest, ties to even
            return Double.isFinite(number) && Math.abs(number) <= MAX_SAFE_INTEGER;
        }
        if (value.isTextual()) {
            return StrictJson.isValidUnicode(value.textValue());
        }
        if (value.isObject()) {
            for (Map.Entry<String, JsonNode> member : value.properties()) {
                if (!StrictJson.isValidUnicode(member.getKey()) || !bindable(member.getValue())) {
                    return false;
                }
            }
            return true;
        }
        if (value.isArray()) {
            for (JsonNode item : value) {
                if (!bindable(item)) {
                    return false;
                }
            }
            return true;
        }
        return value.isBoolean() || value.isNull();
    }

    /**
     * The RFC 8785 text of any JSON value that has one (a number beyond a double has none).
     *
     * @param value the value
     * @return its canonical text, or null
     */
    public static String canonicalize(JsonNode value) {
        try {
            // The canonicalizer takes an object or an array: a scalar is wrapped and unwrapped.
            if (value.isContainerNode()) {
                return new JsonCanonicalizer(StrictJson.write(value)).getEncodedString();
            }
            String wrapped = new JsonCanonicalizer("[" + StrictJson.write(value) + "]").getEncodedString();
            return wrapped.substring(1, wrapped.length() - 1);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * The RFC 8785 text of bindable arguments.
     *
     * @param arguments the arguments object
     * @return the canonical text, or null when the arguments are unbindable
     */
    public static String canonicalArguments(JsonNode arguments) {
        return isBindable(arguments) ? canonicalize(arguments) : null;
    }

    /**
     * The argument digest.
     *
     * @param arguments the arguments object
     * @return the 43-character digest, or null when the arguments are unbindable
     */
    public static String digest(JsonNode arguments) {
        String canonical = canonicalArguments(arguments);
        if (canonical == null) {
            return null;
        }
        try {
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            return Base64Url.encode(sha256.digest(canonical.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
