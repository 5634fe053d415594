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

import { sha512 } from "../lib/sha2.js";

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

/** A point in extended coordinates (X, Y, Z, T), x = X/Z, y = Y/Z, xy = T/Z (RFC 8032, 5.1.4). */
type Extended = readonly [bigint, bigint, bigint, bigint];

const IDENTITY: Extended = [0n, 1n, 1n, 0n];
const D2 = mod(2n * D);

function addExtended([x1, y1, z1, t1]: Extended, [x2, y2, z2, t2]: Extended): Extended {
  const a = mod((y1 - x1) * (y2 - x2));
  const b = mod((y1 + x1) * (y2 + x2));
  const c = mod(t1 * D2 * t2);
  const d = mod(2n * z1 * z2);
  const e = b - a;
  const f = d - c;
  const g = d + c;
  const h = b + a;
  return [mod(e * f), mod(g * h), mod(f * g), mod(e * h)];
}

function doubleExtended([x1, y1, z1]: Extended): Extended {
  const a = mod(x1 * x1);
  const b = mod(y1 * y1);
  const c = mod(2n * z1 * z1);
  const h = a + b;
  const e = mod(h - (x1 + y1) * (x1 + y1));
  const g = a - b;
  const f = c + g;
  return [mod(e * f), mod(g * h), mod(f * g), mod(e * h)];
}

/** The base point B (RFC 8032, 5.1): y = 4/5, x the even root. */
const BASE: Extended = (() => {
  const y = mod(4n * inverse(5n));
  const y2 = (y * y) % P;
  let x = power(mod((y2 - 1n) * inverse(mod(D * y2 + 1n))), (P + 3n) / 8n);
  if (mod(x * x - (y2 - 1n) * inverse(mod(D * y2 + 1n))) !== 0n) x = (x * SQRT_M1) % P;
  if ((x & 1n) === 1n) x = P - x;
  return [x, y, 1n, mod(x * y)];
})();

/**
 * The public key `x` of an Ed25519 private key seed `d` (RFC 8032, 5.1.5): the lower half of
 * SHA-512(d), clamped, times the base point, encoded. Used when a key is generated and to check that a
 * loaded JWK's `x` belongs to its `d`, once per key, so that key loading stays synchronous on Web Crypto
 * (which can neither derive a public key synchronously nor check a pair). A Montgomery ladder makes the
 * same operations for every bit of the scalar; BigInt arithmetic is not constant-time, which is why this
 * never runs per token.
 */
export function publicKeyOf(seed: Uint8Array): Uint8Array {
  if (seed.length !== 32) throw new RangeError("an Ed25519 private key is 32 bytes");
  const h = sha512(seed);
  let scalar = 0n;
  for (let i = 31; i >= 0; i--) scalar = (scalar << 8n) | BigInt(h[i] ?? 0);
  scalar &= (1n << 254n) - 8n; // clear the three low bits and bit 255
  scalar |= 1n << 254n;
  let r0: Extended = IDENTITY;
  let r1: Extended = BASE;
  for (let i = 254n; i >= 0n; i--) {
    if ((scalar >> i) & 1n) {
      r0 = addExtended(r0, r1);
      r1 = doubleExtended(r1);
    } else {
      r1 = addExtended(r0, r1);
      r0 = doubleExtended(r0);
    }
  }
  const zInverse = inverse(r0[2]);
  const x = mod(r0[0] * zInverse);
  let y = mod(r0[1] * zInverse) | ((x & 1n) << 255n);
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    out[i] = Number(y & 0xffn);
    y >>= 8n;
  }
  return out;
}
