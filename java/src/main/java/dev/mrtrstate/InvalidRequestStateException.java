package dev.mrtrstate;

/**
 * A {@code requestState} token was refused (profile, sections 5 and 6).
 *
 * <p>Callers switch on {@link #reason()}, never on the message. {@link #getMessage()} is the fixed sentence of
 * the reason code and is safe to show to the client; {@link #detail()} is a short note for the server's log
 * naming the rule that failed. Neither ever holds the token, a claim value, the state or key material.
 */
public final class InvalidRequestStateException extends Exception {
    private static final long serialVersionUID = 1L;

    /** The profile's reason codes (section 6), in the order of the validation procedure. */
    public enum Reason {
        /** Step 1: the token is longer than the size cap. */
        TOO_LARGE("too_large", "The request state is larger than this server accepts."),
        /** Steps 1 to 4, 11 and 12: not a well-formed token of this profile. */
        MALFORMED("malformed", "The request state is not a well-formed token of this profile."),
        /** Steps 5 and 6: a header parameter or algorithm this profile forbids. */
        UNSUPPORTED_HEADER("unsupported_header",
                "The request state uses a header parameter or algorithm this profile forbids."),
        /** Step 7: {@code typ} is not {@code mrtr-state+jwt}. */
        WRONG_TYPE("wrong_type", "The request state is not a token of type mrtr-state+jwt."),
        /** Step 8: the key is not in the verifier's ring. */
        UNKNOWN_KEY("unknown_key", "The request state was signed with a key this server does not hold."),
        /** Step 9: {@code alg} is not the algorithm of the named key. */
        ALGORITHM_MISMATCH("algorithm_mismatch", "The request state's algorithm is not the algorithm of its key."),
        /** Step 10: the signature (or the encrypted form's tag) does not verify. */
        BAD_SIGNATURE("bad_signature", "The request state's signature does not verify."),
        /** Step 13: the lifetime exceeds the verifier's maximum. */
        LIFETIME_TOO_LONG("lifetime_too_long",
                "The request state was issued with a lifetime longer than this server allows."),
        /** Step 14: {@code iat} is ahead of the verifier's clock. */
        ISSUED_IN_FUTURE("issued_in_future", "The request state claims to be issued in the future."),
        /** Step 15: the lifetime is over. */
        EXPIRED("expired", "The request state has expired; start the request again."),
        /** Step 16: another service minted the token. */
        WRONG_ISSUER("wrong_issuer", "The request state was issued by another server."),
        /** Step 17: the token belongs to another user. */
        WRONG_USER("wrong_user", "The request state belongs to another user."),
        /** Step 18: the token was minted for another tool, prompt or resource. */
        WRONG_TOOL("wrong_tool", "The request state was issued for another tool, prompt or resource."),
        /** Step 19: other arguments, unbindable arguments, or a required binding missing. */
        WRONG_REQUEST("wrong_request", "The request state was issued for a request with other arguments."),
        /** Step 20: the token was already redeemed. */
        REPLAYED("replayed", "The request state has already been used."),
        /** Step 20: the replay store gave no known answer; retrying with the same token may succeed. */
        STORE_UNAVAILABLE("store_unavailable",
                "The request state could not be checked for reuse; try again later.");

        private final String code;
        private final String sentence;

        Reason(String code, String sentence) {
            this.code = code;
            this.sentence = sentence;
        }

        /** {@return the profile's code, e.g. {@code "expired"}} */
        public String code() {
            return code;
        }

        /** {@return the fixed sentence for this code, safe to show to the client} */
        public String sentence() {
            return sentence;
        }

        /**
         * The reason with this code.
         *
         * @param code a code of section 6
         * @return the reason
         * @throws IllegalArgumentException for a string that is not a code of the profile
         */
        public static Reason fromCode(String code) {
            for (Reason reason : values()) {
                if (reason.code.equals(code)) {
                    return reason;
                }
            }
            throw new IllegalArgumentException("not a reason code of the profile");
        }

        @Override
        public String toString() {
            return code;
        }
    }

    private final Reason reason;
    private final String detail;

    /**
     * A refusal.
     *
     * @param reason the reason code
     * @param detail a log-safe note naming the rule that failed; it must hold no token, claim value, state or key
     */
    public InvalidRequestStateException(Reason reason, String detail) {
        super(reason.sentence(), null, false, false);
        this.reason = reason;
        this.detail = detail;
    }

    /** {@return the reason code of the refusal} */
    public Reason reason() {
        return reason;
    }

    /** {@return a short, log-safe note naming the rule that failed (not part of the profile)} */
    public String detail() {
        return detail;
    }

    @Override
    public String toString() {
        return "InvalidRequestStateException(" + reason.code() + ": " + detail + ")";
    }
}
