package dev.mrtrstate.token;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mrtrstate.InvalidRequestStateException;
import dev.mrtrstate.InvalidRequestStateException.Reason;
import dev.mrtrstate.keys.Ed25519Key;
import dev.mrtrstate.keys.Hs256Key;
import dev.mrtrstate.keys.Key;
import dev.mrtrstate.keys.KeySource;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/** The signed form (profile, sections 3 and 4; section 5, steps 2 to 10): a compact JWS, HS256 or EdDSA. */
public final class Jws {
    private static final Set<String> HEADER_PARAMETERS = Set.of("alg", "typ", "kid");

    private Jws() {}

    /**
     * The header segment of a signing key's tokens: {@code {"alg", "typ", "kid"}} in that order.
     *
     * @param key an HS256 or Ed25519 key
     * @return the encoded header
     */
    public static String headerSegment(Key key) {
        ObjectNode header = JsonNodeFactory.instance.objectNode();
        header.put("alg", key.algorithm().jose());
        header.put("typ", Segments.TYP);
        header.put("kid", key.kid());
        return Base64Url.encode(StrictJson.writeBytes(header));
    }

    /**
     * Sign: {@code header.payload.signature}.
     *
     * @param key the signing key (HS256, or Ed25519 with its private half)
     * @param headerSegment the key's {@link #headerSegment}
     * @param payload the claims bytes
     * @return the token
     */
    public static String sign(Key key, String headerSegment, byte[] payload) {
        String input = headerSegment + "." + Base64Url.encode(payload);
        byte[] message = input.getBytes(StandardCharsets.US_ASCII);
        byte[] signature = key instanceof Hs256Key hs ? hs.sign(message) : ((Ed25519Key) key).sign(message);
        return input + "." + Base64Url.encode(signature);
    }

    /**
     * Steps 2 to 10 of a token of three segments (step 1 has passed).
     *
     * @param segments the token split at every '.'
     * @param ring the verifier's keys
     * @return the decoded payload, whose signature verified
     * @throws InvalidRequestStateException the reason of the first step that fails
     */
    public static byte[] verify(String[] segments, KeySource ring) throws InvalidRequestStateException {
        // Profile 5, step 2: exactly three non-empty segments of the base64url alphabet.
        if (segments.length != 3) {
            throw Segments.malformed("the token is not three segments joined by '.'");
        }
        for (String segment : segments) {
            if (segment.isEmpty() || !Base64Url.isAlphabet(segment)) {
                throw Segments.malformed("a segment is empty or not base64url");
            }
        }
        // Profile 5, step 3: canonical base64url, so no two texts carry the same bytes.
        Segments.checkCanonical(segments);
        // Profile 5, step 4: the header is strict JSON, an object.
        JsonNode header = Segments.parseHeader(segments[0]);
        // Profile 5, step 5: the header allowlist.
        Segments.checkHeaderParameters(header, HEADER_PARAMETERS);
        // Profile 5, step 6: HS256 or EdDSA only ("Ed25519" too is refused).
        String alg = Segments.text(header, "alg");
        if (!"HS256".equals(alg) && !"EdDSA".equals(alg)) {
            throw new InvalidRequestStateException(Reason.UNSUPPORTED_HEADER, "alg is not HS256 or EdDSA");
        }
        // Profile 5, step 7: typ, the decoded string, exactly.
        Segments.checkType(header);
        // Profile 5, step 8: kid names a key of the ring.
        Key key = Segments.lookup(header, ring);
        // Profile 5, step 9: the algorithm is the key's, never the token's (an encryption key has A256GCM).
        if (!key.algorithm().jose().equals(alg)) {
            throw new InvalidRequestStateException(Reason.ALGORITHM_MISMATCH,
                    "alg is not the algorithm of the named key");
        }
        // Profile 5, step 10: the signature, over the first two segments as received.
        byte[] message = (segments[0] + "." + segments[1]).getBytes(StandardCharsets.US_ASCII);
        byte[] signature = Base64Url.decode(segments[2]);
        boolean valid = key instanceof Hs256Key hs ? hs.verify(message, signature)
                : ((Ed25519Key) key).verify(message, signature);
        if (!valid) {
            throw new InvalidRequestStateException(Reason.BAD_SIGNATURE, "the signature does not verify");
        }
        return Base64Url.decode(segments[1]);
    }
}
