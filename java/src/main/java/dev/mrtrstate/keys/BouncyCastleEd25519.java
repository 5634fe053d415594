package dev.mrtrstate.keys;

import java.security.MessageDigest;
import org.bouncycastle.math.ec.rfc8032.Ed25519;

/**
 * Ed25519 on BouncyCastle's lightweight RFC 8032 code ({@code org.bouncycastle.math.ec.rfc8032.Ed25519}, static
 * and stateless): the public point is decoded once per key, and signing is given the public key, so no call
 * derives it again. Loaded only when {@link Ed25519Engine} has found {@code bcprov} on the class path.
 */
final class BouncyCastleEd25519 extends Ed25519Engine {
    BouncyCastleEd25519() {
        Ed25519.precompute();
    }

    /** bcprov's version, from its jar's manifest, or "(version unknown)". */
    static String version() {
        String version = Ed25519.class.getPackage().getImplementationVersion();
        return version != null ? version : "(version unknown)";
    }

    @Override
    String name() {
        return "BouncyCastle";
    }

    @Override
    Verifier verifier(byte[] x) {
        Ed25519.PublicPoint point = Ed25519.validatePublicKeyPartialExport(x, 0);
        if (point == null) {
            throw new KeyringException("an Ed25519 JWK's 'x' is not a valid public key");
        }
        return (message, signature) -> Ed25519.verify(signature, 0, point, message, 0, message.length);
    }

    @Override
    Signer signer(byte[] d, byte[] x, Verifier verifier) {
        byte[] derived = new byte[Ed25519.PUBLIC_KEY_SIZE];
        Ed25519.generatePublicKey(d, 0, derived, 0);
        if (!MessageDigest.isEqual(derived, x)) {
            throw new KeyringException("an Ed25519 JWK's 'x' is not the public key of its 'd'");
        }
        byte[] secret = d.clone();
        byte[] publicKey = x.clone();
        return message -> {
            byte[] signature = new byte[Ed25519.SIGNATURE_SIZE];
            Ed25519.sign(secret, 0, publicKey, 0, message, 0, message.length, signature, 0);
            return signature;
        };
    }
}
