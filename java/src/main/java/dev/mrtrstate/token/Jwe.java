package dev.mrtrstate.token;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mrtrstate.InvalidRequestStateException;
import dev.mrtrstate.InvalidRequestStateException.Reason;
import dev.mrtrstate.keys.A256GcmKey;
import dev.mrtrstate.keys.Key;
import dev.mrtrstate.keys.KeySource;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * The encrypted form (profile, section 3.6; section 5.1, steps 2 to 10): a compact JWE, {@code dir} and
 * {@code A256GCM}, the AAD the protected header segment as received.
 */
public final class Jwe {
    private static final Set<String> HEADER_PARAMETERS = Set.of("alg", "enc", "typ", "kid");

    private Jwe() {}

    /**
     * The protected header segment of an encryption key's tokens: {@code {"alg", "enc", "typ", "kid"}}.
     *
     * @param key the encryption key
     * @return the encoded header
     */
    public static String headerSegment(A256GcmKey key) {
        ObjectNode header = JsonNodeFactory.instance.objectNode();
        header.put("alg", "dir");
        header.put("enc", "A256GCM");
        header.put("typ", Segments.TYP);
        header.put("kid", key.kid());
        return Base64Url.encode(StrictJson.writeBytes(header));
    }

    /**
     * Encrypt: {@code header..iv.ciphertext.tag}, a fresh IV from the system's secure random source (D6).
     *
     * @param key the encryption key
     * @param headerSegment the key's {@link #headerSegment}
     * @param payload the claims bytes
     * @return the token
     */
    public static String encrypt(A256GcmKey key, String headerSegment, byte[] payload) {
        A256GcmKey.Sealed sealed = key.encrypt(payload, headerSegment.getBytes(StandardCharsets.US_ASCII));
        return headerSegment + ".." + Base64Url.encode(sealed.iv()) + "." + Base64Url.encode(sealed.ciphertext())
                + "." + Base64Url.encode(sealed.tag());
    }

    /**
     * The size of a token of {@code payloadBytes} bytes of claims under this header.
     *
     * @param headerSegment the protected header segment
     * @param payloadBytes the size of the claims
     * @return the token's length
     */
    public static long size(String headerSegment, int payloadBytes) {
        return headerSegment.length() + 2 + 16 + 1 + (payloadBytes * 4L + 2) / 3 + 1 + 22;
    }

    /**
     * Steps 2 to 10 of the encrypted form (step 1 has passed).
     *
     * @param segments the token split at every '.' (five)
     * @param ring the verifier's keys
     * @return the decrypted claims bytes
     * @throws InvalidRequestStateException the reason of the first step that fails
     */
    public static byte[] decrypt(String[] segments, KeySource ring) throws InvalidRequestStateException {
        // Profile 5.1, step 2: five segments of the alphabet, the encrypted key (the second) empty, no other.
        if (segments.length != 5) {
            throw Segments.malformed("the token is not five segments joined by '.'");
        }
        for (int i = 0; i < segments.length; i++) {
            boolean empty = segments[i].isEmpty();
            if (empty != (i == 1) || (!empty && !Base64Url.isAlphabet(segments[i]))) {
                throw Segments.malformed("the token is not five base64url segments with an empty encrypted key");
            }
        }
        // Profile 5.1, step 3: canonical base64url.
        Segments.checkCanonical(segments);
        // Profile 5.1, step 4: the protected header is strict JSON, an object.
        JsonNode header = Segments.parseHeader(segments[0]);
        // Profile 5.1, step 5: only alg, enc, typ and kid.
        Segments.checkHeaderParameters(header, HEADER_PARAMETERS);
        // Profile 5.1, step 6: dir and A256GCM.
        if (!"dir".equals(Segments.text(header, "alg")) || !"A256GCM".equals(Segments.text(header, "enc"))) {
            throw new InvalidRequestStateException(Reason.UNSUPPORTED_HEADER, "alg is not dir or enc is not A256GCM");
        }
        // Profile 5.1, step 7: typ exactly.
        Segments.checkType(header);
        // Profile 5.1, step 8: kid names a key of the ring.
        Key key = Segments.lookup(header, ring);
        // Profile 5.1, step 9: an encryption key; a signing key never decrypts.
        if (!(key instanceof A256GcmKey aes)) {
            throw new InvalidRequestStateException(Reason.ALGORITHM_MISMATCH, "kid names a signing key");
        }
        // Profile 5.1, step 10: IV and tag lengths, then AES-256-GCM with the header segment as received as AAD.
        byte[] plaintext = aes.decrypt(Base64Url.decode(segments[2]), Base64Url.decode(segments[3]),
                Base64Url.decode(segments[4]), segments[0].getBytes(StandardCharsets.US_ASCII));
        if (plaintext == null) {
            throw new InvalidRequestStateException(Reason.BAD_SIGNATURE,
                    "the tag does not verify, or the IV or tag has the wrong length: the token was changed");
        }
        return plaintext;
    }
}
