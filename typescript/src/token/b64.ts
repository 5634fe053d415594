/**
 * Unpadded base64url (RFC 7515 section 2), strict in both directions (profile, section 5, steps 2 and 3).
 *
 * Node's decoder is lax: it reads `=` padding and ignores non-zero unused bits, so two different texts
 * could carry the same bytes. The strict decoder accepts exactly the texts the encoder writes.
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** A non-empty run of the base64url alphabet: no padding, no white space, nothing else. */
export const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Whether `text` (already known to match {@link BASE64URL}) is the canonical encoding of its bytes. */
export function isCanonical(text: string): boolean {
  const rest = text.length % 4;
  if (rest === 1) return false; // no byte string encodes to this length
  if (rest === 0) return true;
  // A final group of 2 (or 3) characters carries 1 (or 2) bytes; the low 4 (or 2) bits of its last
  // character carry nothing and must be zero.
  const unusedBits = rest === 2 ? 0x0f : 0x03;
  return (ALPHABET.indexOf(text.charAt(text.length - 1)) & unusedBits) === 0;
}

/** Decode canonical unpadded base64url (the empty string included); throw `RangeError` for anything else. */
export function decode(text: string): Uint8Array {
  if (text !== "" && (!BASE64URL.test(text) || !isCanonical(text))) {
    throw new RangeError("not canonical unpadded base64url");
  }
  return new Uint8Array(Buffer.from(text, "base64url"));
}

/** Encode bytes as unpadded base64url. */
export function encode(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url");
}
