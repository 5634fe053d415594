package mrtrstate.interop;

/**
 * A token refused by the validation procedure, with the profile's reason code (spec/profile.md, section 6).
 *
 * <p>Callers switch on {@link #reason()}; {@link #getMessage()} is a log-safe note that never holds the token,
 * a claim value, the state or key material.
 */
final class Refusal extends Exception {
    private static final long serialVersionUID = 1L;

    private final String reason;

    Refusal(String reason, String detail) {
        super(detail, null, false, false);
        this.reason = reason;
    }

    /** The reason code, e.g. {@code "bad_signature"}. */
    String reason() {
        return reason;
    }
}
