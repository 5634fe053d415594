/** Keys and rings (profile, section 7): loading rules, the Ed25519 point check (K1), secrets (K6), no leaks. */

import assert from "node:assert/strict";
import { inspect } from "node:util";
import { describe, it } from "node:test";

import { Key, Keyring, KeyringError } from "../src/index.js";
import { readVectors } from "./vectors.js";

const keys = readVectors("keys.json");
const SECRET = Buffer.from(keys.hs256.k, "base64url");

/** Little-endian 32-byte encoding of a y coordinate with an optional sign bit. */
function encodePoint(y: bigint, sign = 0): string {
  const bytes = Buffer.alloc(32);
  let value = y | (BigInt(sign) << 255n);
  for (let i = 0; i < 32; i++) {
    bytes[i] = Number(value & 0xffn);
    value >>= 8n;
  }
  return bytes.toString("base64url");
}

const P = (1n << 255n) - 19n;
const okp = (x: string) => ({ kty: "OKP", crv: "Ed25519", x });

describe("Ed25519 public keys are canonical points of large order (K1)", () => {
  it("refuses the identity (order 1) and the point of order 2", () => {
    assert.throws(() => Key.fromJwk(okp(encodePoint(1n))), /small order/);
    assert.throws(() => Key.fromJwk(okp(encodePoint(P - 1n))), /small order/);
  });
  it("refuses a y that is not below p (non-canonical encoding)", () => {
    assert.throws(() => Key.fromJwk(okp(encodePoint(P + 1n))), /not below p/);
    assert.throws(() => Key.fromJwk(okp(encodePoint(P))), /not below p/);
  });
  it("refuses x = 0 written with the sign bit set", () => {
    assert.throws(() => Key.fromJwk(okp(encodePoint(1n, 1))), /sign bit/);
  });
  it("refuses a y with no x on the curve", () => {
    assert.throws(() => Key.fromJwk(okp(encodePoint(2n))), /not a point on the curve/);
  });
  it("accepts ordinary public keys and never names the key bytes", () => {
    for (let i = 0; i < 20; i++) {
      const key = Key.generate("EdDSA");
      const x = key.publicJwk().x as string;
      assert.equal(Key.fromJwk(okp(x)).kid, key.kid);
      try {
        Key.fromJwk(okp(encodePoint(1n)));
      } catch (error) {
        assert.ok(!String((error as Error).message).includes(encodePoint(1n)));
      }
    }
  });
});

describe("JWK loading rules", () => {
  it("a JWK without kid gets its RFC 7638 thumbprint, the kid the Python library derives", () => {
    for (const name of ["hs256", "eddsa", "eddsa_public", "unknown"]) {
      const { kid, ...rest } = keys[name];
      assert.equal(Key.fromJwk(rest).kid, kid, name);
    }
  });
  it("refuses an HS256 secret shorter than 32 bytes", () => {
    assert.throws(() => Key.fromJwk({ kty: "oct", k: SECRET.subarray(0, 31).toString("base64url") }), KeyringError);
  });
  it("refuses non-canonical or padded base64url members", () => {
    assert.throws(() => Key.fromJwk({ kty: "oct", k: keys.hs256.k + "=" }), /canonical/);
  });
  it("refuses a use other than sig, a foreign alg, an unknown kty, a bad kid", () => {
    assert.throws(() => Key.fromJwk({ ...keys.hs256, use: "enc" }), /use 'sig'/);
    assert.throws(() => Key.fromJwk({ ...keys.hs256, alg: "HS512" }), /HS256/);
    assert.throws(() => Key.fromJwk({ ...keys.eddsa, alg: "ES256" }), /EdDSA/);
    assert.throws(() => Key.fromJwk({ kty: "RSA", n: "AQAB", e: "AQAB" }), /unsupported JWK key type/);
    assert.throws(() => Key.fromJwk({ ...keys.hs256, kid: "has space" }), /kid/);
  });
  it("refuses an Ed25519 JWK whose x is not the public key of its d", () => {
    const other = Key.generate("EdDSA").publicJwk().x;
    assert.throws(() => Key.fromJwk({ ...keys.eddsa, x: other }), /not the public key of its 'd'/);
  });
  it("reads JWK text strictly: a duplicate member is refused", () => {
    assert.throws(() => Key.fromJwk('{"kty":"oct","kty":"oct","k":"x"}'), /strict JSON/);
  });
  it("accepts alg Ed25519 on an Ed25519 JWK as an EdDSA key", () => {
    assert.equal(Key.fromJwk({ ...keys.eddsa_public, alg: "Ed25519" }).alg, "EdDSA");
  });
});

