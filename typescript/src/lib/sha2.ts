/**
 * SHA-256 and SHA-512 (FIPS 180-4), synchronous and on standard JavaScript only.
 *
 * Web Crypto's `digest` is asynchronous, and the places that hash are not: a key's RFC 7638 thumbprint
 * (its default `kid`, computed when the key is loaded), the argument digest (`isBindable`,
 * `argumentsDigest`), the Redis store's key, and the Ed25519 public key derived from a private key at
 * load. None of them hashes a secret an attacker can time per request (the thumbprint and the
 * derivation run once per key load), and both functions are checked against `node:crypto` in the tests.
 */

const K256 = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** The message padded to whole blocks: a 1 bit, zeros, and the bit length in the last `lengthBytes` bytes. */
function pad(message: Uint8Array, blockBytes: number, lengthBytes: number): Uint8Array {
  const total = Math.ceil((message.length + 1 + lengthBytes) / blockBytes) * blockBytes;
  const padded = new Uint8Array(total);
  padded.set(message);
  padded[message.length] = 0x80;
  const view = new DataView(padded.buffer);
  // The bit length as a big-endian integer; messages here are far below 2^53 bits.
  const bits = message.length * 8;
  view.setUint32(total - 8, Math.floor(bits / 2 ** 32));
  view.setUint32(total - 4, bits >>> 0);
  return padded;
}

/** The message schedule and the padded tail of SHA-256, reused by every call (the function never yields). */
const W = new Int32Array(64);
const TAIL = new Uint8Array(128);

/** SHA-256 of `message`. */
export function sha256(message: Uint8Array): Uint8Array {
  let h0 = 0x6a09e667 | 0, h1 = 0xbb67ae85 | 0, h2 = 0x3c6ef372 | 0, h3 = 0xa54ff53a | 0;
  let h4 = 0x510e527f | 0, h5 = 0x9b05688c | 0, h6 = 0x1f83d9ab | 0, h7 = 0x5be0cd19 | 0;
  // Whole blocks are read from the message itself; only the tail is copied, into a reused buffer, to be
  // padded: a 1 bit, zeros, and the message's length in bits in the last 8 bytes.
  const whole = message.length - (message.length % 64);
  const rest = message.length - whole;
  const tailLength = rest + 9 <= 64 ? 64 : 128;
  const tail = TAIL.fill(0, 0, tailLength);
  tail.set(message.subarray(whole));
  tail[rest] = 0x80;
  const bits = message.length * 8;
  const high = Math.floor(bits / 2 ** 32);
  const low = bits >>> 0;
  for (let i = 0; i < 4; i++) {
    tail[tailLength - 8 + i] = (high >>> (24 - 8 * i)) & 0xff;
    tail[tailLength - 4 + i] = (low >>> (24 - 8 * i)) & 0xff;
  }
  const total = whole + tailLength;
  for (let block = 0; block < total; block += 64) {
    const source = block < whole ? message : tail;
    const base = block < whole ? block : block - whole;
    for (let t = 0; t < 16; t++) {
      const i = base + 4 * t;
      W[t] = ((source[i] as number) << 24) | ((source[i + 1] as number) << 16) | ((source[i + 2] as number) << 8) | (source[i + 3] as number);
    }
    for (let t = 16; t < 64; t++) {
      const x = W[t - 15] as number;
      const y = W[t - 2] as number;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[t] = ((W[t - 16] as number) + s0 + (W[t - 7] as number) + s1) | 0;
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, k = h7;
    for (let t = 0; t < 64; t++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (k + s1 + ch + (K256[t] as number) + (W[t] as number)) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & b) ^ (a & c) ^ (b & c);
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + s0 + maj) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + k) | 0;
  }
  const out = new Uint8Array(32);
  [h0, h1, h2, h3, h4, h5, h6, h7].forEach((word, i) => {
    out[4 * i] = word >>> 24;
    out[4 * i + 1] = (word >>> 16) & 0xff;
    out[4 * i + 2] = (word >>> 8) & 0xff;
    out[4 * i + 3] = word & 0xff;
  });
  return out;
}

