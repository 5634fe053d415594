package mrtrstate.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.crypto.tink.subtle.Ed25519Sign;
import com.nimbusds.jose.Algorithm;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.Ed25519Signer;
import com.nimbusds.jose.crypto.Ed25519Verifier;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.util.Base64URL;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.text.ParseException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Keys as the profile has them (section 7): an HS256 secret ({@code oct}) or an Ed25519 key ({@code OKP}),
 * each with one algorithm and one {@code kid}; a ring finds a key by {@code kid}.
 *
 * <p>Nimbus parses the JWK, computes the RFC 7638 thumbprint and makes the signers and verifiers. The rules
 * Nimbus does not apply at load time are added here: {@code use} is {@code sig}, {@code alg} matches the key
 * type, base64url members are canonical, an Ed25519 {@code x} is a canonical point of large order
 * ({@link Ed25519Point}) and the public key of its {@code d}, kids are distinct. (The HS256 minimum of 32 bytes is Nimbus's: {@code MACVerifier} refuses a shorter secret.)
 */
final class KeyRing {
    private static final Pattern KID = Pattern.compile("[\\x21-\\x7e]{1,128}");

    /**
     * One key: its id, its algorithm (the only one a token naming it may use: a {@code JWSAlgorithm}, or
     * {@code EncryptionMethod.A256GCM} for an encryption key, see JweForm), and its verifier (null for an
     * encryption key).
     */
    record Key(String kid, Algorithm alg, JWK jwk, JWSVerifier verifier) {
        /** A signer for minting; BadJob for a public Ed25519 key. */
        JWSSigner signer() throws BadJob {
            try {
                if (jwk instanceof OctetSequenceKey secret) {
                    return new MACSigner(secret);
                }
                OctetKeyPair pair = (OctetKeyPair) jwk;
                if (!pair.isPrivate()) {
                    throw new BadJob("the Ed25519 key " + kid + " has no private part 'd' and cannot sign");
                }
                return new Ed25519Signer(pair);
            } catch (JOSEException e) {
                throw new BadJob("cannot sign with key " + kid + ": " + e.getMessage());
            }
        }
    }

    private final Map<String, Key> keys;

    private KeyRing(Map<String, Key> keys) {
        this.keys = keys;
    }

    /** Load a JWKS ({@code {"keys": [...]}}). */
    static KeyRing fromJwks(JsonNode jwks) throws BadJob {
        if (jwks == null || !jwks.isObject() || !jwks.path("keys").isArray() || jwks.get("keys").isEmpty()) {
            throw new BadJob("'keys' must be a JWKS: an object with a non-empty 'keys' array");
        }
        Map<String, Key> keys = new LinkedHashMap<>();
        for (JsonNode member : jwks.get("keys")) {
            Key key = load(member);
            if (keys.putIfAbsent(key.kid(), key) != null) {
                throw new BadJob("two keys in the JWKS have the kid " + key.kid());
            }
            // Profile 7.6 and 9.10: an encryption key holds a secret no other key of the ring holds,
            // whatever the kids.
            for (Key other : keys.values()) {
                if (other != key && sharesEncryptionSecret(key, other)) {
                    throw new BadJob("the keys " + other.kid() + " and " + key.kid()
                            + " hold the same secret, and one is an encryption key");
                }
            }
        }
        return new KeyRing(keys);
    }

    private static boolean sharesEncryptionSecret(Key a, Key b) {
        if (!(a.jwk() instanceof OctetSequenceKey first) || !(b.jwk() instanceof OctetSequenceKey second)) {
            return false;
        }
        boolean encryption = JweForm.ALG.equals(a.alg()) || JweForm.ALG.equals(b.alg());
        return encryption && MessageDigest.isEqual(first.toByteArray(), second.toByteArray());
    }

    /**
     * Profile 7.1, one rule for every {@code oct} secret (HS256 and A256GCM alike): a secret that is one byte,
     * or a pattern of at most 8 bytes, repeated is refused as obviously not random.
     */
    static void requireNotWeak(byte[] secret) throws BadJob {
        for (int period = 1; period <= 8 && period < secret.length; period++) {
            if (Arrays.equals(secret, period, secret.length, secret, 0, secret.length - period)) {
                throw new BadJob("an 'oct' secret that is a pattern of " + period
                        + " bytes repeated is not random; generate one");
            }
        }
    }

    /** The key named {@code kid}, or null. */
    Key get(String kid) {
        return keys.get(kid);
    }

    /** Load one JWK. Messages name the problem and the kid, never key material. */
    static Key load(JsonNode member) throws BadJob {
        if (member == null || !member.isObject()) {
            throw new BadJob("a JWK must be a JSON object");
        }
        // Profile 7.4: a kid member that is present is explicit, whatever its value (null is not absent).
        if (member.has("kid") && !member.get("kid").isTextual()) {
            throw new BadJob("a kid must be 1 to 128 printable ASCII characters without spaces");
        }
        JWK jwk;
        try {
            jwk = JWK.parse(StrictJson.writePlain(member));
        } catch (ParseException e) {
            throw new BadJob("a JWK cannot be read: " + e.getMessage());
        }
        String alg = jwk.getAlgorithm() == null ? null : jwk.getAlgorithm().getName();
        if (jwk instanceof OctetSequenceKey octet) {
            requireNotWeak(octet.toByteArray());
        }
        if (jwk instanceof OctetSequenceKey secret && JweForm.ALG.getName().equals(alg)) {
            return JweForm.key(secret, kidOf(jwk)); // an encryption key: use "enc", 32 bytes
        }
        if (jwk.getKeyUse() != null && !KeyUse.SIGNATURE.equals(jwk.getKeyUse())) {
            throw new BadJob("a JWK for this profile must have use 'sig' (or no 'use')");
        }
        try {
            if (jwk instanceof OctetSequenceKey secret) {
                if (alg != null && !alg.equals("HS256")) {
                    throw new BadJob("an 'oct' JWK must be for alg HS256 (or A256GCM)");
                }
                requireCanonical(secret.getKeyValue(), "k");
                String kid = kidOf(jwk);
                return new Key(kid, JWSAlgorithm.HS256, jwk, new MACVerifier(secret));
            }
            if (jwk instanceof OctetKeyPair pair) {
                if (!Curve.Ed25519.equals(pair.getCurve())) {
                    throw new BadJob("an 'OKP' JWK must be on curve Ed25519");
                }
                if (alg != null && !alg.equals("EdDSA") && !alg.equals("Ed25519")) {
                    throw new BadJob("an Ed25519 JWK must be for alg EdDSA");
                }
                requireCanonical(pair.getX(), "x");
                if (pair.getDecodedX().length != 32) {
                    throw new BadJob("an Ed25519 JWK's 'x' must be 32 bytes");
                }
                String problem = Ed25519Point.problem(pair.getDecodedX());
                if (problem != null) {
                    throw new BadJob(problem);
                }
                if (pair.isPrivate()) {
                    requireCanonical(pair.getD(), "d");
                    byte[] d = pair.getDecodedD();
                    if (d.length != 32) {
                        throw new BadJob("an Ed25519 JWK's 'd' must be 32 bytes");
                    }
                    byte[] x = Ed25519Sign.KeyPair.newKeyPairFromSeed(d).getPublicKey();
                    if (!Arrays.equals(x, pair.getDecodedX())) {
                        throw new BadJob("an Ed25519 JWK's 'x' is not the public key of its 'd'");
                    }
                }
                String kid = kidOf(jwk);
                return new Key(kid, JWSAlgorithm.EdDSA, jwk, new Ed25519Verifier(pair.toPublicJWK()));
            }
        } catch (JOSEException | GeneralSecurityException e) {
            throw new BadJob("a JWK cannot be used: " + e.getMessage());
        }
        throw new BadJob("unsupported JWK key type " + jwk.getKeyType()
                + "; the profile uses 'oct' (HS256) and 'OKP' (Ed25519)");
    }

    /** The JWK's {@code kid} member, else its RFC 7638 thumbprint (profile, section 7.4). */
    private static String kidOf(JWK jwk) throws BadJob {
        String kid = jwk.getKeyID();
        if (kid == null) {
            try {
                return jwk.computeThumbprint().toString(); // SHA-256 over the required members
            } catch (JOSEException e) {
                throw new BadJob("cannot compute a JWK's thumbprint: " + e.getMessage());
            }
        }
        if (!KID.matcher(kid).matches()) {
            throw new BadJob("a kid must be 1 to 128 printable ASCII characters without spaces");
        }
        return kid;
    }

    static void requireCanonical(Base64URL member, String name) throws BadJob {
        String text = member.toString();
        if (text.isEmpty() || !Base64Url.isAlphabet(text) || !Base64Url.isCanonical(text)) {
            throw new BadJob("the JWK member '" + name + "' is not canonical unpadded base64url");
        }
    }
}
