/**
 * The validation procedure of the profile (section 5), in its order, on top of jose.
 *
 * jose gives steps 9 and 10 (`algorithms` pinned to the key's algorithm, the signature) and
 * steps 16 to 18 (`issuer`, `subject`, `audience`). Everything else is added here, because jose
 * does not do it or does it differently:
 * - steps 1 to 8 come before the signature and need reason codes jose does not distinguish
 *   (its `typ` option also ignores case and an `application/` prefix, step 7 compares exactly);
 * - steps 4, 11 and 12 need the raw text: jose reads it with `JSON.parse`, which keeps the last of
 *   two duplicate members, reads `1767226140.0` as an integer, rounds an integer literal beyond
 *   2^53 - 1 to another integer, and keeps an escaped lone surrogate;
 * - steps 13 to 15 are integer comparisons made here: jose has no maximum lifetime, checks `exp`
 *   only after `iss`, `sub` and `aud` (the profile checks the times first), checks `iat` only
 *   through `maxTokenAge`, and takes its clock as a `Date`, which ends at 8.64e12 s while a
 *   NumericDate of the profile may reach 2^53 - 1;
 * - step 19 (the argument digest) is not a JWT concept.
 */

import { errors, jwtVerify } from "jose";

import * as b64 from "./b64.js";
import { argumentsDigest } from "./digest.js";
import { decrypt, type ClaimOptions } from "./jwe.js";
import type { Ring } from "./keys.js";
import {
  ALL_CLAIMS,
  HEADER_PARAMETERS,
  MAX_TEXT_DEPTH,
  REQUIRED_CLAIMS,
  Refusal,
  TYP,
  audienceOf,
  type Reason,
  type Target,
} from "./profile.js";
import { isObject, parseStrictJson, type Json, type ParsedJson } from "./strict-json.js";

/** The request being served: who asks, for what, with which arguments. */
export interface Request {
  readonly user: string;
  readonly target: Target;
  /** The request's arguments object; a request without arguments has `{}`. */
  readonly arguments: { readonly [name: string]: Json };
}

/** How the verifier is configured (section 5), and its clock. */
export interface Policy {
  readonly issuer: string;
  /** The verifier's clock, in whole seconds since the epoch. */
  readonly now: number;
  readonly maxLifetime: number;
  readonly leeway: number;
  readonly maxTokenBytes: number;
  /** Refuse a token for a tool or prompt that has no args_sha256 (step 19). */
  readonly requireArguments: boolean;
}

/** The outcome: the state of an accepted token, or the reason code of a refused one. */
export type Verdict =
  | { readonly valid: true; readonly state: Json }
  | { readonly valid: false; readonly reason: Reason };

/** Validate `token` for `request`; never throws for a bad token, only for a bug. */
export async function verify(token: unknown, ring: Ring, request: Request, policy: Policy): Promise<Verdict> {
  try {
    return { valid: true, state: await validate(token, ring, request, policy) };
  } catch (error) {
    if (error instanceof Refusal) return { valid: false, reason: error.reason };
    throw error;
  }
}

// An integer literal of 0 or more: digits with no fraction or exponent, and no sign except in `-0`,
// which is an integer literal with the value 0 (section 3.2).
const TIME = /^(?:-?0|[1-9][0-9]*)$/;
const JTI = /^[A-Za-z0-9_-]{22,64}$/;
const DIGEST = /^[A-Za-z0-9_-]{43}$/;
const MAX_DATE_SECONDS = 8.64e12; // the last second a JavaScript Date can hold

function refuse(reason: Reason, detail: string): never {
  throw new Refusal(reason, detail);
}

