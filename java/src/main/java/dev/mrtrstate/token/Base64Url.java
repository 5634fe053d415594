package dev.mrtrstate.token;

import java.util.Base64;

/**
 * Unpadded base64url in its canonical form only (profile, section 5, steps 2 and 3).
 *
 * <p>The JDK's URL decoder is lax: it accepts padding and ignores the unused low bits of the last character, so
 * two texts could decode to the same bytes. The profile refuses every text but the one a correct encoder writes,
 * so {@link #decodeCanonical} checks before it decodes.
 */
public final class Base64Url {
    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();
    private static final byte[] VALUES = new byte[128];

    static {
        java.util.Arrays.fill(VALUES, (byte) -1);
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        for (int i = 0; i < alphabet.length(); i++) {
            VALUES[alphabet.charAt(i)] = (byte) i;
        }
    }

    private Base64Url() {}

    /**
     * Whether {@code text} is made only of A-Z a-z 0-9 - _ (no '=', no white space).
     *
     * @param text the text
     * @return true when every character is of the alphabet
     */
    public static boolean isAlphabet(CharSequence text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c >= 128 || VALUES[c] < 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether {@code text}, already of the alphabet, is the canonical encoding of its bytes: its length modulo 4
     * is not 1, and the bits of its last character that carry no data are zero.
     *
     * @param text base64url text
     * @return true when canonical
     */
    public static boolean isCanonical(CharSequence text) {
        int rest = text.length() % 4;
        if (rest == 1) {
            return false;
        }
        if (rest == 0) {
            return true;
        }
        int unusedBits = rest == 2 ? 0x0F : 0x03; // 2 chars carry 1 byte, 3 chars carry 2 bytes
        return (VALUES[text.charAt(text.length() - 1)] & unusedBits) == 0;
    }

    /**
     * Decode canonical unpadded base64url.
     *
     * @param text the text
     * @return its bytes, or null when the text is not canonical unpadded base64url
     */
    public static byte[] decodeCanonical(String text) {
        if (!isAlphabet(text) || !isCanonical(text)) {
            return null;
        }
        return DECODER.decode(text);
    }

    /**
     * Decode text already checked by {@link #isAlphabet} and {@link #isCanonical}.
     *
     * @param canonical the text
     * @return its bytes
     */
    public static byte[] decode(String canonical) {
        return DECODER.decode(canonical);
    }

    /**
     * Encode bytes as unpadded base64url.
     *
     * @param data the bytes
     * @return the text
     */
    public static String encode(byte[] data) {
        return ENCODER.encodeToString(data);
    }
}
