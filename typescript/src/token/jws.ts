/**
 * The token format: JWS compact serialization as the profile restricts it (section 5, steps 1 to 11).
 *
 * This layer knows segments, base64url, JSON and the JOSE header; it knows nothing of claims. `jose`
 * signs and checks the signature (step 10) with the key the ring found; everything before it is done
 * here, in the profile's order, because `jose` does not do it or does it differently: it has no size
 * cap, its base64url decoder reads padding and non-zero unused bits on Node 20, it reads the header with
 * `JSON.parse` (the last duplicate wins), ignores unknown header parameters, and folds `typ` to lower
 * case with an optional `application/` prefix.
 */

import { CompactSign, compactVerify, errors } from "jose";

import { encodeUtf8, utf8Length } from "../lib/utf8.js";
import * as b64 from "./b64.js";
import { InvalidRequestState } from "../errors.js";
import { isObject, MAX_TEXT_DEPTH, parseStrictJson, type Json, type ParsedJson } from "./json.js";
import { SIGNATURE_BYTES, type Key, type Keyring } from "../keys/keyring.js";

/** The `typ` header value of the profile (explicit typing, RFC 8725 section 3.11). */
export const TYP = "mrtr-state+jwt";

/** The only header parameters a token may carry; everything else (`crit`, `b64`, `jku`, `x5c`, ...) is refused. */
export const HEADER_PARAMETERS: readonly string[] = ["alg", "typ", "kid"];

/** A JSON object as the strict reader returns it. */
export type JsonObject = { [name: string]: Json };

/** Step 1, for both forms: the token is a string of at most `maxBytes` UTF-8 bytes. */
export function checkSize(token: unknown, maxBytes: number): asserts token is string {
  if (typeof token !== "string") throw new InvalidRequestState("malformed", "the token is not a string");
  // Profile 5, step 1 (and Profile 5.1, step 1): the size cap, before anything is decoded. The cap counts UTF-8 bytes; a string never has more UTF-16 code units than UTF-8 bytes, so the
  // length alone refuses most oversized input before anything is counted, and a text of at most a
  // third of the cap in code units cannot exceed it. utf8Length counts a lone surrogate as the three
  // bytes of U+FFFD, as the profile asks.
  if (token.length > maxBytes || (token.length * 3 > maxBytes && utf8Length(token) > maxBytes)) {
    throw new InvalidRequestState("too_large", `the token is longer than ${maxBytes} bytes`);
  }
}

/** Whether a token (already through step 1) is of the encrypted form: exactly five segments (section 5, step 2). */
export function isEncryptedForm(token: string): boolean {
  let dots = 0;
  for (let i = token.indexOf("."); i !== -1 && dots <= 4; i = token.indexOf(".", i + 1)) dots++;
  return dots === 4;
}

/** Steps 1 to 3: size cap, three non-empty base64url segments, each canonical. */
export function split(token: unknown, maxBytes: number): [string, string, string] {
  checkSize(token, maxBytes);
  const segments = token.split(".");
  // Profile 5, step 2: three non-empty segments of the base64url alphabet.
  if (segments.length !== 3 || !segments.every((segment) => b64.BASE64URL.test(segment))) {
    throw new InvalidRequestState("malformed", "the token is not three base64url segments joined by '.'");
  }
  // Profile 5, step 3: each segment canonical.
  if (!segments.every(b64.isCanonical)) {
    throw new InvalidRequestState("malformed", "a segment is not canonical unpadded base64url");
  }
  return segments as [string, string, string];
}

/** Steps 4 and 11: a segment (already known canonical) read as a strict UTF-8 JSON object. */
export function decodeObject(segment: string, what: "header" | "payload"): ParsedJson & { value: JsonObject } {
  return parseObject(b64.decode(segment), what);
}