describe("key rings", () => {
  it("the first key signs; a public first key makes a verify-only ring", () => {
    assert.throws(() => Keyring.fromJwks({ keys: [keys.eddsa_public] }).signingKey, /verify-only/);
    assert.equal(Keyring.fromJwks({ keys: [keys.hs256, keys.eddsa] }).signingKey.kid, keys.hs256.kid);
  });
  it("refuses two keys with one kid, and an empty ring", () => {
    assert.throws(() => Keyring.fromJwks({ keys: [keys.hs256, keys.hs256] }), /two keys/);
    assert.throws(() => Keyring.fromJwks({ keys: [] }), /at least one key/);
  });
  it("rotates and removes keys without changing the old ring", () => {
    const ring = Keyring.generate("HS256");
    const fresh = Key.generate("EdDSA");
    const rotated = ring.rotated(fresh);
    assert.equal(rotated.signingKey.kid, fresh.kid);
    assert.equal(rotated.size, 2);
    assert.equal(ring.size, 1);
    assert.equal(rotated.without(ring.keys[0]!.kid).size, 1);
    assert.throws(() => ring.without("nope"), KeyringError);
  });
  it("round-trips a private JWKS and publishes only Ed25519 public keys", () => {
    const ring = new Keyring([Key.generate("EdDSA"), Key.generate("HS256")]);
    const again = Keyring.fromJwks(JSON.stringify(ring.privateJwks()));
    assert.deepEqual(again.keys.map((k) => k.kid), ring.keys.map((k) => k.kid));
    const published = ring.publicJwks();
    assert.equal(published.keys.length, 1);
    assert.equal(published.keys[0]!.d, undefined);
  });
});

describe("MRTR_STATE_KEYS (Keyring.fromEnv), as the Python library reads it", () => {
  const env = (value: string) => ({ env: { MRTR_STATE_KEYS: value } });
  it("reads a JWKS, a single JWK, and a base64 or base64url secret", () => {
    assert.equal(Keyring.fromEnv(undefined, env(JSON.stringify(keys.verifier_jwks))).size, 2);
    assert.equal(Keyring.fromEnv(undefined, env(JSON.stringify(keys.eddsa))).signingKey.kid, keys.eddsa.kid);
    const b64url = SECRET.toString("base64url");
    const b64 = SECRET.toString("base64");
    const kid = Keyring.fromEnv(undefined, env(b64url)).signingKey.kid;
    assert.equal(Keyring.fromEnv(undefined, env(b64)).signingKey.kid, kid);
    assert.equal(Keyring.fromEnv(undefined, env(` ${b64url}= \n`)).signingKey.kid, kid);
  });
  it("refuses an unset variable, short secrets and text that is neither JSON nor base64", () => {
    assert.throws(() => Keyring.fromEnv(undefined, env("")), /is not set/);
    // The npm package ships no CLI: its advice names what an npm user has, its own generators (issue 25).
    assert.throws(() => Keyring.fromEnv(undefined, env("")), (error: Error) => /Keyring\.generate\("EdDSA"\)/.test(error.message) && !/mrtr-state keygen/.test(error.message));
    assert.throws(() => Keyring.fromEnv(undefined, env(SECRET.subarray(0, 16).toString("base64url"))), (error: Error) => /Keyring\.generate\("HS256"\)/.test(error.message) && !/mrtr-state keygen/.test(error.message));
    assert.throws(() => Keyring.fromEnv(undefined, env(SECRET.subarray(0, 16).toString("base64url"))), /16 bytes/);
    assert.throws(() => Keyring.fromEnv(undefined, env("not a secret!")), /neither JSON nor a base64 secret/);
  });
  it("reads the variable from a Worker's typed Env beside its other bindings, and refuses one that is not a string", () => {
    // Issue 33: a typed Env holding a Durable Object binding failed tsc --strict (TS2322) against the old signature.
    interface WorkerEnv {
      readonly MRTR_STATE_KEYS: string;
      readonly REPLAY: { idFromName(name: string): unknown };
    }
    const workerEnv: WorkerEnv = { MRTR_STATE_KEYS: JSON.stringify(keys.eddsa), REPLAY: { idFromName: (name) => name } };
    assert.equal(Keyring.fromEnv("MRTR_STATE_KEYS", { env: workerEnv }).signingKey.kid, keys.eddsa.kid);
    assert.throws(() => Keyring.fromEnv("REPLAY", { env: workerEnv }), /the variable REPLAY is not a string \(its type is object\)/);
    assert.throws(() => Keyring.fromEnv("MISSING", { env: workerEnv }), /is not set/);
  });
  it("refuses an obviously non-random secret: one byte, or a pattern of up to 8 bytes, repeated (K6)", () => {
    for (const pattern of ["a", "ab", "password", "\x00"]) {
      const secret = Buffer.from(pattern.repeat(Math.ceil(40 / pattern.length))).toString("base64url");
      assert.throws(() => Keyring.fromEnv(undefined, env(secret)), /Keyring\.generate\("HS256"\)/);
    }
    const nine = Buffer.from("123456789".repeat(5)).toString("base64url");
    assert.equal(Keyring.fromEnv(undefined, env(nine)).size, 1);
  });
});

describe("no secret ever leaves a key", () => {
  it("String, util.inspect and JSON.stringify show the algorithm and kid only", () => {
    const ring = Keyring.fromJwks({ keys: [keys.hs256, keys.eddsa] });
    for (const shown of [String(ring), inspect(ring), JSON.stringify(ring), inspect(ring.keys[0]), inspect(ring.keys[1])]) {
      assert.ok(!shown.includes(keys.hs256.k), shown);
      assert.ok(!shown.includes(keys.eddsa.d), shown);
    }
  });
  it("key error messages never hold the secret", () => {
    const short = SECRET.subarray(0, 20).toString("base64url");
    assert.throws(() => Key.fromJwk({ kty: "oct", k: short }), (error: Error) => !error.message.includes(short));
  });
});
