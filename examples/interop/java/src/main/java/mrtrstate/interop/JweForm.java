package mrtrstate.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.EncryptionMethod;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWEAlgorithm;
import com.nimbusds.jose.JWEHeader;
import com.nimbusds.jose.JWEObject;
import com.nimbusds.jose.crypto.DirectDecrypter;
import com.nimbusds.jose.crypto.DirectEncrypter;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jwt.EncryptedJWT;
import com.nimbusds.jwt.JWTClaimsSet;
import java.text.ParseException;
import java.util.Iterator;
import java.util.Set;

/**
 * The encrypted form of the profile: a JWE in compact serialization with {@code "alg": "dir"} and
 * {@code "enc": "A256GCM"}, opened with Nimbus's {@code DirectDecrypter} and made with its
 * {@code DirectEncrypter}.
 *
 * <p>Nimbus gives the compact parse, AES-256-GCM with the protected header segment as received as the AAD
 * (RFC 7516, 5.1 step 14), the tag check, and a fresh random 96-bit IV when encrypting. What this class
 * adds before Nimbus sees the token, because Nimbus does not check it or gives no reason code: five
 * segments with an empty encrypted key; canonical base64url ({@code DirectDecrypter} accepted a padded tag and
 * one with non-zero unused bits); a strict header (Nimbus refuses a duplicate member, but as a parse error,
 * keeps unknown members as custom parameters, and inflates a {@code zip} plaintext); {@code dir} and
 * {@code A256GCM}; the exact {@code typ}; the kid lookup and the key's form; and the IV and tag lengths
 * (Nimbus decrypted a token with an 8-byte IV: Java's GCM takes an IV of any length). The decrypted claims then go through the same steps 11
 * to 19 as a signed token's ({@link StateVerifier#claimSteps}).
 */
final class JweForm {
    /** The algorithm of an encryption key: the {@code alg} of its JWK and the {@code enc} of its tokens. */
    static final EncryptionMethod ALG = EncryptionMethod.A256GCM;

    private static final Set<String> HEADER_PARAMETERS = Set.of("alg", "enc", "typ", "kid");
    private static final int KEY_BYTES = 32;
    private static final int IV_BYTES = 12;
    private static final int TAG_BYTES = 16;

    private JweForm() {}

    /** An encryption key from its JWK ({@code "alg": "A256GCM"}): use {@code enc}, exactly 32 bytes. */
    static KeyRing.Key key(OctetSequenceKey secret, String kid) throws BadJob {
        if (secret.getKeyUse() != null && !KeyUse.ENCRYPTION.equals(secret.getKeyUse())) {
            throw new BadJob("an A256GCM JWK must have use 'enc' (or no 'use')");
        }
        KeyRing.requireCanonical(secret.getKeyValue(), "k");
        if (secret.toByteArray().length != KEY_BYTES) {
            throw new BadJob("an A256GCM key must be exactly " + KEY_BYTES + " bytes");
        }
        return new KeyRing.Key(kid, ALG, secret, null);
    }

    /** Steps 2 to 10 of the encrypted form (step 1 has passed); the decrypted claims text. */
    static byte[] decrypt(String text, String[] segments, KeyRing ring) throws Refusal {
        // 2. Five segments of the base64url alphabet; the encrypted key (the second) is empty for dir.
        for (int i = 0; i < segments.length; i++) {
            boolean empty = segments[i].isEmpty();
            if (empty != (i == 1) || (!empty && !Base64Url.isAlphabet(segments[i]))) {
                throw new Refusal("malformed", "the token is not five base64url segments with an empty encrypted key");
            }
        }
        // 3. Canonical base64url.
        for (String segment : segments) {
            if (!segment.isEmpty() && !Base64Url.isCanonical(segment)) {
                throw new Refusal("malformed", "a segment is not canonical unpadded base64url");
            }
        }
        // 4. The protected header is a strict JSON object.
        JsonNode header = StrictJson.parseSegment(Base64Url.decode(segments[0]));
        if (header == null || !header.isObject()) {
            throw new Refusal("malformed", "the header is not a strict JSON object");
        }
        // 5. Only alg, enc, typ and kid.
        for (Iterator<String> names = header.fieldNames(); names.hasNext(); ) {
            if (!HEADER_PARAMETERS.contains(names.next())) {
                throw new Refusal("unsupported_header", "the header has a parameter the profile forbids");
            }
        }
        // 6. dir and A256GCM.
        if (!"dir".equals(textOf(header, "alg")) || !ALG.getName().equals(textOf(header, "enc"))) {
            throw new Refusal("unsupported_header", "alg is not dir or enc is not A256GCM");
        }
        // 7. typ byte for byte (JOSEObjectType.equals ignores case).
        if (!StateVerifier.TYP.equals(textOf(header, "typ"))) {
            throw new Refusal("wrong_type", "typ is not exactly " + StateVerifier.TYP);
        }
        // 8. kid names a key of the ring.
        String kid = textOf(header, "kid");
        KeyRing.Key key = kid == null ? null : ring.get(kid);
        if (key == null) {
            throw new Refusal("unknown_key", "kid names no key in the ring");
        }
        // 9. The key is an encryption key: a signing key never decrypts.
        if (!ALG.equals(key.alg())) {
            throw new Refusal("algorithm_mismatch", "kid names a signing key");
        }
        // 10. The IV and tag lengths, then Nimbus decrypts and checks the tag.
        if (Base64Url.decode(segments[2]).length != IV_BYTES || Base64Url.decode(segments[4]).length != TAG_BYTES) {
            throw new Refusal("bad_signature", "the IV is not 12 bytes or the tag is not 16 bytes");
        }
        JWEObject jwe;
        try {
            jwe = JWEObject.parse(text);
        } catch (ParseException e) { // not reached: steps 2 to 9 passed
            throw new Refusal("malformed", "Nimbus cannot parse the token");
        }
        try {
            jwe.decrypt(new DirectDecrypter(((OctetSequenceKey) key.jwk()).toSecretKey("AES")));
        } catch (JOSEException e) {
            throw new Refusal("bad_signature", "the tag does not verify: the token was changed");
        }
        return jwe.getPayload().toBytes();
    }

    /** The compact JWE of {@code claims} under an encryption key: header {alg: dir, enc, typ, kid}. */
    static String encrypt(KeyRing.Key key, JWTClaimsSet claims) throws BadJob {
        JWEHeader header = new JWEHeader.Builder(JWEAlgorithm.DIR, ALG)
                .type(new JOSEObjectType(StateVerifier.TYP))
                .keyID(key.kid())
                .build();
        EncryptedJWT jwt = new EncryptedJWT(header, claims);
        try {
            jwt.encrypt(new DirectEncrypter(((OctetSequenceKey) key.jwk()).toSecretKey("AES")));
        } catch (JOSEException e) {
            throw new BadJob("cannot encrypt: " + e.getMessage());
        }
        return jwt.serialize();
    }

    private static String textOf(JsonNode header, String name) {
        JsonNode value = header.get(name);
        return value != null && value.isTextual() ? value.textValue() : null;
    }
}
