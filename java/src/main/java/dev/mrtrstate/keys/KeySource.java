package dev.mrtrstate.keys;

/**
 * Where a sealer finds its keys: a fixed ring, or keys that change while the server runs (a remote JWKS, a
 * reloaded file). Implementations are thread-safe; each call answers with the keys held at that moment.
 */
public interface KeySource {
    /**
     * The key that seals new tokens: the first of the ring.
     *
     * @return the signing (or encryption) key
     * @throws KeyringException when the source cannot seal (a verify-only ring of public keys)
     */
    Key signingKey();

    /**
     * The key with this id.
     *
     * @param kid a key id
     * @return the key, or null
     */
    Key get(String kid);

    /**
     * Called when a token names a key the source does not hold: a source that can fetch new keys (a remote
     * JWKS) may do so now, within its own rate limit.
     *
     * @return true when the keys may have changed and the lookup is worth repeating
     */
    default boolean refreshForUnknownKey() {
        return false;
    }
}
