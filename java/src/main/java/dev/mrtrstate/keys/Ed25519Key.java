package dev.mrtrstate.keys;

import dev.mrtrstate.token.Base64Url;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.interfaces.EdECPrivateKey;
import java.security.interfaces.EdECPublicKey;
import java.security.spec.EdECPoint;
import java.security.spec.EdECPrivateKeySpec;
import java.security.spec.EdECPublicKeySpec;
import java.security.spec.NamedParameterSpec;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An Ed25519 key (profile, section 7.2) on the JDK's own EdDSA ({@code Signature "Ed25519"}, Java 15 and later).
 * The JDK does not check a public key's encoding or order, so {@link Ed25519Point} does that when the key is
 * loaded. A key without its private half only verifies (a verify-only replica).
 */
public final class Ed25519Key extends Key {
    private static final byte[] PROBE = "mrtr-state: x is the public key of d".getBytes(StandardCharsets.US_ASCII);

    private final byte[] x;
    private final PublicKey publicKey;
    private final PrivateKey privateKey;
    private final byte[] d;
    /**
     * One initialized Signature per thread: the JDK's initSign derives the public key from d (a scalar
     * multiplication) and initVerify decodes the point, so doing either per token would cost more than the
     * signature itself. A Signature resets to its initialized state after each sign or verify.
     */
    private final ThreadLocal<Signature> signers;
    private final ThreadLocal<Signature> verifiers;

    private Ed25519Key(byte[] x, PublicKey publicKey, PrivateKey privateKey, byte[] d, String kid) {
        super(kid != null ? kid : thumbprintOf("crv", "Ed25519", "kty", "OKP", "x", Base64Url.encode(x)));
        this.x = x;
        this.publicKey = publicKey;
        this.privateKey = privateKey;
        this.d = d;
        this.signers = ThreadLocal.withInitial(() -> {
            try {
                Signature signer = Signature.getInstance("Ed25519");
                signer.initSign(privateKey);
                return signer;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("cannot sign with an Ed25519 key", e);
            }
        });
        this.verifiers = ThreadLocal.withInitial(() -> {
            try {
                Signature verifier = Signature.getInstance("Ed25519");
                verifier.initVerify(publicKey);
                return verifier;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("cannot verify with an Ed25519 key", e);
            }
        });
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
        if (x.length != 32) {
            throw new KeyringException("an Ed25519 JWK's 'x' must be 32 bytes");
        }
        String problem = Ed25519Point.problem(x);
        if (problem != null) {
            throw new KeyringException(problem);
        }
        PublicKey publicKey;
        try {
            publicKey = KeyFactory.getInstance("Ed25519").generatePublic(new EdECPublicKeySpec(
                    NamedParameterSpec.ED25519, new EdECPoint(Ed25519Point.xOdd(x), Ed25519Point.y(x))));
        } catch (GeneralSecurityException e) {
            throw unusable("an Ed25519 JWK's 'x' is not a valid public key", e);
        }
        PrivateKey privateKey = null;
        if (d != null) {
            if (d.length != 32) {
                throw new KeyringException("an Ed25519 JWK's 'd' must be 32 bytes");
            }
            try {
                privateKey = KeyFactory.getInstance("Ed25519")
                        .generatePrivate(new EdECPrivateKeySpec(NamedParameterSpec.ED25519, d));
                // The JDK signs with the public key it derives from d: the signature verifies under x only when
                // x is that public key.
                Signature signer = Signature.getInstance("Ed25519");
                signer.initSign(privateKey);
                signer.update(PROBE);
                Signature verifier = Signature.getInstance("Ed25519");
                verifier.initVerify(publicKey);
                verifier.update(PROBE);
                if (!verifier.verify(signer.sign())) {
                    throw new KeyringException("an Ed25519 JWK's 'x' is not the public key of its 'd'");
                }
            } catch (GeneralSecurityException e) {
                throw unusable("an Ed25519 JWK's 'd' is not a valid private key", e);
            }
        }
        return new Ed25519Key(x.clone(), publicKey, privateKey, d == null ? null : d.clone(), kid);
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
        return privateKey != null;
    }

    @Override
    public String thumbprint() {
        return thumbprintOf("crv", "Ed25519", "kty", "OKP", "x", Base64Url.encode(x));
    }

    /** {@return whether the key holds its private half} */
    public boolean isPrivate() {
        return privateKey != null;
    }

    /** {@return this key without its private half: a verify-only key} */
    public Ed25519Key publicOnly() {
        return new Ed25519Key(x, publicKey, null, null, kid());
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
        if (privateKey == null) {
            throw new KeyringException("key " + kid() + " is an Ed25519 public key and cannot sign");
        }
        Signature signer = signers.get();
        try {
            signer.update(message);
            return signer.sign();
        } catch (GeneralSecurityException e) {
            signers.remove();
            throw new IllegalStateException("cannot sign with an Ed25519 key", e);
        }
    }

    /**
     * Whether {@code signature} is a valid signature of {@code message} under this key.
     *
     * @param message the signing input
     * @param signature the decoded signature (64 bytes)
     * @return true when it verifies
     */
    public boolean verify(byte[] message, byte[] signature) {
        if (signature.length != 64) {
            return false;
        }
        Signature verifier = verifiers.get();
        try {
            verifier.update(message);
            return verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            verifiers.remove(); // start the next verification from a fresh object
            return false; // the JDK throws for an S of L or more: it does not verify
        }
    }
}
