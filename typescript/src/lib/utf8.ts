/** UTF-8 on standard APIs (`TextEncoder`, `TextDecoder`), where `Buffer` used to be. */

const encoder = new TextEncoder();

/** The UTF-8 bytes of `text`; a lone surrogate becomes U+FFFD, as `TextEncoder` writes it. */
export function encodeUtf8(text: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(text);
}

/**
 * The length of `text` in UTF-8 bytes, without encoding it: a lone surrogate counts as the three bytes
 * of U+FFFD, as the profile's size cap asks (section 5, step 1).
 */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) {
      bytes += 1;
    } else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 2; // a surrogate pair: two code units, four bytes
      i++;
    } else {
      bytes += 2;
    }
  }
  return bytes;
}

/** A buffer reused by {@link utf8Scratch}, grown as needed. */
let scratch = new Uint8Array(1024);

/**
 * The UTF-8 bytes of `text` in a buffer that the next call overwrites: for hashing at once, never to keep.
 * Saves an allocation per argument digest.
 */
export function utf8Scratch(text: string): Uint8Array {
  if (text.length * 3 > scratch.length) scratch = new Uint8Array(text.length * 3);
  const { written } = encoder.encodeInto(text, scratch);
  return scratch.subarray(0, written);
}
