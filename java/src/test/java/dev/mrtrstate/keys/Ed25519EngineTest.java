package dev.mrtrstate.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The two Ed25519 engines give the same signatures and the same verdicts, the edge cases of RFC 8032
 * verification included, so which one a server gets (bcprov on its class path or not) changes the speed only.
 */
class Ed25519EngineTest {
    private static final BigInteger L = BigInteger.TWO.pow(252).add(new BigInteger("27742317777372353535851937790883648493"));
    private static final Ed25519Engine JDK = new JdkEd25519();
    private static final Ed25519Engine BC = Ed25519Engine.bouncyCastle();
    private static final List<Ed25519Engine> ENGINES = List.of(JDK, BC);

    @Test
    void theChoiceFollowsTheClassPathAndTheProperty() {
        assertNotNull(BC, "bcprov is on the test class path and passes the RFC 8032 self-test");
        assertTrue(JDK.passesSelfTest());
        assertEquals("JDK", Ed25519Engine.choose("jdk").name());
        assertEquals("BouncyCastle", Ed25519Engine.choose("auto").name());
        String expected = "jdk".equals(System.getProperty(Ed25519Engine.PROPERTY)) ? "JDK" : "BouncyCastle";
        assertEquals(expected, Ed25519Key.implementation());
        assertEquals(expected, Ed25519Engine.DEFAULT.name());
    }

    @Test
    void bothSignAlikeAndVerifyEachOther() {
        Random random = new Random(20261204);
        for (int round = 0; round < 6; round++) {
            Ed25519Key generated = Ed25519Key.generate();
            byte[] x = b64(generated.publicJwk().get("x"));
            byte[] d = b64(generated.privateJwk().get("d"));
            byte[] message = new byte[random.nextInt(6000)];
            random.nextBytes(message);
            Ed25519Key jdk = Ed25519Key.of(x, d, null, JDK);
            Ed25519Key bc = Ed25519Key.of(x, d, null, BC);
            byte[] signature = jdk.sign(message);
            assertArrayEquals(signature, bc.sign(message));
            assertTrue(jdk.verify(message, signature));
            assertTrue(bc.verify(message, signature));
            message[message.length / 2] ^= 1;
            if (message.length > 0) {
                assertFalse(jdk.verify(message, signature));
                assertFalse(bc.verify(message, signature));
            }
        }
    }

    @Test
    void aFlippedBitInEveryByteIsRefusedByBoth() {
        Ed25519Key generated = Ed25519Key.generate();
        byte[] message = "eyJhbGciOiJFZERTQSJ9.eyJzdGF0ZSI6e319".getBytes(StandardCharsets.US_ASCII);
        byte[] signature = generated.sign(message);
        List<Ed25519Key> keys = bothOf(generated).subList(2, 4);
        for (int i = 0; i < 64; i++) { // one bit of each byte, each bit position 8 times (the JDK's verify is slow)
            byte[] flipped = signature.clone();
            flipped[i] ^= (byte) (1 << (i % 8));
            int bit = 8 * i + i % 8;
            for (Ed25519Key key : keys) {
                assertFalse(key.verify(message, flipped), "bit " + bit);
            }
        }
    }

    @Test
    void theEdgesOfVerificationGetOneVerdict() throws Exception {
        Ed25519Key generated = Ed25519Key.generate();
        byte[] x = b64(generated.publicJwk().get("x"));
        byte[] d = b64(generated.privateJwk().get("d"));
        byte[] message = "the signing input".getBytes(StandardCharsets.US_ASCII);
        byte[] signature = generated.sign(message);

        // S + L: the same equation, a non-canonical S; RFC 8032 refuses it (no malleable signatures).
        byte[] malleable = signature.clone();
        System.arraycopy(littleEndian(scalar(signature, 32).add(L)), 0, malleable, 32, 32);
        // R the identity and S = k a: [S]B = R + [k]A holds, cofactorless; a signer holding d can make it.
        byte[] identity = new byte[32];
        identity[0] = 1;
        // The identity again, non-canonically: y = p + 1, and x = 0 with the sign bit set.
        byte[] yPlusP = littleEndian(Ed25519Point.P.add(BigInteger.ONE));
        byte[] signedZero = identity.clone();
        signedZero[31] |= (byte) 0x80;
        for (Ed25519Key key : bothOf(generated)) {
            assertFalse(key.verify(message, malleable), "S + L");
            assertTrue(key.verify(message, identitySignature(identity, x, d, message)), "R = identity");
            assertFalse(key.verify(message, identitySignature(yPlusP, x, d, message)), "R = identity, y = p + 1");
            assertFalse(key.verify(message, identitySignature(signedZero, x, d, message)), "R = identity, sign set");
            assertFalse(key.verify(message, new byte[63]), "63 bytes");
            assertFalse(key.verify(message, new byte[64]), "zeros");
        }
    }

    @Test
    void bothRefuseAnXThatIsNotThePublicKeyOfD() {
        byte[] x = b64(Ed25519Key.generate().publicJwk().get("x"));
        byte[] d = b64(Ed25519Key.generate().privateJwk().get("d"));
        for (Ed25519Engine engine : ENGINES) {
            KeyringException refused = assertThrows(KeyringException.class, () -> Ed25519Key.of(x, d, null, engine));
            assertEquals("an Ed25519 JWK's 'x' is not the public key of its 'd'", refused.getMessage());
        }
    }

    private static List<Ed25519Key> bothOf(Ed25519Key key) {
        byte[] x = b64(key.publicJwk().get("x"));
        byte[] d = b64(key.privateJwk().get("d"));
        return List.of(Ed25519Key.of(x, d, null, JDK), Ed25519Key.of(x, d, null, BC),
                Ed25519Key.of(x, null, null, JDK), Ed25519Key.of(x, null, null, BC));
    }

    /** R as given and S = k a mod L, k = SHA-512(R || A || M): valid exactly when R decodes to the identity. */
    private static byte[] identitySignature(byte[] r, byte[] x, byte[] d, byte[] message)
            throws NoSuchAlgorithmException {
        byte[] h = MessageDigest.getInstance("SHA-512").digest(d);
        h[0] &= (byte) 0xf8;
        h[31] &= 0x7f;
        h[31] |= 0x40;
        BigInteger a = scalar(h, 0);
        MessageDigest sha = MessageDigest.getInstance("SHA-512");
        sha.update(r);
        sha.update(x);
        BigInteger k = scalar(sha.digest(message), 0, 64).mod(L);
        byte[] signature = new byte[64];
        System.arraycopy(r, 0, signature, 0, 32);
        System.arraycopy(littleEndian(k.multiply(a).mod(L)), 0, signature, 32, 32);
        return signature;
    }

    private static byte[] b64(String text) {
        return java.util.Base64.getUrlDecoder().decode(text);
    }

    private static BigInteger scalar(byte[] bytes, int offset) {
        return scalar(bytes, offset, 32);
    }

    private static BigInteger scalar(byte[] bytes, int offset, int length) {
        byte[] bigEndian = new byte[length];
        for (int i = 0; i < length; i++) {
            bigEndian[i] = bytes[offset + length - 1 - i];
        }
        return new BigInteger(1, bigEndian);
    }

    private static byte[] littleEndian(BigInteger value) {
        byte[] bigEndian = value.toByteArray();
        byte[] out = new byte[32];
        for (int i = 0; i < bigEndian.length && i < 32; i++) {
            out[i] = bigEndian[bigEndian.length - 1 - i];
        }
        return out;
    }
}
