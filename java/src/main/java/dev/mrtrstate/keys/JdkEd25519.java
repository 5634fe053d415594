package dev.mrtrstate.keys;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.EdECPoint;
import java.security.spec.EdECPrivateKeySpec;
import java.security.spec.EdECPublicKeySpec;
import java.security.spec.NamedParameterSpec;

/**
 * Ed25519 on the JDK's own {@code Signature("Ed25519")} (SunEC, Java 15 and later): no dependency. One
 * initialized Signature per thread and key: the JDK's initSign derives the public key from d (a scalar
 * multiplication) and initVerify decodes the point, so doing either per token would cost more than the
 * signature itself. A Signature resets to its initialized state after each sign or verify.
 */
final class JdkEd25519 extends Ed25519Engine {
    private static final byte[] PROBE = "mrtr-state: x is the public key of d".getBytes(StandardCharsets.US_ASCII);

    @Override
    String name() {
        return "JDK";
    }

    @Override
    Verifier verifier(byte[] x) {
        PublicKey publicKey;
        try {
            publicKey = KeyFactory.getInstance("Ed25519").generatePublic(new EdECPublicKeySpec(
                    NamedParameterSpec.ED25519, new EdECPoint(Ed25519Point.xOdd(x), Ed25519Point.y(x))));
        } catch (GeneralSecurityException e) {
            throw Key.unusable("an Ed25519 JWK's 'x' is not a valid public key", e);
        }
        ThreadLocal<Signature> verifiers = ThreadLocal.withInitial(() -> {
            try {
                Signature verifier = Signature.getInstance("Ed25519");
                verifier.initVerify(publicKey);
                return verifier;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("cannot verify with an Ed25519 key", e);
            }
        });
        return (message, signature) -> {
            Signature verifier = verifiers.get();
            try {
                verifier.update(message);
                return verifier.verify(signature);
            } catch (GeneralSecurityException e) {
                verifiers.remove(); // start the next verification from a fresh object
                return false; // the JDK throws for an S of L or more: it does not verify
            }
        };
    }

    @Override
    Signer signer(byte[] d, byte[] x, Verifier verifier) {
        PrivateKey privateKey;
        try {
            privateKey = KeyFactory.getInstance("Ed25519")
                    .generatePrivate(new EdECPrivateKeySpec(NamedParameterSpec.ED25519, d));
            // The JDK signs with the public key it derives from d: the signature verifies under x only when
            // x is that public key.
            Signature probe = Signature.getInstance("Ed25519");
            probe.initSign(privateKey);
            probe.update(PROBE);
            if (!verifier.verify(PROBE, probe.sign())) {
                throw new KeyringException("an Ed25519 JWK's 'x' is not the public key of its 'd'");
            }
        } catch (GeneralSecurityException e) {
            throw Key.unusable("an Ed25519 JWK's 'd' is not a valid private key", e);
        }
        ThreadLocal<Signature> signers = ThreadLocal.withInitial(() -> {
            try {
                Signature signer = Signature.getInstance("Ed25519");
                signer.initSign(privateKey);
                return signer;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("cannot sign with an Ed25519 key", e);
            }
        });
        return message -> {
            Signature signer = signers.get();
            try {
                signer.update(message);
                return signer.sign();
            } catch (GeneralSecurityException e) {
                signers.remove();
                throw new IllegalStateException("cannot sign with an Ed25519 key", e);
            }
        };
    }
}
