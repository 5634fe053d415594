package dev.mrtrstate.keys;

/**
 * A key or a key ring cannot be used: a configuration mistake found when the key is loaded (profile, section 7),
 * never a token refusal. The message names the rule and at most the {@code kid}, never key material.
 */
public class KeyringException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /**
     * A key that cannot be used.
     *
     * @param message what is wrong, without key material
     */
    public KeyringException(String message) {
        super(message);
    }
}
