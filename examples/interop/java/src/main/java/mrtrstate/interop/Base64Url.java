package mrtrstate.interop;

import java.util.Base64;

/**
 * Unpadded base64url in its canonical form only (profile, section 5, steps 2 and 3).
 *
 * <p>Nimbus's {@code Base64URL} and the JDK's URL decoder are lax: they accept padding and ignore the
 * unused low bits of the last character, so two different texts can decode to the same bytes. The profile
 * refuses every text but the one a correct encoder writes, so this check runs before anything is decoded.
 */
final class Base64Url {
    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    private Base64Url() {}

    /** Whether {@code text} is made only of the characters A-Z a-z 0-9 - _ (no '=', no white space). */
    static boolean isAlphabet(CharSequence text) {
        for (int i = 0; i < text.length(); i++) {
            if (ALPHABET.indexOf(text.charAt(i)) < 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether {@code text} (already known to use the alphabet) is the canonical encoding of its bytes: its
     * length modulo 4 is not 1, and the bits of the last character that carry no data are zero.
     */
    static boolean isCanonical(String text) {
        int rest = text.length() % 4;
        if (rest == 1) {
            return false;
        }
        if (rest == 0) {
            return true;
        }
        int unusedBits = rest == 2 ? 0x0F : 0x03; // 2 chars carry 1 byte, 3 chars carry 2 bytes
        return (ALPHABET.indexOf(text.charAt(text.length() - 1)) & unusedBits) == 0;
    }

    /** Decode text that {@link #isAlphabet} and {@link #isCanonical} accepted. */
    static byte[] decode(String canonical) {
        return DECODER.decode(canonical);
    }

    static String encode(byte[] data) {
        return ENCODER.encodeToString(data);
    }
}