async function validate(token: unknown, ring: Ring, request: Request, policy: Policy): Promise<Json> {
  // 1. Size, in bytes of the UTF-8 encoding, before any decoding. A string never has more UTF-16 code
  // units than UTF-8 bytes, so `length` alone refuses most oversized input without counting.
  if (typeof token !== "string") refuse("malformed", "the token is not a string");
  if (token.length > policy.maxTokenBytes || Buffer.byteLength(token, "utf8") > policy.maxTokenBytes) {
    refuse("too_large", "the token is longer than the size cap");
  }

  // 2. Three non-empty segments of the base64url alphabet; five are the encrypted form (jwe.ts),
  // whose decrypted claims go through the same steps 11 to 19.
  const segments = token.split(".");
  if (segments.length === 5) {
    const { claims, claimError } = await decrypt(token, segments, ring, claimOptions(request, policy));
    return claimSteps(claims, claimVerdict(claimError), request, policy);
  }
  if (segments.length !== 3 || !segments.every((segment) => b64.BASE64URL.test(segment))) {
    refuse("malformed", "the token is not three base64url segments joined by '.'");
  }
  // 3. Each segment canonical: jose's decoder would read padding and non-zero unused bits.
  if (!segments.every(b64.isCanonical)) refuse("malformed", "a segment is not canonical base64url");
  const [headerSegment = "", payloadSegment = ""] = segments;

  // 4. The header is a strict JSON object (I-JSON: safe integers, no escaped lone surrogate).
  const header = strictObject(b64.decode(headerSegment), "header").value as { [name: string]: Json };
  // 5. Only alg, typ and kid: jose ignores unknown parameters (and understands crit, b64, ...).
  if (!Object.keys(header).every((name) => HEADER_PARAMETERS.includes(name))) {
    refuse("unsupported_header", "the header has a parameter the profile forbids");
  }
  // 6. alg is HS256 or EdDSA (not none, Ed25519, HS512, ...).
  if (header.alg !== "HS256" && header.alg !== "EdDSA") refuse("unsupported_header", "alg is not HS256 or EdDSA");
  // 7. typ exactly, as the decoded JSON string ("mrtr-state\u002bjwt" is the same string).
  if (header.typ !== TYP) refuse("wrong_type", `typ is not exactly ${TYP}`);
  // 8. kid names a key of the ring.
  const key = typeof header.kid === "string" ? ring.get(header.kid) : undefined;
  if (key === undefined) refuse("unknown_key", "kid names no key in the ring");

  // 9 and 10: jose, with the algorithm pinned to the key (never chosen by the token), checks the
  // signature; then it compares iss, sub and aud (steps 16 to 18) and exp. Its verdict on the
  // claims is used only after the profile's earlier steps, below.
  let claimError: unknown;
  try {
    await jwtVerify(token, key.material, { ...claimOptions(request, policy), algorithms: [key.alg] });
  } catch (error) {
    claimError = error;
  }
  return claimSteps(b64.decode(payloadSegment), claimVerdict(claimError), request, policy);
}

/** jose's options for steps 14 to 18, the same for jwtVerify (signed) and jwtDecrypt (encrypted). */
function claimOptions(request: Request, policy: Policy): ClaimOptions {
  return {
    typ: TYP, // already compared exactly in step 7; jose's comparison is looser
    issuer: policy.issuer,
    subject: request.user,
    audience: audienceOf(request.target),
    clockTolerance: policy.leeway,
    // jose always checks exp and would otherwise use the wall clock. A clock clamped to the
    // Date range is never stricter than step 15 below, which decides.
    currentDate: new Date(Math.min(policy.now, MAX_DATE_SECONDS) * 1000),
  };
}

/** jose's verdict on the claims, used by the claim steps in the profile's order; a token error refuses now. */
function claimVerdict(error: unknown): Reason | undefined {
  if (error === undefined) return undefined;
  // jose reads the claims only once the signature (or tag) has verified, so a claims error means a good one.
  if (error instanceof errors.JWTClaimValidationFailed || error instanceof errors.JWTExpired) {
    return reasonForClaimError(error);
  }
  if (error instanceof errors.JWTInvalid) return "malformed"; // claims that are not a JSON object: step 11 says so first
  return refuse(reasonForJwsError(error), "jose refused the token");
}

