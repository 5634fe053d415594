package dev.mrtrstate.token;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.InvalidRequestStateException;
import dev.mrtrstate.InvalidRequestStateException.Reason;
import dev.mrtrstate.keys.Key;
import dev.mrtrstate.keys.KeySource;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * What the two forms share: step 1, the split into segments, and the steps both forms take alike (3, 4, 5, 7 and
 * 8: canonical segments, the header, its allowlist, its type and the kid lookup).
 */
public final class Segments {
    /** The {@code typ} of every token of the profile. */
    public static final String TYP = "mrtr-state+jwt";

    private Segments() {}

    /**
     * Profile 5, step 1: the size in the bytes of the UTF-8 encoding, a lone surrogate counting as the three
     * bytes of U+FFFD, checked before any decoding.
     *
     * @param token the token
     * @param maxTokenBytes the size cap
     * @throws InvalidRequestStateException {@code too_large}
     */
    public static void checkSize(String token, long maxTokenBytes) throws InvalidRequestStateException {
        // A string never has more UTF-16 units than UTF-8 bytes: length() alone decides most tokens.
        if (token.length() > maxTokenBytes) {
            throw new InvalidRequestStateException(Reason.TOO_LARGE, "the token is longer than the size cap");
        }
        long bytes = 0;
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c < 0x80) {
                bytes += 1;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < token.length()
                    && Character.isLowSurrogate(token.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else {
                bytes += 3;
            }
        }
        if (bytes > maxTokenBytes) {
            throw new InvalidRequestStateException(Reason.TOO_LARGE, "the token is longer than the size cap");
        }
    }

    /**
     * The token's segments, split at every {@code .}.
     *
     * @param token the token
     * @return the segments, empty ones included
     */
    public static String[] split(String token) {
        List<String> parts = new ArrayList<>(5);
        int start = 0;
        for (int dot = token.indexOf('.'); dot >= 0 && parts.size() < 6; dot = token.indexOf('.', start)) {
            parts.add(token.substring(start, dot));
            start = dot + 1;
        }
        parts.add(token.substring(start));
        return parts.toArray(new String[0]);
    }

    /**
     * Profile 5 and 5.1, step 3: every segment canonical unpadded base64url, so no two texts carry the same
     * bytes. The empty encrypted key of the encrypted form has nothing to check.
     */
    static void checkCanonical(String[] segments) throws InvalidRequestStateException {
        for (String segment : segments) {
            if (!segment.isEmpty() && !Base64Url.isCanonical(segment)) {
                throw malformed("a segment is not canonical unpadded base64url");
            }
        }
    }

    /** Profile 5 and 5.1, step 4: the (protected) header segment decodes to strict JSON, an object. */
    static JsonNode parseHeader(String headerSegment) throws InvalidRequestStateException {
        JsonNode header = StrictJson.parseSegment(Base64Url.decode(headerSegment));
        if (header == null || !header.isObject()) {
            throw malformed("the header is not a strict JSON object");
        }
        return header;
    }

    /** Profile 5 and 5.1, step 5: the header has no parameter outside the form's allowlist. */
    static void checkHeaderParameters(JsonNode header, Set<String> allowed) throws InvalidRequestStateException {
        for (Iterator<String> names = header.fieldNames(); names.hasNext(); ) {
            if (!allowed.contains(names.next())) {
                throw new InvalidRequestStateException(Reason.UNSUPPORTED_HEADER,
                        "the header has a parameter the profile forbids");
            }
        }
    }

    /** Profile 5 and 5.1, step 7: {@code typ}, the decoded string, is exactly {@value #TYP}. */
    static void checkType(JsonNode header) throws InvalidRequestStateException {
        if (!TYP.equals(text(header, "typ"))) {
            throw new InvalidRequestStateException(Reason.WRONG_TYPE, "typ is not exactly " + TYP);
        }
    }

    /** A header member that is a string, or null when absent or of another type. */
    static String text(JsonNode header, String name) {
        JsonNode value = header.get(name);
        return value != null && value.isTextual() ? value.textValue() : null;
    }

    /** Profile 5, step 8 (and 5.1, step 8): the key the kid names, asking the source once to refresh. */
    static Key lookup(JsonNode header, KeySource ring) throws InvalidRequestStateException {
        String kid = text(header, "kid");
        Key key = null;
        if (kid != null) {
            key = ring.get(kid);
            if (key == null && ring.refreshForUnknownKey()) {
                key = ring.get(kid);
            }
        }
        if (key == null) {
            throw new InvalidRequestStateException(Reason.UNKNOWN_KEY, "kid names no key in the ring");
        }
        return key;
    }

    static InvalidRequestStateException malformed(String detail) {
        return new InvalidRequestStateException(Reason.MALFORMED, detail);
    }
}
