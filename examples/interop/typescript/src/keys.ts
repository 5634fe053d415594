/**
 * Keys (section 7): JWKs checked as the profile asks when they are loaded, then imported with jose.
 *
 * A key's algorithm comes from the key, never from a token: `oct` is HS256, OKP Ed25519 is EdDSA.
 * jose gives the import (`importJWK`) and the RFC 7638 thumbprint (`calculateJwkThumbprint`);
 * it does not refuse a short HMAC secret, non-canonical base64url members, a `use` other
 * than `sig`, or an Ed25519 `x` that is not a canonical point of large order, so those checks are here.
 */

import { calculateJwkThumbprint, importJWK, type JWK } from "jose";

import * as b64 from "./b64.js";
import { ed25519KeyProblem } from "./edwards.js";
import { ENCRYPTION_ALG, importEncryptionKey } from "./jwe.js";
import type { Alg } from "./profile.js";
import { isObject } from "./strict-json.js";

/** What jose verifies or signs with: a WebCrypto key, or the HMAC secret's bytes. */
export type KeyMaterial = Awaited<ReturnType<typeof importJWK>>;

/** A key of a ring: its id, its algorithm, and the material jose uses. Never holds a printable secret. */
export interface RingKey {
  readonly kid: string;
  readonly alg: Alg | typeof ENCRYPTION_ALG;
  readonly material: KeyMaterial;
}

/** The verifier's key ring, by `kid`. */
export type Ring = ReadonlyMap<string, RingKey>;

/** A JWK or JWKS the profile does not accept. The message never holds key material. */
export class KeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "KeyError";
  }
}

const EXPLICIT_KID = /^[\x21-\x7e]{1,128}$/; // printable ASCII without spaces (section 7.4)
const MIN_SECRET_BYTES = 32; // section 7.1

/** Load a JWKS (`{"keys": [...]}`) as a verification ring: the HS256 secrets and Ed25519 public keys. */
export async function loadRing(jwks: unknown): Promise<Ring> {
  if (!isObject(jwks) || !Array.isArray(jwks.keys) || jwks.keys.length === 0) {
    throw new KeyError('a JWKS must be an object {"keys": [...]} with at least one key');
  }
  const ring = new Map<string, RingKey>();
  for (const jwk of jwks.keys) {
    const key = await loadKey(jwk, "verify");
    if (ring.has(key.kid)) throw new KeyError("two keys of the JWKS have the same kid");
    ring.set(key.kid, key);
  }
  return ring;
}

/** Load a private JWK (an `oct` secret, an OKP Ed25519 key with `d`, or an A256GCM key) to mint with. */
export async function loadSigningKey(jwk: unknown): Promise<RingKey> {
  return loadKey(jwk, "sign");
}

async function loadKey(jwk: unknown, use: "sign" | "verify"): Promise<RingKey> {
  if (!isObject(jwk)) throw new KeyError("a JWK must be a JSON object");
  // An encryption key (oct with alg A256GCM, jwe.ts) has use "enc"; every other key "sig".
  const expectedUse = jwk.kty === "oct" && jwk.alg === ENCRYPTION_ALG ? "enc" : "sig";
  if (jwk.use !== undefined && jwk.use !== expectedUse) throw new KeyError(`this JWK's "use" must be "${expectedUse}"`);
  const { alg, material } = await importKey(jwk, use);
  return { kid: await keyId(jwk), alg, material };
}

async function importKey(jwk: { [name: string]: unknown }, use: "sign" | "verify"): Promise<Omit<RingKey, "kid">> {
  if (jwk.kty === "oct" && jwk.alg === ENCRYPTION_ALG) {
    try {
      return await importEncryptionKey(member(jwk, "k"), jwk.k as string);
    } catch (error) {
      if (error instanceof KeyError) throw error;
      throw new KeyError(`an A256GCM JWK is not usable: ${error instanceof Error ? error.message : "unknown"}`);
    }
  }
  if (jwk.kty === "oct") {
    if (jwk.alg !== undefined && jwk.alg !== "HS256") throw new KeyError('an oct JWK\'s "alg" must be HS256 or A256GCM');
    if (member(jwk, "k").length < MIN_SECRET_BYTES) {
      throw new KeyError(`an HS256 secret must be at least ${MIN_SECRET_BYTES} bytes`);
    }
    return { alg: "HS256", material: await importJWK({ kty: "oct", k: jwk.k as string }, "HS256") };
  }
  if (jwk.kty === "OKP" && jwk.crv === "Ed25519") {
    if (jwk.alg !== undefined && jwk.alg !== "EdDSA" && jwk.alg !== "Ed25519") {
      throw new KeyError('an Ed25519 JWK\'s "alg" must be EdDSA (or Ed25519)');
    }
    const x = member(jwk, "x");
    if (x.length !== 32) throw new KeyError('an Ed25519 JWK\'s "x" must be 32 bytes');
    const problem = ed25519KeyProblem(x);
    if (problem !== undefined) throw new KeyError(problem);
    const publicJwk: JWK = { kty: "OKP", crv: "Ed25519", x: jwk.x as string };
    if (jwk.d === undefined) {
      if (use === "sign") throw new KeyError('a signing key needs its private part "d"');
      return { alg: "EdDSA", material: await importJWK(publicJwk, "EdDSA") };
    }
    if (member(jwk, "d").length !== 32) throw new KeyError('an Ed25519 JWK\'s "d" must be 32 bytes');
    // WebCrypto refuses a private JWK whose x is not the public key of d (section 7.2).
    let privateKey: KeyMaterial;
    try {
      privateKey = await importJWK({ ...publicJwk, d: jwk.d as string }, "EdDSA");
    } catch {
      throw new KeyError('an Ed25519 JWK\'s "x" is not the public key of its "d"');
    }
    // A verifier holds only the public key, even when it was given the private one.
    return { alg: "EdDSA", material: use === "sign" ? privateKey : await importJWK(publicJwk, "EdDSA") };
  }
  throw new KeyError("a JWK must be an oct (HS256) or OKP Ed25519 (EdDSA) key");
}

/** The JWK's `kid` member if it has one, else its RFC 7638 thumbprint (section 7.4). */
async function keyId(jwk: { [name: string]: unknown }): Promise<string> {
  if (jwk.kid === undefined) return calculateJwkThumbprint(jwk as JWK, "sha256");
  if (typeof jwk.kid !== "string" || !EXPLICIT_KID.test(jwk.kid)) {
    throw new KeyError("a JWK's kid must be 1 to 128 printable ASCII characters without spaces");
  }
  return jwk.kid;
}

/** The bytes of a base64url JWK member, which must be canonical and unpadded. */
function member(jwk: { [name: string]: unknown }, name: string): Uint8Array {
  const value = jwk[name];
  if (typeof value !== "string") throw new KeyError(`a JWK's "${name}" is missing or not a string`);
  try {
    return b64.decode(value);
  } catch {
    throw new KeyError(`a JWK's "${name}" is not canonical unpadded base64url`);
  }
}
