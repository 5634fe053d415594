/**
 * The Ed25519 public key check of profile 7.2 (decision K1), made when a key is loaded.
 *
 * `x` must be the canonical RFC 8032 (5.1.3) encoding of a point on the curve: y < p, x recoverable
 * (the square root exists), no x = 0 with the sign bit set; and the point must not have small order
 * (none of the 8 torsion points: [8]P is not the identity). WebCrypto and OpenSSL accept several such
 * encodings, and a small-order key lets one signature verify for many messages, so the profile refuses
 * them before the key is ever used. The arithmetic is the curve's complete addition law on affine
 * coordinates with BigInt; it runs once per key load, never per token.
 */

const P = (1n << 255n) - 19n;
const D = mod(-121665n * inverse(121666n));
const SQRT_M1 = power(2n, (P - 1n) / 4n);

function mod(a: bigint): bigint {
  const r = a % P;
  return r >= 0n ? r : r + P;
}

function power(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  let e = exponent;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
    e >>= 1n;
  }
  return result;
}

function inverse(a: bigint): bigint {
  return power(a, P - 2n);
}

type Point = readonly [bigint, bigint];

/** The complete twisted Edwards addition (a = -1): no exceptional cases, since d is not a square. */
function add([x1, y1]: Point, [x2, y2]: Point): Point {
  const t = mod(D * x1 * x2 * y1 * y2);
  const x3 = mod((x1 * y2 + y1 * x2) * inverse(mod(1n + t)));
  const y3 = mod((y1 * y2 + x1 * x2) * inverse(mod(1n - t)));
  return [x3, y3];
}

/** Why `encoded` is not an acceptable Ed25519 public key, or `undefined` when it is. */
export function publicKeyProblem(encoded: Uint8Array): string | undefined {
  if (encoded.length !== 32) return "an Ed25519 public key is 32 bytes";
  let value = 0n;
  for (let i = 31; i >= 0; i--) value = (value << 8n) | BigInt(encoded[i] ?? 0);
  const sign = value >> 255n;
  const y = value & ((1n << 255n) - 1n);
  if (y >= P) return "its y coordinate is not below p (a non-canonical encoding)";
  const y2 = (y * y) % P;
  const u = mod(y2 - 1n);
  const v = mod(D * y2 + 1n);
  // x = (u v^3) (u v^7)^((p-5)/8), then fixed up by sqrt(-1) if needed (RFC 8032, 5.1.3).
  const v3 = (v * v * v) % P;
  let x = (((u * v3) % P) * power((u * v3 * v3 * v) % P, (P - 5n) / 8n)) % P;
  const vx2 = (v * x * x) % P;
  if (vx2 === u) {
    // x is a root
  } else if (vx2 === mod(-u)) {
    x = (x * SQRT_M1) % P;
  } else {
    return "it is not a point on the curve (no x for its y)";
  }
  if (x === 0n && sign === 1n) return "it encodes x = 0 with the sign bit set (a non-canonical encoding)";
  if ((x & 1n) !== sign) x = P - x;
  let point: Point = [x, y];
  for (let i = 0; i < 3; i++) point = add(point, point);
  if (point[0] === 0n && point[1] === 1n) return "it is a point of small order";
  return undefined;
}
