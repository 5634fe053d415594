/**
 * Unpadded base64url (RFC 7515 section 2) as the profile restricts it (steps 2 and 3).
 *
 * Node's and jose's decoders are lax: they read `=` padding and ignore non-zero unused bits, so two
 * different texts can carry the same bytes. The profile refuses every text but the canonical one,
 * so these checks run before anything is decoded.
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

/** Decode canonical base64url; throw for anything else. */
export function decode(text: string): Uint8Array {
  if (!BASE64URL.test(text) || !isCanonical(text)) {
    throw new Error("not canonical unpadded base64url");
  }
  return new Uint8Array(Buffer.from(text, "base64url"));
}

/** Encode bytes as unpadded base64url. */
export function encode(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64url");
}
