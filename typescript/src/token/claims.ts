/**
 * The claim set: what a minter writes and every rule a verifier applies to it (profile, sections 3.2
 * to 3.4 and steps 12 to 19 of section 5). It sees decoded JSON only; signatures and encoding are
 * the `jws` module's.
 */

import { digestOrUndefined } from "../binding/canonical.js";
import { InvalidRequestState } from "../errors.js";
import type { Json, ParsedJson } from "./json.js";
import type { JsonObject } from "./jws.js";

/** Claims every token carries. */
export const REQUIRED_CLAIMS: readonly string[] = ["iss", "sub", "aud", "iat", "exp", "jti", "state"];
/** Every claim a token may carry; any other member refuses the token. */
export const ALL_CLAIMS: readonly string[] = [...REQUIRED_CLAIMS, "args_sha256"];

/** A verifier accepts a `jti` of 22 to 64 base64url characters (at least 128 bits; decision K6). */
const JTI = /^[A-Za-z0-9_-]{22,64}$/;
const DIGEST = /^[A-Za-z0-9_-]{43}$/;
// An integer literal of 0 or more: digits with no fraction or exponent, and no sign except in `-0`,
// which is an integer literal with the value 0 (section 3.2).
const TIME = /^(?:-?0|[1-9][0-9]*)$/;

/** The claims a minter writes (profile, section 4), in the reference member order. */
export function build(options: {
  readonly issuer: string;
  readonly user: string;
  readonly aud: string;
  readonly iat: number;
  readonly ttl: number;
  readonly jti: string;
  readonly state: unknown;
  readonly argsSha256: string | undefined;
}): { [name: string]: unknown } {
  const claims: { [name: string]: unknown } = {
    iss: options.issuer,
    sub: options.user,
    aud: options.aud,
    iat: options.iat,
    exp: options.iat + options.ttl,
    jti: options.jti,
  };
  if (options.argsSha256 !== undefined) claims.args_sha256 = options.argsSha256;
  claims.state = options.state;
  return claims;
}

/** What the verifier knows of the retry and of itself, for steps 12 to 19. */
export interface ClaimPolicy {
  readonly now: number;
  readonly leeway: number;
  readonly maxLifetime: number;
  readonly issuer: string;
  readonly user: string;
  readonly aud: string;
  readonly arguments: unknown;
  readonly requireArguments: boolean;
}

/** The validated claims of an accepted token. */
export interface ValidClaims {
  readonly iss: string;
  readonly sub: string;
  readonly aud: string;
  readonly iat: number;
  readonly exp: number;
  readonly jti: string;
  readonly args_sha256?: string;
  readonly state: Json;
}

/** Steps 12 to 19 on the strictly parsed payload: the validated claims, or an {@link InvalidRequestState}. */
export function validate(parsed: ParsedJson & { value: JsonObject }, policy: ClaimPolicy): ValidClaims {
  const claims = parsed.value;
  // Profile 5, step 12: the claim set is closed, complete and well typed.
  if (!Object.keys(claims).every((name) => ALL_CLAIMS.includes(name))) {
    throw new InvalidRequestState("malformed", "the payload has a claim the profile does not define");
  }
  if (!REQUIRED_CLAIMS.every((name) => Object.hasOwn(claims, name))) {
    throw new InvalidRequestState("malformed", "the payload lacks a required claim");
  }
  for (const name of ["iss", "sub", "aud"]) {
    const value = claims[name];
    if (typeof value !== "string" || value === "") {
      throw new InvalidRequestState("malformed", `claim '${name}' must be a non-empty string`);
    }
  }
  const iat = time(parsed, "iat");
  const exp = time(parsed, "exp");
  if (iat === undefined || exp === undefined) {
    throw new InvalidRequestState("malformed", "claims 'iat' and 'exp' must be integers in 0..2**53-1");
  }
  if (exp <= iat) throw new InvalidRequestState("malformed", "claim 'exp' must be after 'iat'");
  if (typeof claims.jti !== "string" || !JTI.test(claims.jti)) {
    throw new InvalidRequestState("malformed", "claim 'jti' must be 22 to 64 base64url characters");
  }
  const bound = Object.hasOwn(claims, "args_sha256"); // "args_sha256": null is malformed, not absent
  if (bound && (typeof claims.args_sha256 !== "string" || !DIGEST.test(claims.args_sha256))) {
    throw new InvalidRequestState("malformed", "claim 'args_sha256' must be 43 base64url characters");
  }
  // Steps 13 to 15, in integers written so that no sum passes 2^53.
  // Profile 5, step 13: the lifetime.
  if (exp - iat > policy.maxLifetime) {
    throw new InvalidRequestState("lifetime_too_long", `the token's lifetime exceeds ${policy.maxLifetime} s`);
  }
  // Profile 5, step 14: not issued in the future.
  if (iat - policy.leeway > policy.now) throw new InvalidRequestState("issued_in_future", "claim 'iat' is in the future");
  // Profile 5, step 15: not expired.
  if (policy.now - policy.leeway >= exp) throw new InvalidRequestState("expired", "claim 'exp' has passed");
  // Profile 5, step 16: the issuer.
  if (claims.iss !== policy.issuer) throw new InvalidRequestState("wrong_issuer", "claim 'iss' is not this server");
  // Profile 5, step 17: the user.
  if (claims.sub !== policy.user) throw new InvalidRequestState("wrong_user", "claim 'sub' is not the requesting user");
  // Profile 5, step 18: the target.
  if (claims.aud !== policy.aud) throw new InvalidRequestState("wrong_tool", "claim 'aud' is not the requested target");
  // Profile 5, step 19: the request binding.
  if (bound) {
    // Arguments that cannot be canonicalized (unbindable, not JSON) cannot be the ones that were sealed.
    if (policy.arguments === undefined || digestOrUndefined(policy.arguments) !== claims.args_sha256) {
      throw new InvalidRequestState("wrong_request", "claim 'args_sha256' does not match the arguments");
    }
  } else if (policy.requireArguments) {
    throw new InvalidRequestState("wrong_request", "the token has no 'args_sha256' and this verifier requires the binding");
  }
  return claims as unknown as ValidClaims;
}

/** Step 12 for `iat` and `exp`: a number written as an integer literal, from 0 to 2^53 - 1. */
function time(parsed: ParsedJson, name: string): number | undefined {
  const literal = parsed.numbers.find((number) => number.path.length === 1 && number.path[0] === name);
  if (literal === undefined || !TIME.test(literal.text)) return undefined;
  const value = Math.abs(Number(literal.text)); // Number("-0") is -0; its value is 0
  return Number.isSafeInteger(value) ? value : undefined;
}
