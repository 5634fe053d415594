package dev.mrtrstate.keys;

import dev.mrtrstate.token.Base64Url;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.interfaces.EdECPrivateKey;
import java.security.interfaces.EdECPublicKey;
import java.security.spec.EdECPoint;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An Ed25519 key (profile, section 7.2). It signs and verifies with BouncyCastle's lightweight RFC 8032 code
 * when {@code bcprov} is on the class path (an optional dependency, several times faster), and with the JDK's
 * own EdDSA ({@code Signature "Ed25519"}, Java 15 and later) otherwise; {@link #implementation()} says which.
 * Neither checks a public key's encoding or order, so {@link Ed25519Point} does that when the key is loaded,
 * whichever computes. A key without its private half only verifies (a verify-only replica).
 */
public final class Ed25519Key extends Key {
    private final byte[] x;
    private final byte[] d;
    private final Ed25519Engine.Verifier verifier;
    private final Ed25519Engine.Signer signer;

    private Ed25519Key(byte[] x, byte[] d, Ed25519Engine.Verifier verifier, Ed25519Engine.Signer signer, String kid) {
        super(kid != null ? kid : thumbprintOf("crv", "Ed25519", "kty", "OKP", "x", Base64Url.encode(x)));
        this.x = x;
        this.d = d;
        this.verifier = verifier;
        this.signer = signer;
    }

    /**
     * Which implementation signs and verifies every Ed25519 key of this process: {@code "BouncyCastle"} when
     * {@code bcprov} is on the class path and passes an RFC 8032 self-test (1.87 is the version tested),
     * {@code "JDK"} when it is not or when the system property {@code dev.mrtrstate.ed25519} is {@code jdk}. Chosen once, when the first Ed25519 key is loaded,
     * and logged then at level {@code FINE} on the logger {@code dev.mrtrstate.keys.ed25519}.
     *
     * @return {@code "BouncyCastle"} or {@code "JDK"}
     */
    public static String implementation() {
        return Ed25519Engine.DEFAULT.name();
    }

    /**
     * Whether {@code secret} is this key's public key x or its private key d, compared in constant time: no
     * {@code oct} key of a ring may hold either (profile 7.6; issue 32, D4).
     */
    boolean hasBytes(byte[] secret) {
        boolean publicBytes = MessageDigest.isEqual(secret, x);
        boolean privateBytes = d != null && MessageDigest.isEqual(secret, d);
        return publicBytes | privateBytes;
    }

    static Ed25519Key of(byte[] x, byte[] d, String kid) {
        return of(x, d, kid, Ed25519Engine.DEFAULT);
    }

    /** A key computed by {@code engine} (the tests compare the engines). */
    static Ed25519Key of(byte[] x, byte[] d, String kid, Ed25519Engine engine) {
        if (x.length != 32) {
            throw new KeyringException("an Ed25519 JWK's 'x' must be 32 bytes");
        }
        String problem = Ed25519Point.problem(x);
        if (problem != null) {
            throw new KeyringException(problem);
        }
        Ed25519Engine.Verifier verifier = engine.verifier(x);
        Ed25519Engine.Signer signer = null;
        if (d != null) {
            if (d.length != 32) {
                throw new KeyringException("an Ed25519 JWK's 'd' must be 32 bytes");
            }
            // Signing uses the public key derived from d (the JDK) or given as x (BouncyCastle): either way x
            // must be that public key, and a key whose x is not is refused here.
            signer = engine.signer(d, x, verifier);
        }
        return new Ed25519Key(x.clone(), d == null ? null : d.clone(), verifier, signer, kid);
    }

    static Ed25519Key generate() {
        try {
            KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
            byte[] d = ((EdECPrivateKey) pair.getPrivate()).getBytes().orElseThrow();
            EdECPoint point = ((EdECPublicKey) pair.getPublic()).getPoint();
            return of(encode(point), d, null);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every Java 17 runtime has Ed25519", e);
        }
    }

    /** The RFC 8032 encoding of a point: y little-endian, the oddness of x in the top bit. */
    private static byte[] encode(EdECPoint point) {
        byte[] bigEndian = point.getY().toByteArray();
        byte[] out = new byte[32];
        for (int i = 0; i < bigEndian.length && i < 32; i++) {
            out[i] = bigEndian[bigEndian.length - 1 - i];
        }
        if (point.isXOdd()) {
            out[31] |= (byte) 0x80;
        }
        return out;
    }

    @Override
    public KeyAlgorithm algorithm() {
        return KeyAlgorithm.EDDSA;
    }

    @Override
    public boolean canSeal() {
        return signer != null;
    }

    @Override
    public String thumbprint() {
        return thumbprintOf("crv", "Ed25519", "kty", "OKP", "x", Base64Url.encode(x));
    }

    /** {@return whether the key holds its private half} */
    public boolean isPrivate() {
        return signer != null;
    }

    /** {@return this key without its private half: a verify-only key} */
    public Ed25519Key publicOnly() {
        return new Ed25519Key(x, null, verifier, null, kid());
    }

    @Override
    public Map<String, String> publicJwk() {
        Map<String, String> jwk = new LinkedHashMap<>();
        jwk.put("kty", "OKP");
        jwk.put("crv", "Ed25519");
        jwk.put("alg", "EdDSA");
        jwk.put("use", "sig");
        jwk.put("kid", kid());
        jwk.put("x", Base64Url.encode(x));
        return jwk;
    }

    @Override
    public Map<String, String> privateJwk() {
        Map<String, String> jwk = publicJwk();
        if (d != null) {
            jwk.put("d", Base64Url.encode(d));
        }
        return jwk;
    }

    /**
     * The Ed25519 signature of {@code message}.
     *
     * @param message the signing input
     * @return the 64-byte signature
     * @throws KeyringException for a public key, which cannot sign
     */
    public byte[] sign(byte[] message) {
        if (signer == null) {
            throw new KeyringException("key " + kid() + " is an Ed25519 public key and cannot sign");
        }
        return signer.sign(message);
    }

    /**
     * Whether {@code signature} is a valid signature of {@code message} under this key.
     *
     * @param message the signing input
     * @param signature the decoded signature (64 bytes)
     * @return true when it verifies
     */
    public boolean verify(byte[] message, byte[] signature) {
        return signature.length == 64 && verifier.verify(message, signature);
    }
}
