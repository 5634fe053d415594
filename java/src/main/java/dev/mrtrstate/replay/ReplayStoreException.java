package dev.mrtrstate.replay;

/**
 * The replay store gave no known answer (unreachable, timed out, an error reply, full). The sealer refuses the
 * token with {@code store_unavailable}, never accepts it (profile, section 5, step 20).
 */
public class ReplayStoreException extends Exception {
    private static final long serialVersionUID = 1L;

    /**
     * A store failure.
     *
     * @param message what failed, without a token or a key
     */
    public ReplayStoreException(String message) {
        super(message);
    }

    /**
     * A store failure with its cause.
     *
     * @param message what failed, without a token or a key
     * @param cause the client's exception
     */
    public ReplayStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
