package dev.mrtrstate.keys;

import dev.mrtrstate.token.Base64Url;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** An HS256 secret (profile, section 7.1): the JDK's {@code HmacSHA256}. Never published. */
public final class Hs256Key extends Key {
    private final byte[] secret;
    private final SecretKeySpec macKey;
    /** One initialized Mac per thread; doFinal resets it for the next message. */
    private final ThreadLocal<Mac> macs;

    Hs256Key(byte[] secret, String kid) {
        super(kid != null ? kid : thumbprintOf("k", Base64Url.encode(secret), "kty", "oct"));
        if (secret.length < MIN_SECRET_BYTES) {
            throw new KeyringException("an HS256 secret must be at least " + MIN_SECRET_BYTES + " bytes, this one is "
                    + secret.length + "; generate one with Keyring.generate or `mrtr-state keygen`");
        }
        checkNotRepeated(secret);
        this.secret = secret;
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

    @Override
    public KeyAlgorithm algorithm() {
        return KeyAlgorithm.HS256;
    }

    @Override
    public boolean canSeal() {
        return true;
    }

    @Override
    public String thumbprint() {
        return thumbprintOf("k", Base64Url.encode(secret), "kty", "oct");
    }

    @Override
    public Map<String, String> publicJwk() {
        throw new KeyringException("key " + kid() + " is an HS256 secret, which has no public JWK");
    }

    @Override
    public Map<String, String> privateJwk() {
        Map<String, String> jwk = new LinkedHashMap<>();
        jwk.put("kty", "oct");
        jwk.put("alg", "HS256");
        jwk.put("use", "sig");
        jwk.put("kid", kid());
        jwk.put("k", Base64Url.encode(secret));
        return jwk;
    }

    @Override
    byte[] secret() {
        return secret;
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