/** Steps 4 and 11 on bytes: a strict UTF-8 JSON object, or `malformed`. */
export function parseObject(bytes: Uint8Array, what: "header" | "payload"): ParsedJson & { value: JsonObject } {
  let parsed: ParsedJson;
  try {
    parsed = parseStrictJson(bytes, { maxDepth: MAX_TEXT_DEPTH, iJson: true });
  } catch {
    throw new InvalidRequestState("malformed", `the ${what} is not strict UTF-8 JSON`);
  }
  if (!isObject(parsed.value)) throw new InvalidRequestState("malformed", `the ${what} is not a JSON object`);
  return parsed as ParsedJson & { value: JsonObject };
}

/** Steps 5 to 7, which need no key: allowlisted parameters, `alg`, `typ` (compared as decoded strings). */
export function checkHeader(header: JsonObject): void {
  // Profile 5, step 5: only alg, typ and kid.
  if (!Object.keys(header).every((name) => HEADER_PARAMETERS.includes(name))) {
    throw new InvalidRequestState("unsupported_header", "the header has a parameter the profile forbids");
  }
  // Profile 5, step 6: alg is HS256 or EdDSA.
  if (header.alg !== "HS256" && header.alg !== "EdDSA") {
    throw new InvalidRequestState("unsupported_header", "the header's alg is not HS256 or EdDSA");
  }
  // Profile 5, step 7: typ is exactly mrtr-state+jwt.
  if (header.typ !== TYP) throw new InvalidRequestState("wrong_type", `the header's typ is not exactly '${TYP}'`);
}

/** Steps 5 to 9: {@link checkHeader}, then `kid` names a key of the ring whose algorithm is `alg`. */
export function keyForHeader(header: JsonObject, ring: Keyring): Key {
  checkHeader(header);
  // Profile 5, step 8: kid names a key of the ring.
  const key = typeof header.kid === "string" ? ring.get(header.kid) : undefined;
  if (key === undefined) throw new InvalidRequestState("unknown_key", "the header's kid names no key in the ring");
  // Profile 5, step 9: the algorithm is the key's, never the token's choice.
  if (key.alg !== header.alg) {
    throw new InvalidRequestState("algorithm_mismatch", "the header's alg is not the algorithm of its key");
  }
  return key;
}

/** Step 10: the signature has the algorithm's length and verifies under `key` (by `jose`, pinned to the key's algorithm). */
export async function verifySignature(key: Key, token: string, signature: string): Promise<void> {
  // Profile 5, step 10: the signature's length, then the signature itself.
  if (key.alg === "A256GCM" || b64.decode(signature).length !== SIGNATURE_BYTES[key.alg]) {
    throw new InvalidRequestState("bad_signature", "the signature does not have the algorithm's length");
  }
  try {
    await compactVerify(token, await key.verifyingKey(), { algorithms: [key.alg] });
  } catch (error) {
    if (error instanceof errors.JOSEError) {
      throw new InvalidRequestState("bad_signature", `the signature does not verify (${error.code})`);
    }
    throw error;
  }
}

/** Sign `payload` (the claims' JSON text) under the header `{alg, typ, kid}` of `key`, with `jose`. */
export async function sign(key: Key, payload: string): Promise<string> {
  if (key.alg === "A256GCM") throw new TypeError("an A256GCM key encrypts (the encrypted form); it never signs");
  return new CompactSign(encodeUtf8(payload))
    .setProtectedHeader({ alg: key.alg, typ: TYP, kid: key.kid })
    .sign(await key.signingKey());
}

/** The encoded header a minter emits for `key`: `alg`, `typ`, `kid`, in that order. */
export function headerSegment(key: Key): string {
  return b64.encode(encodeUtf8(JSON.stringify({ alg: key.alg, typ: TYP, kid: key.kid })));
}

/**
 * Decode header and claims WITHOUT verifying anything: for inspection only. Nothing returned here may be
 * trusted or acted on. Throws {@link InvalidRequestState} (`too_large` or `malformed`) when the text is
 * not a compact JWS of strict JSON objects at all.
 */
export function decodeUnverified(token: unknown, options: { readonly maxBytes?: number } = {}): { header: JsonObject; claims: JsonObject } {
  const [header, payload] = split(token, options.maxBytes ?? 1 << 20);
  return { header: decodeObject(header, "header").value, claims: decodeObject(payload, "payload").value };
}
