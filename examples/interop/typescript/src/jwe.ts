/**
 * The encrypted form (spec/profile.md: JWE compact, `"alg": "dir"`, `"enc": "A256GCM"`) with jose.
 *
 * jose gives the decryption (`compactDecrypt`: AES-256-GCM with the protected header segment as
 * received as the AAD, and the tag check), the claim checks of steps 16 to 18 on the decrypted
 * claims (`jwtDecrypt`, with the same options `jwtVerify` gets for a signed token), and the
 * encryption (`EncryptJWT`, with a fresh random 96-bit IV). What this file adds before jose sees the
 * token, because jose does not check it or reports it with another reason:
 * - five segments with an empty encrypted key, each canonical base64url (`compactDecrypt` accepted
 *   a padded tag and one with non-zero unused bits);
 * - the protected header as strict JSON (`JSON.parse` keeps the last duplicate) holding exactly
 *   alg, enc, typ and kid (`compactDecrypt` accepted any other member, and `zip`: it inflates a
 *   compressed plaintext), `dir` and `A256GCM`, `typ` exactly;
 * - the kid lookup and the key's form (an HS256 secret is bytes too, and jose would use it);
 * - the IV and tag lengths, which jose refuses as `JWEInvalid`, where the profile says bad_signature.
 * The decrypted claims then go through the same steps 11 to 19 as a signed token's (verify.ts).
 */

import { EncryptJWT, compactDecrypt, errors, importJWK, jwtDecrypt, type JWTPayload } from "jose";

import * as b64 from "./b64.js";
import type { RingKey, Ring } from "./keys.js";
import { Refusal, TYP, type Reason } from "./profile.js";
import { isObject, parseStrictJson, type Json } from "./strict-json.js";

/** The algorithm of an encryption key (the `alg` of its JWK). */
export const ENCRYPTION_ALG = "A256GCM";

/** The only protected header parameters an encrypted token may carry (step 5). */
const HEADER_PARAMETERS: readonly string[] = ["alg", "enc", "typ", "kid"];
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const MAX_HEADER_DEPTH = 33;

/** The options jose's JWT functions get for steps 14 to 18 (shared with the signed form). */
export type ClaimOptions = Parameters<typeof jwtDecrypt>[2] & Parameters<typeof import("jose").jwtVerify>[2];

/** What decryption gives the claim steps: the claims text and jose's verdict on iss, sub and aud. */
export interface Decrypted {
  readonly claims: Uint8Array;
  readonly claimError: unknown;
}

/** An A256GCM key from the bytes of its JWK's `k`: exactly 32 bytes, imported by jose. */
export async function importEncryptionKey(secret: Uint8Array, k: string): Promise<Omit<RingKey, "kid">> {
  if (secret.length !== KEY_BYTES) throw new Error(`an A256GCM key must be exactly ${KEY_BYTES} bytes`);
  return { alg: ENCRYPTION_ALG, material: await importJWK({ kty: "oct", k }, "dir") };
}

function refuse(reason: Reason, detail: string): never {
  throw new Refusal(reason, detail);
}

/**
 * Steps 2 to 10 of the encrypted form for a token of five segments (step 1 has passed); then jose's
 * claim checks on the decrypted claims, whose verdict the shared claim steps use in their order.
 */
export async function decrypt(token: string, segments: readonly string[], ring: Ring, options: ClaimOptions): Promise<Decrypted> {
  // 2. Five segments of the base64url alphabet; the encrypted key (the second) is empty for dir.
  if (!segments.every((segment, i) => (i === 1 ? segment === "" : b64.BASE64URL.test(segment)))) {
    refuse("malformed", "the token is not five base64url segments with an empty encrypted key");
  }
  // 3. Each segment canonical.
  if (!segments.every((segment) => segment === "" || b64.isCanonical(segment))) {
    refuse("malformed", "a segment is not canonical base64url");
  }
  const [headerSegment = "", , ivSegment = "", , tagSegment = ""] = segments;
  // 4. The protected header is a strict JSON object.
  let header: Json;
  try {
    header = parseStrictJson(b64.decode(headerSegment), { maxDepth: MAX_HEADER_DEPTH, iJson: true }).value;
  } catch {
    refuse("malformed", "the header is not strict UTF-8 JSON");
  }
  if (!isObject(header)) refuse("malformed", "the header is not a JSON object");
  // 5. Only alg, enc, typ and kid.
  if (!Object.keys(header).every((name) => HEADER_PARAMETERS.includes(name))) {
    refuse("unsupported_header", "the header has a parameter the profile forbids");
  }
  // 6. dir and A256GCM.
  if (header.alg !== "dir" || header.enc !== ENCRYPTION_ALG) refuse("unsupported_header", "alg is not dir or enc is not A256GCM");
  // 7. typ exactly.
  if (header.typ !== TYP) refuse("wrong_type", `typ is not exactly ${TYP}`);
  // 8. kid names a key of the ring.
  const key = typeof header.kid === "string" ? ring.get(header.kid) : undefined;
  if (key === undefined) refuse("unknown_key", "kid names no key in the ring");
  // 9. The key is an encryption key: a signing key never decrypts.
  if (key.alg !== ENCRYPTION_ALG) refuse("algorithm_mismatch", "kid names a signing key");
  // 10. The IV and tag lengths, then jose decrypts and checks the tag.
  if (b64.decode(ivSegment).length !== IV_BYTES || b64.decode(tagSegment).length !== TAG_BYTES) {
    refuse("bad_signature", "the IV is not 12 bytes or the tag is not 16 bytes");
  }
  const algorithms = { keyManagementAlgorithms: ["dir"], contentEncryptionAlgorithms: [ENCRYPTION_ALG] };
  let claims: Uint8Array;
  try {
    claims = (await compactDecrypt(token, key.material, algorithms)).plaintext;
  } catch (error) {
    if (error instanceof errors.JWEDecryptionFailed) refuse("bad_signature", "the tag does not verify: the token was changed");
    throw error; // any other error is jose disagreeing about a token that passed steps 1 to 9
  }
  // jose's verdict on the claims, as jwtVerify gives it for a signed token.
  let claimError: unknown;
  try {
    await jwtDecrypt(token, key.material, { ...options, ...algorithms });
  } catch (error) {
    claimError = error;
  }
  return { claims, claimError };
}

/** The compact JWE of `payload` (the complete claims set) under an A256GCM key. */
export async function encrypt(payload: JWTPayload, key: RingKey): Promise<string> {
  return new EncryptJWT(payload)
    .setProtectedHeader({ alg: "dir", enc: ENCRYPTION_ALG, typ: TYP, kid: key.kid })
    .encrypt(key.material);
}
