package dev.mrtrstate.keys;

import java.security.GeneralSecurityException;
import java.util.Arrays;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * An encryption key of the encrypted form (profile, sections 3.6 and 7.6): {@code dir} with AES-256-GCM, the
 * JDK's {@code AES/GCM/NoPadding}. The 96-bit IV of every token comes from the system's secure random source,
 * never from a hook (decision D6). Never published.
 */
public final class A256GcmKey extends OctKey {
    /** The IV size, 96 bits. */
    public static final int IV_BYTES = 12;
    /** The tag size, 128 bits. */
    public static final int TAG_BYTES = 16;

    private final SecretKeySpec aesKey;

    A256GcmKey(byte[] secret, String kid) {
        super(secret, kid, lengthProblem(secret.length), "enc", "an A256GCM encryption key");
        this.aesKey = new SecretKeySpec(secret, "AES");
    }

    /** Profile 7.6: an A256GCM key is exactly 32 bytes. */
    private static String lengthProblem(int length) {
        return length == ENCRYPTION_KEY_BYTES ? null : "an A256GCM key must be exactly " + ENCRYPTION_KEY_BYTES
                + " bytes, this one is " + length;
    }

    /** The result of {@link #encrypt}: a fresh IV, the ciphertext and the tag. */
    public record Sealed(byte[] iv, byte[] ciphertext, byte[] tag) {
        @Override
        public String toString() {
            return "Sealed(" + ciphertext.length + " bytes)";
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Sealed s && Arrays.equals(iv, s.iv) && Arrays.equals(ciphertext, s.ciphertext)
                    && Arrays.equals(tag, s.tag);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(iv) * 31 + Arrays.hashCode(tag);
        }
    }

    @Override
    public KeyAlgorithm algorithm() {
        return KeyAlgorithm.A256GCM;
    }

    /**
     * Encrypt under a fresh random IV from the system's secure random source.
     *
     * @param plaintext the claims
     * @param aad the additional authenticated data: the ASCII bytes of the protected header segment
     * @return the IV, ciphertext and tag
     */
    public Sealed encrypt(byte[] plaintext, byte[] aad) {
        byte[] iv = new byte[IV_BYTES];
        RANDOM.nextBytes(iv);
        try {
            byte[] out = cipher(Cipher.ENCRYPT_MODE, iv, aad).doFinal(plaintext);
            return new Sealed(iv, Arrays.copyOf(out, out.length - TAG_BYTES),
                    Arrays.copyOfRange(out, out.length - TAG_BYTES, out.length));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every Java runtime has AES/GCM/NoPadding", e);
        }
    }

    /**
     * Decrypt and check the tag (in constant time, by the JDK).
     *
     * @param iv the 12-byte IV
     * @param ciphertext the ciphertext
     * @param tag the 16-byte tag
     * @param aad the protected header segment as received, in ASCII
     * @return the plaintext, or null when the tag does not verify
     */
    public byte[] decrypt(byte[] iv, byte[] ciphertext, byte[] tag, byte[] aad) {
        if (iv.length != IV_BYTES || tag.length != TAG_BYTES) {
            return null;
        }
        try {
            byte[] joined = Arrays.copyOf(ciphertext, ciphertext.length + TAG_BYTES);
            System.arraycopy(tag, 0, joined, ciphertext.length, TAG_BYTES);
            return cipher(Cipher.DECRYPT_MODE, iv, aad).doFinal(joined);
        } catch (AEADBadTagException e) {
            return null;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("every Java runtime has AES/GCM/NoPadding", e);
        }
    }

    /** AES-256-GCM set up for one message: this key, the 96-bit IV, a 128-bit tag and the AAD. */
    private Cipher cipher(int mode, byte[] iv, byte[] aad) throws GeneralSecurityException {
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(mode, aesKey, new GCMParameterSpec(TAG_BYTES * 8, iv));
        cipher.updateAAD(aad);
        return cipher;
    }
}
