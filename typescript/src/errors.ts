/**
 * Refusals and their reason codes (profile, section 6), and the key error.
 *
 * Every refusal of a `requestState` is an {@link InvalidRequestState} carrying one reason code.
 * Callers switch on `reason`, never on the message. The messages are the Python library's, word for
 * word, so a client sees the same sentence whichever replica refused its state. Configuration mistakes
 * (a bad key, a bad option) are not refusals: they throw {@link KeyringError}, `TypeError` or
 * `RangeError` where the mistake is made.
 */

/**
 * Every reason code of the profile, in the order of the validation procedure, with the sentence a
 * client may be shown. The messages name no claim value, no key material and no part of the state.
 */
export const REASONS = {
  too_large: "The request state is larger than this server accepts.",
  malformed: "The request state is not a well-formed token of this profile.",
  unsupported_header: "The request state uses a header parameter or algorithm this profile forbids.",
  wrong_type: "The request state is not a token of type mrtr-state+jwt.",
  unknown_key: "The request state was signed with a key this server does not hold.",
  algorithm_mismatch: "The request state's algorithm is not the algorithm of its key.",
  bad_signature: "The request state's signature does not verify.",
  lifetime_too_long: "The request state was issued with a lifetime longer than this server allows.",
  issued_in_future: "The request state claims to be issued in the future.",
  expired: "The request state has expired; start the request again.",
  wrong_issuer: "The request state was issued by another server.",
  wrong_user: "The request state belongs to another user.",
  wrong_tool: "The request state was issued for another tool, prompt or resource.",
  wrong_request: "The request state was issued for a request with other arguments.",
  replayed: "The request state has already been used.",
  store_unavailable: "The request state could not be checked for reuse; try again later.",
} as const;

/** One reason code of the profile. */
export type Reason = keyof typeof REASONS;

/** Whether `value` is one of the profile's reason codes. */
export function isReason(value: unknown): value is Reason {
  return typeof value === "string" && Object.hasOwn(REASONS, value);
}

/**
 * A `requestState` token was refused.
 *
 * `reason` is one of the codes of {@link REASONS}; `message` is the fixed sentence for that code and is
 * safe to show to the client. `detail` is a short, equally safe note for the server's log saying which
 * rule failed; it is not part of the profile.
 */
export class InvalidRequestState extends Error {
  /** The reason code. */
  readonly reason: Reason;
  /** Which rule failed, for the server's log; never a claim value, the token or key material. */
  readonly detail: string;

  constructor(reason: Reason, detail = "") {
    if (!isReason(reason)) throw new RangeError(`unknown reason code ${JSON.stringify(reason)}`);
    super(REASONS[reason]);
    this.name = "InvalidRequestState";
    this.reason = reason;
    this.detail = detail;
  }
}

/**
 * A key or key ring cannot be used: a bad JWK, a short or non-random secret, no signing key, ...
 *
 * Thrown when keys are loaded or a ring is built, never while opening a token. The message says what
 * is wrong and how to fix it, and never holds key material.
 */
export class KeyringError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KeyringError";
  }
}
