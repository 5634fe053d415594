/**
 * The names the profile fixes (spec/profile.md): typ, algorithms, header parameters, claims,
 * limits, reason codes, and how a request's target is written into `aud`.
 */

/** The `typ` header value, compared as the decoded string (section 3.1, step 7). */
export const TYP = "mrtr-state+jwt";

/** The two algorithms of the profile; `Ed25519` (RFC 9864) is not one of them in version 1. */
export type Alg = "HS256" | "EdDSA";

/** The only header parameters a token may carry (step 5). */
export const HEADER_PARAMETERS: readonly string[] = ["alg", "typ", "kid"];

/** Claims every token carries (section 3.2). */
export const REQUIRED_CLAIMS: readonly string[] = ["iss", "sub", "aud", "iat", "exp", "jti", "state"];

/** Every claim a token may carry: the claim set is closed. */
export const ALL_CLAIMS: readonly string[] = [...REQUIRED_CLAIMS, "args_sha256"];

/** How deeply arrays and objects may nest inside `state` (section 3.3). */
export const MAX_STATE_DEPTH = 32;

/** How deeply a header or claims text may nest: the claims object around a state of 32 levels. */
export const MAX_TEXT_DEPTH = MAX_STATE_DEPTH + 1;

/** The verifier defaults of section 5. */
export const DEFAULT_MAX_LIFETIME = 600;
export const DEFAULT_LEEWAY = 0;
export const MAX_LEEWAY = 300;
export const DEFAULT_MAX_TOKEN_BYTES = 8192;

/** The reason codes of section 6, in the order of the validation steps. */
export const REASONS = [
  "too_large",
  "malformed",
  "unsupported_header",
  "wrong_type",
  "unknown_key",
  "algorithm_mismatch",
  "bad_signature",
  "lifetime_too_long",
  "issued_in_future",
  "expired",
  "wrong_issuer",
  "wrong_user",
  "wrong_tool",
  "wrong_request",
  "replayed",
  "store_unavailable",
] as const;

/** One reason code. Callers switch on it, never on a message. */
export type Reason = (typeof REASONS)[number];

/** A refused token: the reason code, and a log-safe note that never holds a claim value or key material. */
export class Refusal extends Error {
  constructor(
    readonly reason: Reason,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
    this.name = "Refusal";
  }
}

/** What the request addressed: a tool, a prompt or a resource (section 3.5). */
export type Target = { readonly tool: string } | { readonly prompt: string } | { readonly resource: string };

/** The `aud` of a target: the MCP method, a colon, and the name as the request carries it. */
export function audienceOf(target: Target): string {
  if ("tool" in target) return `tools/call:${target.tool}`;
  if ("prompt" in target) return `prompts/get:${target.prompt}`;
  return `resources/read:${target.resource}`;
}
