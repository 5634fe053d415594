package dev.mrtrstate.replay;

/**
 * Where single-use tokens are recorded (profile, section 5, step 20, and section 9.5). Implementations are
 * thread-safe and record atomically: of two concurrent redemptions of one key, exactly one is the first.
 */
public interface ReplayStore {
    /**
     * Record {@code key} until {@code expiresAt}.
     *
     * @param key the token's store key, {@link #key(String, String)}
     * @param expiresAt when the record may be forgotten, in seconds since the epoch
     * @return true the first time, false when the key was already recorded (a replay)
     * @throws ReplayStoreException when the store cannot give a known answer
     */
    boolean redeem(String key, long expiresAt) throws ReplayStoreException;

    /**
     * The store key of a token: its {@code jti} scoped by its {@code iss}. A {@code jti} holds base64url
     * characters only, so the last {@code #} separates the two and no two pairs share a key. Every language's
     * store writes this key.
     *
     * @param issuer the token's {@code iss}
     * @param jti the token's {@code jti}
     * @return {@code issuer + "#" + jti}
     */
    static String key(String issuer, String jti) {
        return issuer + "#" + jti;
    }
}
