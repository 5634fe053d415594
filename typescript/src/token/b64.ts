/**
 * Unpadded base64url (RFC 7515 section 2), strict in both directions (profile, section 5, steps 2 and 3).
 *
 * Common decoders are lax (Node's `Buffer` reads `=` padding and ignores non-zero unused bits), so two
 * different texts could carry the same bytes. The strict decoder accepts exactly the texts the encoder
 * writes. Both run on standard JavaScript only, the same on every runtime.
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** A non-empty run of the base64url alphabet: no padding, no white space, nothing else. */
export const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The 6-bit value of each character code of the alphabet; -1 for every other code below 128. */
const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i;

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
  return decodeLenient(text);
}

/**
 * Decode unpadded base64url text that may carry non-zero unused bits (they are dropped), as an operator's
 * bare secret is read (`Keyring.fromEnv`, as the Python library reads it). Never for token segments.
 * `text` must match {@link BASE64URL} and not have a length of 1 modulo 4.
 */
export function decodeLenient(text: string): Uint8Array {
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let held = 0;
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    bits = (bits << 6) | (VALUES[text.charCodeAt(i)] as number);
    held += 6;
    if (held >= 8) {
      held -= 8;
      out[at++] = (bits >> held) & 0xff;
    }
  }
  return out;
}

/** Every pair of alphabet characters, by the 12 bits they carry: three bytes are two look-ups. */
const PAIRS: readonly string[] = Array.from({ length: 4096 }, (_, bits) => ALPHABET.charAt(bits >> 6) + ALPHABET.charAt(bits & 63));

/** Encode bytes as unpadded base64url. */
export function encode(bytes: Uint8Array): string {
  let text = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const group = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    text += (PAIRS[group >> 12] as string) + (PAIRS[group & 4095] as string);
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    text += PAIRS[(bytes[i] as number) << 4] as string;
  } else if (rest === 2) {
    const group = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
    text += (PAIRS[group >> 12] as string) + ALPHABET.charAt((group >> 6) & 63);
  }
  return text;
}
