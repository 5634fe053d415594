package dev.mrtrstate.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mrtrstate.token.Base64Url;
import dev.mrtrstate.token.StrictJson;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The one shape of an {@code oct} key: HS256 and A256GCM keys hold, name and refuse to publish a secret alike. */
class OctKeyTest {
    private static byte[] secret() {
        byte[] secret = new byte[32];
        for (int i = 0; i < secret.length; i++) {
            secret[i] = (byte) (i * 7 + 3);
        }
        return secret;
    }

    private static List<Key> bothKinds(byte[] secret, String kid) {
        return List.of(Key.hs256(secret, kid), Key.a256gcm(secret, kid));
    }

    /** RFC 7638 over {"k", "kty"}: the kid of a key without one, whatever it is used for. */
    @Test
    void theThumbprintIsOverKAndKtyForEitherKind() throws Exception {
        byte[] secret = secret();
        String members = "{\"k\":\"" + Base64Url.encode(secret) + "\",\"kty\":\"oct\"}";
        String expected = Base64Url.encode(
                MessageDigest.getInstance("SHA-256").digest(members.getBytes(StandardCharsets.US_ASCII)));
        for (Key key : bothKinds(secret, null)) {
            assertEquals(expected, key.thumbprint(), key.toString());
            assertEquals(expected, key.kid(), key.toString());
            assertTrue(key.canSeal(), key.toString());
        }
    }

    /** Profile 7.5: a secret is never published; the refusal names the kind of key and shows no secret. */
    @Test
    void neitherKindHasAPublicJwk() {
        byte[] secret = secret();
        Map<Key, String> kinds = Map.of(Key.hs256(secret, "mac"), "an HS256 secret",
                Key.a256gcm(secret, "enc"), "an A256GCM encryption key");
        kinds.forEach((key, what) -> {
            KeyringException refused = assertThrows(KeyringException.class, key::publicJwk);
            assertEquals("key " + key.kid() + " is " + what + ", which has no public JWK", refused.getMessage());
            assertFalse(refused.getMessage().contains(Base64Url.encode(secret)));
        });
    }

    /** The stored JWK carries the kind's alg and use, and loads back as the same key. */
    @Test
    void thePrivateJwkNamesTheKindsAlgAndUse() {
        byte[] secret = secret();
        String k = Base64Url.encode(secret);
        assertEquals(List.of(Map.entry("kty", "oct"), Map.entry("alg", "HS256"), Map.entry("use", "sig"),
                Map.entry("kid", "mac"), Map.entry("k", k)),
                List.copyOf(Key.hs256(secret, "mac").privateJwk().entrySet()));
        assertEquals(List.of(Map.entry("kty", "oct"), Map.entry("alg", "A256GCM"), Map.entry("use", "enc"),
                Map.entry("kid", "enc"), Map.entry("k", k)),
                List.copyOf(Key.a256gcm(secret, "enc").privateJwk().entrySet()));
        for (Key key : bothKinds(secret, "x")) {
            Key back = Key.fromJwk(StrictJson.writeAscii(key.privateJwk()));
            assertEquals(key.getClass(), back.getClass());
            assertEquals(key.algorithm(), back.algorithm());
            assertEquals(key.thumbprint(), back.thumbprint());
        }
    }

    /** Each kind's length rule is checked first, so a short all-zero secret is refused for its length. */
    @Test
    void theLengthIsCheckedBeforeTheWeakSecretRule() {
        KeyringException shortSecret = assertThrows(KeyringException.class, () -> Key.hs256(new byte[16], null));
        assertTrue(shortSecret.getMessage().startsWith("an HS256 secret must be at least 32 bytes, this one is 16"),
                shortSecret.getMessage());
        KeyringException longKey = assertThrows(KeyringException.class, () -> Key.a256gcm(new byte[33], null));
        assertEquals("an A256GCM key must be exactly 32 bytes, this one is 33", longKey.getMessage());
        KeyringException weak = assertThrows(KeyringException.class, () -> Key.a256gcm(new byte[32], null));
        assertTrue(weak.getMessage().startsWith("the secret is one byte repeated"), weak.getMessage());
    }
}
