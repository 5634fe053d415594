/**
 * Minting (section 4) with jose's `SignJWT` (or `EncryptJWT` for an A256GCM key, jwe.ts): the header
 * exactly {alg, typ, kid} ({alg, enc, typ, kid} when encrypted), the closed claim set, and the checks
 * the profile asks of a minter before it signs.
 */

import { SignJWT } from "jose";

import * as b64 from "./b64.js";
import { ENCRYPTION_ALG, encrypt } from "./jwe.js";
import { argumentsDigest } from "./digest.js";
import type { RingKey } from "./keys.js";
import { DEFAULT_MAX_TOKEN_BYTES, MAX_STATE_DEPTH, TYP, audienceOf, type Target } from "./profile.js";
import type { Json } from "./strict-json.js";

/** What to mint: the key, the minter's identity, the request, the clock and the state. */
export interface MintRequest {
  readonly key: RingKey;
  readonly issuer: string;
  readonly user: string;
  readonly target: Target;
  /** The request's arguments; without them the token is not bound to arguments (no args_sha256). */
  readonly arguments?: { readonly [name: string]: Json } | undefined;
  /** The minter's clock, in whole seconds since the epoch. */
  readonly now: number;
  readonly ttl: number;
  readonly state: Json;
  /** The token id; 16 fresh random bytes when absent. */
  readonly jti?: string | undefined;
}

/** A request the profile forbids a minter to sign (a programming error, not a token). */
export class MintError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MintError";
  }
}

/** Mint the token for `request`. */
export async function mint(request: MintRequest): Promise<string> {
  checkState(request.state, 0);
  // The claims set of section 3.2 (member order is free, section 4), the same for both forms.
  const payload: { [name: string]: Json } = {
    iss: request.issuer,
    sub: request.user,
    aud: audienceOf(request.target),
    iat: request.now,
    exp: request.now + request.ttl,
    jti: request.jti ?? b64.encode(crypto.getRandomValues(new Uint8Array(16))),
    state: request.state,
  };
  if (request.arguments !== undefined) {
    const digest = argumentsDigest(request.arguments);
    if (digest === undefined) {
      throw new MintError("the arguments are unbindable: an integer beyond 2^53 - 1 (pass such ids as strings), or no RFC 8785 form");
    }
    payload.args_sha256 = digest;
  }
  const { key } = request;
  const token =
    key.alg === ENCRYPTION_ALG
      ? await encrypt(payload, key) // the encrypted form (jwe.ts)
      : await new SignJWT(payload).setProtectedHeader({ alg: key.alg, typ: TYP, kid: key.kid }).sign(key.material);
  if (token.length > DEFAULT_MAX_TOKEN_BYTES) {
    // The token is ASCII, so its length is its size in bytes.
    throw new MintError(`the token would be longer than ${DEFAULT_MAX_TOKEN_BYTES} bytes; keep less in the state`);
  }
  return token;
}

/**
 * A state every language reads back exactly (section 3.3): finite numbers, no integer literal beyond
 * 2^53 - 1 in what JSON.stringify writes, well-formed Unicode (JSON.stringify would write a lone
 * surrogate as an escape), at most 32 levels of nesting. Integer literals beyond 2^53 - 1 in the text
 * the state was read from cannot be seen in a JavaScript value; the caller checks those.
 */
function checkState(value: Json, depth: number): void {
  if (typeof value === "string") {
    if (!value.isWellFormed()) throw new MintError("the state holds a lone surrogate, which is not valid Unicode");
  } else if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new MintError("the state holds a non-finite number");
    // JSON.stringify writes an integral double below 1e21 as an integer literal, padding its shortest
    // digits with zeros (2^60 becomes 1152921504606847000). Beyond 2^53 - 1 that literal names another
    // integer for every reader that parses integers exactly (Python, serde_json's u64, BigInteger).
    if (Number.isInteger(value) && !Number.isSafeInteger(value) && Math.abs(value) < 1e21) {
      throw new MintError("the state holds a number JSON.stringify would write as an integer beyond 2^53 - 1");
    }
  } else if (value !== null && typeof value === "object") {
    if (depth === MAX_STATE_DEPTH) throw new MintError(`the state nests deeper than ${MAX_STATE_DEPTH} levels`);
    for (const [name, item] of Object.entries(value)) {
      if (!name.isWellFormed()) throw new MintError("the state has a member name with a lone surrogate");
      checkState(item, depth + 1);
    }
  }
}
