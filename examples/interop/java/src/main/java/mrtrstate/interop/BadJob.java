package mrtrstate.interop;

/** A job the program cannot run (unreadable JSON, a missing field, an unusable key): not a token refusal. */
final class BadJob extends Exception {
    private static final long serialVersionUID = 1L;

    BadJob(String message) {
        super(message, null, false, false);
    }
}