const MASK64 = (1n << 64n) - 1n;
const K512 = [
  "428a2f98d728ae22", "7137449123ef65cd", "b5c0fbcfec4d3b2f", "e9b5dba58189dbbc", "3956c25bf348b538", "59f111f1b605d019", "923f82a4af194f9b",
  "ab1c5ed5da6d8118", "d807aa98a3030242", "12835b0145706fbe", "243185be4ee4b28c", "550c7dc3d5ffb4e2", "72be5d74f27b896f", "80deb1fe3b1696b1",
  "9bdc06a725c71235", "c19bf174cf692694", "e49b69c19ef14ad2", "efbe4786384f25e3", "0fc19dc68b8cd5b5", "240ca1cc77ac9c65", "2de92c6f592b0275",
  "4a7484aa6ea6e483", "5cb0a9dcbd41fbd4", "76f988da831153b5", "983e5152ee66dfab", "a831c66d2db43210", "b00327c898fb213f", "bf597fc7beef0ee4",
  "c6e00bf33da88fc2", "d5a79147930aa725", "06ca6351e003826f", "142929670a0e6e70", "27b70a8546d22ffc", "2e1b21385c26c926", "4d2c6dfc5ac42aed",
  "53380d139d95b3df", "650a73548baf63de", "766a0abb3c77b2a8", "81c2c92e47edaee6", "92722c851482353b", "a2bfe8a14cf10364", "a81a664bbc423001",
  "c24b8b70d0f89791", "c76c51a30654be30", "d192e819d6ef5218", "d69906245565a910", "f40e35855771202a", "106aa07032bbd1b8", "19a4c116b8d2d0c8",
  "1e376c085141ab53", "2748774cdf8eeb99", "34b0bcb5e19b48a8", "391c0cb3c5c95a63", "4ed8aa4ae3418acb", "5b9cca4f7763e373", "682e6ff3d6b2b8a3",
  "748f82ee5defb2fc", "78a5636f43172f60", "84c87814a1f0ab72", "8cc702081a6439ec", "90befffa23631e28", "a4506cebde82bde9", "bef9a3f7b2c67915",
  "c67178f2e372532b", "ca273eceea26619c", "d186b8c721c0c207", "eada7dd6cde0eb1e", "f57d4f7fee6ed178", "06f067aa72176fba", "0a637dc5a2c898a6",
  "113f9804bef90dae", "1b710b35131c471b", "28db77f523047d84", "32caab7b40c72493", "3c9ebe0a15c9bebc", "431d67c49c100d4c", "4cc5d4becb3e42b6",
  "597f299cfc657e2a", "5fcb6fab3ad6faec", "6c44198c4a475817",
].map((hex) => BigInt(`0x${hex}`));
const H512 = ["6a09e667f3bcc908", "bb67ae8584caa73b", "3c6ef372fe94f82b", "a54ff53a5f1d36f1", "510e527fade682d1", "9b05688c2b3e6c1f", "1f83d9abfb41bd6b", "5be0cd19137e2179"].map(
  (hex) => BigInt(`0x${hex}`),
);

const rotr64 = (x: bigint, n: bigint): bigint => ((x >> n) | (x << (64n - n))) & MASK64;

/** SHA-512 of `message` (in BigInt: it runs once per Ed25519 key load, never per token). */
export function sha512(message: Uint8Array): Uint8Array {
  const h = [...H512];
  const padded = pad(message, 128, 16);
  const view = new DataView(padded.buffer);
  const w: bigint[] = new Array<bigint>(80).fill(0n);
  for (let block = 0; block < padded.length; block += 128) {
    for (let t = 0; t < 16; t++) w[t] = view.getBigUint64(block + 8 * t);
    for (let t = 16; t < 80; t++) {
      const x = w[t - 15] as bigint;
      const y = w[t - 2] as bigint;
      const s0 = rotr64(x, 1n) ^ rotr64(x, 8n) ^ (x >> 7n);
      const s1 = rotr64(y, 19n) ^ rotr64(y, 61n) ^ (y >> 6n);
      w[t] = ((w[t - 16] as bigint) + s0 + (w[t - 7] as bigint) + s1) & MASK64;
    }
    let [a, b, c, d, e, f, g, k] = h as [bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint];
    for (let t = 0; t < 80; t++) {
      const s1 = rotr64(e, 14n) ^ rotr64(e, 18n) ^ rotr64(e, 41n);
      const ch = (e & f) ^ (~e & MASK64 & g);
      const t1 = (k + s1 + ch + (K512[t] as bigint) + (w[t] as bigint)) & MASK64;
      const s0 = rotr64(a, 28n) ^ rotr64(a, 34n) ^ rotr64(a, 39n);
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (s0 + maj) & MASK64;
      k = g;
      g = f;
      f = e;
      e = (d + t1) & MASK64;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) & MASK64;
    }
    [a, b, c, d, e, f, g, k].forEach((value, i) => {
      h[i] = ((h[i] as bigint) + value) & MASK64;
    });
  }
  const out = new Uint8Array(64);
  const outView = new DataView(out.buffer);
  h.forEach((value, i) => outView.setBigUint64(8 * i, value));
  return out;
}
