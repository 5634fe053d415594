package dev.mrtrstate.token;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mrtrstate.InvalidRequestStateException;
import dev.mrtrstate.InvalidRequestStateException.Reason;
import java.util.Iterator;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The claims set of a token (profile, section 3.2): read strictly on the way in (section 5, steps 11 and 12),
 * written in the reference's order on the way out (section 4).
 *
 * @param iss the issuer
 * @param sub the user
 * @param aud the target, {@code <method>:<name>}
 * @param iat issued at, seconds
 * @param exp expiry, seconds
 * @param jti the token id
 * @param argsSha256 the argument digest, or null
 * @param state the state
 */
public record Claims(String iss, String sub, String aud, long iat, long exp, String jti, String argsSha256,
        JsonNode state) {
    private static final Set<String> ALL_CLAIMS = Set.of("iss", "sub", "aud", "iat", "exp", "jti", "args_sha256",
            "state");
    private static final Pattern JTI = Pattern.compile("[A-Za-z0-9_-]{22,64}");
    private static final Pattern DIGEST = Pattern.compile("[A-Za-z0-9_-]{43}");

    /**
     * Steps 11 and 12 on the claims text of either form (the decoded payload, or the decrypted plaintext).
     *
     * @param payload the claims bytes
     * @return the claims
     * @throws InvalidRequestStateException {@code malformed}
     */
    public static Claims read(byte[] payload) throws InvalidRequestStateException {
        // Profile 5, step 11 (and Profile 5.1, step 11): strict JSON at any depth, inside the state too.
        JsonNode claims = StrictJson.parseSegment(payload);
        if (claims == null || !claims.isObject()) {
            throw malformed("the claims set is not a strict JSON object");
        }
        // Profile 5, step 12: the closed set, the required claims and their types.
        for (Iterator<String> names = claims.fieldNames(); names.hasNext(); ) {
            if (!ALL_CLAIMS.contains(names.next())) {
                throw malformed("the claims set has a claim the profile does not define");
            }
        }
        String iss = nonEmpty(claims, "iss");
        String sub = nonEmpty(claims, "sub");
        String aud = nonEmpty(claims, "aud");
        long iat = time(claims, "iat");
        long exp = time(claims, "exp");
        if (exp <= iat) {
            throw malformed("claim 'exp' is not after 'iat'");
        }
        JsonNode jti = claims.get("jti");
        if (jti == null || !jti.isTextual() || !JTI.matcher(jti.textValue()).matches()) {
            throw malformed("claim 'jti' must be 22 to 64 base64url characters");
        }
        JsonNode digest = claims.get("args_sha256");
        if (digest != null && (!digest.isTextual() || !DIGEST.matcher(digest.textValue()).matches())) {
            throw malformed("claim 'args_sha256' must be 43 base64url characters");
        }
        JsonNode state = claims.get("state");
        if (state == null) {
            throw malformed("claim 'state' is missing");
        }
        return new Claims(iss, sub, aud, iat, exp, jti.textValue(), digest == null ? null : digest.textValue(),
                state);
    }

    /**
     * The claims as compact UTF-8 JSON, in the order iss, sub, aud, iat, exp, jti, args_sha256, state.
     *
     * @return the bytes
     */
    public byte[] encode() {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        out.put("iss", iss);
        out.put("sub", sub);
        out.put("aud", aud);
        out.put("iat", iat);
        out.put("exp", exp);
        out.put("jti", jti);
        if (argsSha256 != null) {
            out.put("args_sha256", argsSha256);
        }
        out.set("state", state);
        return StrictJson.writeBytes(out);
    }

    @Override
    public String toString() {
        return "Claims(aud=" + aud + ", iat=" + iat + ", exp=" + exp + ")"; // never the state or the user
    }

    private static String nonEmpty(JsonNode claims, String name) throws InvalidRequestStateException {
        JsonNode value = claims.get(name);
        if (value == null || !value.isTextual() || value.textValue().isEmpty()) {
            throw malformed("claim '" + name + "' must be a non-empty string");
        }
        return value.textValue();
    }

    /** iat or exp: an integer literal (not 1.0, not 1e9, not a string) within 0 .. 2^53 - 1. */
    private static long time(JsonNode claims, String name) throws InvalidRequestStateException {
        JsonNode value = claims.get(name);
        if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()
                || value.longValue() < 0 || value.longValue() > StrictJson.MAX_SAFE_INTEGER) {
            throw malformed("claim '" + name + "' must be an integer in 0 .. 2^53 - 1");
        }
        return value.longValue();
    }

    private static InvalidRequestStateException malformed(String detail) {
        return new InvalidRequestStateException(Reason.MALFORMED, detail);
    }
}
