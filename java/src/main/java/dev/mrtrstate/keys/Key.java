package dev.mrtrstate.keys;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.token.Base64Url;
import dev.mrtrstate.token.StrictJson;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One key of the profile (section 7): an HS256 secret, an Ed25519 key (a private key, or a public key that only
 * verifies) or an A256GCM encryption key, with its one algorithm and its {@code kid}.
 *
 * <p>Every rule of section 7 is applied when the key is made, whatever its form: secrets of at least 32 bytes
 * (exactly 32 for A256GCM) that are not one byte or a pattern of at most 8 bytes repeated (D5), Ed25519 public
 * keys that are canonical points of large order and the public key of their private half, kids of 1 to 128
 * printable ASCII characters (D3), canonical base64url members. {@link #toString()} shows the algorithm and the
 * kid only: no key material ever reaches a log.
 */
public abstract sealed class Key permits OctKey, Ed25519Key {
    /** The shortest HS256 secret (profile, section 7.1). */
    public static final int MIN_SECRET_BYTES = 32;
    /** The size of an A256GCM key (profile, section 7.6). */
    public static final int ENCRYPTION_KEY_BYTES = 32;

    static final SecureRandom RANDOM = new SecureRandom();
    private static final Pattern KID = Pattern.compile("[\\x21-\\x7e]{1,128}");
    private static final int MAX_REFUSED_PERIOD = 8;

    private final String kid;

    Key(String kid) {
        this.kid = kid;
    }

    /** {@return the key's id: an explicit kid, or the RFC 7638 thumbprint} */
    public final String kid() {
        return kid;
    }

    /** {@return the key's algorithm} */
    public abstract KeyAlgorithm algorithm();

    /** {@return whether the key can seal: an HS256 secret, an Ed25519 private key or an encryption key} */
    public abstract boolean canSeal();

    /** {@return the RFC 7638 thumbprint (SHA-256, base64url) over the required members} */
    public abstract String thumbprint();

    /**
     * The public JWK ({@code kty, crv, x, kid, alg, use}) of an Ed25519 key (profile, section 7.5).
     *
     * @return the members
     * @throws KeyringException for a secret (HS256 or encryption) key, which is never published
     */
    public abstract Map<String, String> publicJwk();

    /**
     * The full JWK, secret included, for storing the key. Handle it as a secret.
     *
     * @return the members
     */
    public abstract Map<String, String> privateJwk();

    @Override
    public final String toString() {
        return getClass().getSimpleName() + "(" + algorithm() + ", kid=" + kid + ")";
    }

    /**
     * A newly generated key from the system's secure random source.
     *
     * @param alg the algorithm
     * @return the key, its kid the thumbprint
     */
    public static Key generate(KeyAlgorithm alg) {
        switch (alg) {
            case HS256: {
                byte[] secret = new byte[MIN_SECRET_BYTES];
                RANDOM.nextBytes(secret);
                return new Hs256Key(secret, null);
            }
            case A256GCM: {
                byte[] secret = new byte[ENCRYPTION_KEY_BYTES];
                RANDOM.nextBytes(secret);
                return new A256GcmKey(secret, null);
            }
            default:
                return Ed25519Key.generate();
        }
    }

    /**
     * An HS256 key from its secret bytes.
     *
     * @param secret at least 32 random bytes
     * @param kid an explicit kid, or null for the thumbprint
     * @return the key
     * @throws KeyringException for a short or obviously non-random secret, or a bad kid
     */
    public static Key hs256(byte[] secret, String kid) {
        return new Hs256Key(secret.clone(), kid == null ? null : checkKid(kid));
    }

    /**
     * An A256GCM encryption key from its secret bytes.
     *
     * @param secret exactly 32 random bytes
     * @param kid an explicit kid, or null for the thumbprint
     * @return the key
     * @throws KeyringException for a secret of another length or obviously non-random, or a bad kid
     */
    public static Key a256gcm(byte[] secret, String kid) {
        return new A256GcmKey(secret.clone(), kid == null ? null : checkKid(kid));
    }

    /**
     * Load one key from a JWK's JSON text.
     *
     * @param json the JWK
     * @return the key
     * @throws KeyringException when the text is not strict JSON or the key breaks a rule of section 7
     */
    public static Key fromJwk(String json) {
        JsonNode jwk = StrictJson.parseDocument(json);
        if (jwk == null) {
            throw new KeyringException("a JWK must be strict JSON");
        }
        return fromJwk(jwk);
    }

    /**
     * Load one key from a JWK: {@code {"kty": "oct", "k": ...}} for HS256, {@code {"kty": "OKP", "crv":
     * "Ed25519", "x": ..., "d": ...}} for EdDSA ({@code d} absent for a verify-only key), {@code {"kty": "oct",
     * "alg": "A256GCM", "k": ...}} for an encryption key. {@code alg}, if present, must match; {@code use}, if
     * present, must be {@code sig} (signing) or {@code enc} (encryption); {@code kid} defaults to the thumbprint.
     *
     * @param jwk the JWK
     * @return the key
     * @throws KeyringException when the key breaks a rule of section 7
     */
    public static Key fromJwk(JsonNode jwk) {
        if (jwk == null || !jwk.isObject()) {
            throw new KeyringException("a JWK must be a JSON object");
        }
        String kty = text(jwk, "kty");
        String alg = text(jwk, "alg");
        String use = text(jwk, "use");
        // Profile 7.4 (D3): a present kid member is explicit and always checked; null is not read as absent.
        String kid = jwk.has("kid") ? checkKid(jwk.get("kid")) : null;
        if ("oct".equals(kty) && "A256GCM".equals(alg)) {
            if (use != null && !use.equals("enc")) {
                throw new KeyringException("an A256GCM JWK must have use 'enc' (or no 'use' member)");
            }
            return new A256GcmKey(member(jwk, "k"), kid);
        }
        if (use != null && !use.equals("sig")) {
            throw new KeyringException("a signing JWK must have use 'sig' (or no 'use' member); an encryption"
                    + " JWK has alg 'A256GCM' and use 'enc'");
        }
        if ("oct".equals(kty)) {
            if (alg != null && !alg.equals("HS256")) {
                throw new KeyringException("an 'oct' JWK must be for alg HS256 (or A256GCM for an encryption key)");
            }
            return new Hs256Key(member(jwk, "k"), kid);
        }
        if ("OKP".equals(kty)) {
            if (!"Ed25519".equals(text(jwk, "crv"))) {
                throw new KeyringException("an 'OKP' JWK must be on curve Ed25519 (crv 'Ed25519')");
            }
            if (alg != null && !alg.equals("EdDSA") && !alg.equals("Ed25519")) {
                throw new KeyringException("an Ed25519 JWK must be for alg EdDSA");
            }
            byte[] x = member(jwk, "x");
            byte[] d = jwk.has("d") ? member(jwk, "d") : null;
            return Ed25519Key.of(x, d, kid);
        }
        throw new KeyringException("unsupported JWK key type; the profile uses 'oct' (HS256, A256GCM) and 'OKP'"
                + " (Ed25519)");
    }

    /**
     * Refuse a list of keys that cannot form one ring: empty, two keys with one kid, an encryption key holding
     * the same secret bytes as any other key (profile 7.6 and 9.10, decision D4), or an HS256 or encryption key
     * holding the d or the x of an Ed25519 key (issue 32, D4).
     *
     * @param keys the keys
     * @throws KeyringException naming the rule and the kid
     */
    public static void checkRing(List<? extends Key> keys) {
        if (keys.isEmpty()) {
            throw new KeyringException("a key ring needs at least one key");
        }
        for (int i = 0; i < keys.size(); i++) {
            for (int j = i + 1; j < keys.size(); j++) {
                Key a = keys.get(i);
                Key b = keys.get(j);
                if ((a instanceof A256GcmKey || b instanceof A256GcmKey) && a instanceof OctKey octA
                        && b instanceof OctKey octB && MessageDigest.isEqual(octA.secret(), octB.secret())) {
                    throw new KeyringException("the encryption key " + (a instanceof A256GcmKey ? a : b).kid()
                            + " holds the same secret as another key of the ring: one secret, one use");
                }
            }
        }
        // Issue 32, D4: the d and the x of an Ed25519 key are secret bytes for that rule too (an x is published,
        // a d signs), so no oct key of the ring, HS256 or encryption, may hold either.
        for (Key a : keys) {
            for (Key b : keys) {
                if (a instanceof OctKey oct && b instanceof Ed25519Key pair && pair.hasBytes(oct.secret())) {
                    throw new KeyringException("the key " + a.kid() + " holds the d or the x of the Ed25519 key "
                            + b.kid() + " as its secret: one secret, one use");
                }
            }
        }
        // Checked after the shared secrets: two keys of one secret without kids have one thumbprint, and the
        // refusal then names the rule that matters (one secret, one use) rather than the kid they share.
        Map<String, Key> byKid = new HashMap<>();
        for (Key key : keys) {
            if (byKid.putIfAbsent(key.kid(), key) != null) {
                throw new KeyringException("two keys in the ring have the kid " + key.kid());
            }
        }
    }

    /** Refuse a secret that is one byte or a pattern of at most 8 bytes repeated (profile 7.1, decision D5). */
    static void checkNotRepeated(byte[] secret) {
        for (int period = 1; period <= MAX_REFUSED_PERIOD && period < secret.length; period++) {
            boolean repeated = true;
            for (int i = period; i < secret.length && repeated; i++) {
                repeated = secret[i] == secret[i - period];
            }
            if (repeated) {
                throw new KeyringException("the secret is " + (period == 1 ? "one byte repeated"
                        : "a pattern of " + period + " bytes repeated") + ", not random bytes; generate one with"
                        + " Keyring.generate or `mrtr-state keygen`");
            }
        }
    }

    static String checkKid(Object kid) {
        String text = kid instanceof JsonNode node ? (node.isTextual() ? node.textValue() : null)
                : kid instanceof String s ? s : null;
        if (text == null || !KID.matcher(text).matches()) {
            throw new KeyringException("a kid must be 1 to 128 printable ASCII characters without spaces");
        }
        return text;
    }

    /** The thumbprint of the required members, given in lexicographic order. */
    static String thumbprintOf(String... membersInOrder) {
        Map<String, String> members = new LinkedHashMap<>();
        for (int i = 0; i < membersInOrder.length; i += 2) {
            members.put(membersInOrder[i], membersInOrder[i + 1]);
        }
        try {
            byte[] json = StrictJson.writeAscii(members).getBytes(StandardCharsets.UTF_8);
            return Base64Url.encode(MessageDigest.getInstance("SHA-256").digest(json));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    private static String text(JsonNode jwk, String name) {
        JsonNode value = jwk.get(name);
        if (value == null) {
            return null;
        }
        if (!value.isTextual()) {
            throw new KeyringException("a JWK's '" + name + "' member must be a string");
        }
        return value.textValue();
    }

    private static byte[] member(JsonNode jwk, String name) {
        JsonNode value = jwk.get(name);
        if (value == null || !value.isTextual()) {
            throw new KeyringException("a JWK's '" + name + "' member must be a base64url string");
        }
        byte[] bytes = Base64Url.decodeCanonical(value.textValue());
        if (bytes == null) {
            throw new KeyringException("a JWK's '" + name + "' member is not canonical unpadded base64url");
        }
        return bytes;
    }

    /** A GeneralSecurityException of the JDK as a load failure, without its message (it may hold key data). */
    static KeyringException unusable(String what, GeneralSecurityException cause) {
        return new KeyringException(what + " (" + cause.getClass().getSimpleName() + ")");
    }
}
