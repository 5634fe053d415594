/**
 * The encrypted form (profile, sections 3.6 and 5.1): a JWE in compact serialization with `"alg": "dir"`
 * and `"enc": "A256GCM"` under a 256-bit key of the ring, whose plaintext is the claims set of the signed
 * form. `jose` encrypts and decrypts (`CompactEncrypt`, `compactDecrypt`); the steps before decryption are
 * made here, in the profile's order, for the profile's reason codes: `jose` reads the header with
 * `JSON.parse`, accepts `zip` and other parameters, and decodes base64url laxly.
 */

import { CompactEncrypt, compactDecrypt, errors } from "jose";

import { encodeUtf8 } from "../lib/utf8.js";
import * as b64 from "./b64.js";
import { InvalidRequestState } from "../errors.js";
import type { ParsedJson } from "./json.js";
import { decodeObject, parseObject, TYP, type JsonObject } from "./jws.js";
import type { Key, Keyring } from "../keys/keyring.js";

/** The only protected header parameters of the encrypted form. */
export const ENCRYPTED_HEADER_PARAMETERS: readonly string[] = ["alg", "enc", "typ", "kid"];
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Steps 2 to 11 of section 5.1 on a five-segment token that passed step 1: the strictly parsed claims. */
export async function openEncrypted(token: string, ring: Keyring): Promise<ParsedJson & { value: JsonObject }> {
  // Profile 5.1, step 2: five segments of the base64url alphabet: the second (encrypted key) empty, the others not.
  const segments = token.split(".");
  const [header = "", encryptedKey = "", iv = "", ciphertext = "", tag = ""] = segments;
  const nonEmpty = [header, iv, ciphertext, tag];
  if (segments.length !== 5 || encryptedKey !== "" || !nonEmpty.every((segment) => b64.BASE64URL.test(segment))) {
    throw new InvalidRequestState("malformed", "the token is not five base64url segments with an empty second one");
  }
  // Profile 5.1, step 3: each non-empty segment canonical.
  if (!nonEmpty.every(b64.isCanonical)) throw new InvalidRequestState("malformed", "a segment is not canonical unpadded base64url");
  // Profile 5.1, step 4: the protected header is a strict JSON object; steps 5 to 9 follow.
  const protectedHeader = decodeObject(header, "header").value;
  const key = keyForEncryptedHeader(protectedHeader, ring);
  // Profile 5.1, step 10: IV and tag lengths, then AES-256-GCM with the protected header segment as received as the AAD.
  if (b64.decode(iv).length !== IV_BYTES || b64.decode(tag).length !== TAG_BYTES) {
    throw new InvalidRequestState("bad_signature", "the IV or the tag does not have A256GCM's length");
  }
  let plaintext: Uint8Array;
  try {
    ({ plaintext } = await compactDecrypt(token, await key.verifyingKey(), {
      keyManagementAlgorithms: ["dir"],
      contentEncryptionAlgorithms: ["A256GCM"],
    }));
  } catch (error) {
    if (error instanceof errors.JOSEError) throw new InvalidRequestState("bad_signature", `the token does not decrypt (${error.code})`);
    throw error;
  }
  // Profile 5.1, step 11: the plaintext is a strict JSON object.
  return parseObject(plaintext, "payload");
}

/** Steps 5 to 9 of section 5.1: allowlist, `alg` and `enc`, `typ`, `kid`, and the key's form. */
function keyForEncryptedHeader(header: JsonObject, ring: Keyring): Key {
  // Profile 5.1, step 5: only alg, enc, typ and kid.
  if (!Object.keys(header).every((name) => ENCRYPTED_HEADER_PARAMETERS.includes(name))) {
    throw new InvalidRequestState("unsupported_header", "the header has a parameter the profile forbids");
  }
  // Profile 5.1, step 6: alg dir and enc A256GCM.
  if (header.alg !== "dir" || header.enc !== "A256GCM") {
    throw new InvalidRequestState("unsupported_header", "the header's alg is not dir or its enc is not A256GCM");
  }
  // Profile 5.1, step 7: typ is exactly mrtr-state+jwt.
  if (header.typ !== TYP) throw new InvalidRequestState("wrong_type", `the header's typ is not exactly '${TYP}'`);
  // Profile 5.1, step 8: kid names a key of the ring.
  const key = typeof header.kid === "string" ? ring.get(header.kid) : undefined;
  if (key === undefined) throw new InvalidRequestState("unknown_key", "the header's kid names no key in the ring");
  // Profile 5.1, step 9: an encryption key.
  if (key.alg !== "A256GCM") throw new InvalidRequestState("algorithm_mismatch", "the header's kid names a signing key, not an encryption key");
  return key;
}

/** The encoded protected header a minter emits for `key`: `alg`, `enc`, `typ`, `kid`, in that order. */
export function headerSegment(key: Key): string {
  return b64.encode(encodeUtf8(JSON.stringify({ alg: "dir", enc: "A256GCM", typ: TYP, kid: key.kid })));
}

/** Encrypt `payload` (the claims' JSON text) under the header `{alg: dir, enc: A256GCM, typ, kid}` of `key`. */
export async function encrypt(key: Key, payload: string): Promise<string> {
  return new CompactEncrypt(encodeUtf8(payload))
    .setProtectedHeader({ alg: "dir", enc: "A256GCM", typ: TYP, kid: key.kid })
    .encrypt(await key.signingKey());
}