/** Steps 11 to 19 on the claims text of either form, with jose's verdict on the claims. */
function claimSteps(payload: Uint8Array, claimRefusal: Reason | undefined, request: Request, policy: Policy): Json {
  // 11. The claims are a strict JSON object (no duplicates, unsafe integers or escaped lone surrogates
  // at any depth, inside state too).
  const parsed = strictObject(payload, "claims");
  const claims = parsed.value as { [name: string]: Json };

  // 12. The closed claim set, each claim of its type.
  if (!Object.keys(claims).every((name) => ALL_CLAIMS.includes(name))) {
    refuse("malformed", "a claim the profile does not define");
  }
  if (!REQUIRED_CLAIMS.every((name) => Object.hasOwn(claims, name))) refuse("malformed", "a required claim is missing");
  for (const name of ["iss", "sub", "aud"]) {
    const value = claims[name];
    if (typeof value !== "string" || value === "") refuse("malformed", `${name} is not a non-empty string`);
  }
  const iat = time(parsed, "iat");
  const exp = time(parsed, "exp");
  if (exp <= iat) refuse("malformed", "exp is not after iat");
  if (typeof claims.jti !== "string" || !JTI.test(claims.jti)) refuse("malformed", "jti is not 22 to 64 base64url");
  const bound = Object.hasOwn(claims, "args_sha256");
  if (bound && (typeof claims.args_sha256 !== "string" || !DIGEST.test(claims.args_sha256))) {
    refuse("malformed", "args_sha256 is not 43 base64url characters");
  }

  // 13 to 15, in integers (written so that no sum passes 2^53).
  if (exp - iat > policy.maxLifetime) refuse("lifetime_too_long", "exp - iat exceeds the maximum lifetime");
  if (iat - policy.leeway > policy.now) refuse("issued_in_future", "iat is ahead of the clock");
  if (policy.now - policy.leeway >= exp) refuse("expired", "exp has passed");

  // 16 to 18: jose's verdict on iss, sub and aud. (Once steps 11 to 15 pass, jose can refuse
  // nothing else: its exp check with the clamped clock is never stricter than step 15.)
  if (claimRefusal !== undefined) refuse(claimRefusal, "jose refused a claim");

  // 19. The argument digest, when the token is bound to arguments; a verifier may require the binding
  // for tools and prompts (a resource read has no arguments).
  if (!bound && policy.requireArguments && !("resource" in request.target)) {
    refuse("wrong_request", "the verifier requires args_sha256, which is absent");
  }
  if (bound && argumentsDigest(request.arguments) !== claims.args_sha256) {
    refuse("wrong_request", "args_sha256 does not match the arguments");
  }
  return claims.state as Json;
}

/** Steps 4 and 11: read a decoded segment (or the decrypted claims) as a strict JSON object. */
function strictObject(text: Uint8Array, what: string): ParsedJson {
  let parsed: ParsedJson;
  try {
    parsed = parseStrictJson(text, { maxDepth: MAX_TEXT_DEPTH, iJson: true });
  } catch {
    refuse("malformed", `the ${what} is not strict UTF-8 JSON`);
  }
  if (!isObject(parsed.value)) refuse("malformed", `the ${what} is not a JSON object`);
  return parsed;
}

/** Step 12 for iat and exp: a number written as an integer literal, from 0 to 2^53 - 1. */
function time(parsed: ParsedJson, name: string): number {
  const literal = parsed.numbers.find((number) => number.path.length === 1 && number.path[0] === name);
  if (literal === undefined || !TIME.test(literal.text) || !Number.isSafeInteger(Number(literal.text))) {
    refuse("malformed", `${name} is not an integer literal from 0 to 2^53 - 1`);
  }
  return Math.abs(Number(literal.text)); // Number("-0") is -0; its value is 0
}

/** Steps 9 and 10 as jose reports them; anything else is not a verdict on the token, and is rethrown. */
function reasonForJwsError(error: unknown): Reason {
  if (error instanceof errors.JOSEAlgNotAllowed) return "algorithm_mismatch";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "bad_signature";
  if (error instanceof errors.JWSInvalid) return "malformed"; // unreachable once steps 1 to 8 have passed
  throw error;
}

/** jose's verdict on a claim (after `clockTolerance` and the clamped clock, only iss, sub or aud can fail). */
function reasonForClaimError(error: errors.JWTClaimValidationFailed | errors.JWTExpired): Reason {
  if (error instanceof errors.JWTExpired) return "expired";
  if (error.reason !== "check_failed") return "malformed"; // a claim missing or of the wrong type
  switch (error.claim) {
    case "iss":
      return "wrong_issuer";
    case "sub":
      return "wrong_user";
    case "aud":
      return "wrong_tool";
    case "typ":
      return "wrong_type";
    case "iat":
      return "issued_in_future";
    default:
      return "malformed";
  }
}
