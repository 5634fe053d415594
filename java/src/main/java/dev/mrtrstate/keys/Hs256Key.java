package dev.mrtrstate.keys;

import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** An HS256 secret (profile, section 7.1): the JDK's {@code HmacSHA256}. Never published. */
public final class Hs256Key extends OctKey {
    private final SecretKeySpec macKey;
    /** One initialized Mac per thread; doFinal resets it for the next message. */
    private final ThreadLocal<Mac> macs;

    Hs256Key(byte[] secret, String kid) {
        super(secret, kid, lengthProblem(secret.length), "sig", "an HS256 secret");
        this.macKey = new SecretKeySpec(secret, "HmacSHA256");
        this.macs = ThreadLocal.withInitial(() -> {
            try {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(macKey);
                return mac;
            } catch (GeneralSecurityException e) {
                throw new IllegalStateException("every Java runtime has HmacSHA256", e);
            }
        });
    }

    /** Profile 7.1: an HS256 secret has at least 32 bytes. */
    private static String lengthProblem(int length) {
        return length >= MIN_SECRET_BYTES ? null : "an HS256 secret must be at least " + MIN_SECRET_BYTES
                + " bytes, this one is " + length + "; generate one with Keyring.generate or `mrtr-state keygen`";
    }

    @Override
    public KeyAlgorithm algorithm() {
        return KeyAlgorithm.HS256;
    }

    /**
     * The HMAC-SHA256 of {@code message}.
     *
     * @param message the signing input
     * @return the 32-byte MAC
     */
    public byte[] sign(byte[] message) {
        return macs.get().doFinal(message);
    }

    /**
     * Whether {@code signature} is the MAC of {@code message}, compared in constant time.
     *
     * @param message the signing input
     * @param signature the decoded signature
     * @return true when it verifies
     */
    public boolean verify(byte[] message, byte[] signature) {
        return signature.length == 32 && MessageDigest.isEqual(sign(message), signature);
    }
}
