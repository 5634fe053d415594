/**
 * Ed25519 public-key hygiene (section 7.2). Node's WebCrypto, which jose calls, imports any 32-byte
 * `x` and verifies with it: under the identity point the signature R = identity, S = 0 verifies for
 * every message, and a `y` of p or more is accepted as y - p. So `x` is checked here, with BigInt,
 * when a key is loaded: the canonical RFC 8032 (5.1.3) encoding of a curve point, not of small order.
 */

const P = 2n ** 255n - 19n;

const mod = (a: bigint): bigint => ((a % P) + P) % P;

function pow(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  for (let b = mod(base), e = exponent; e > 0n; e >>= 1n, b = mod(b * b)) {
    if (e & 1n) result = mod(result * b);
  }
  return result;
}

const inverse = (a: bigint): bigint => pow(a, P - 2n);
const D = mod(-121665n * inverse(121666n));
const SQRT_M1 = pow(2n, (P - 1n) / 4n);

/** What is wrong with a 32-byte Ed25519 public key under section 7.2, or undefined. Never quotes the key. */
export function ed25519KeyProblem(encoded: Uint8Array): string | undefined {
  let n = 0n;
  for (const byte of [...encoded].reverse()) n = (n << 8n) | BigInt(byte); // little-endian
  const sign = n >> 255n;
  let y = n & ((1n << 255n) - 1n);
  if (y >= P) return 'an Ed25519 "x" must be the canonical encoding of a curve point: its y is p or more';
  const xx = mod((y * y - 1n) * inverse(D * y * y + 1n)); // x^2 = (y^2 - 1) / (d y^2 + 1)
  let x = pow(xx, (P + 3n) / 8n);
  if (mod(x * x) !== xx) x = mod(x * SQRT_M1);
  if (mod(x * x) !== xx) return 'an Ed25519 "x" must encode a point on the curve: no x exists for its y';
  if (x === 0n && sign === 1n) {
    return 'an Ed25519 "x" must be the canonical encoding of a curve point: x = 0 with the sign bit set';
  }
  // [8]P, doubling three times; the sign of x does not change the order, so it is not applied.
  for (let i = 0; i < 3; i++) {
    const t = mod(D * x * x * y * y);
    [x, y] = [mod(2n * x * y * inverse(1n + t)), mod((y * y + x * x) * inverse(1n - t))];
  }
  if (x === 0n && y === 1n) {
    return 'an Ed25519 "x" must not be a point of small order: with it a constant signature verifies for any token';
  }
  return undefined;
}
