/**
 * The key-loading decisions of issue 24, applied to every form a key comes in (a JWK, a JWKS, a raw
 * secret, a generated key, MRTR_STATE_KEYS): D3 (kids), D4 (one secret, two uses), D5 (weak secrets).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { Key, Keyring, KeyringError } from "../src/index.js";
import { readVectors } from "./vectors.js";

const keys = readVectors("keys.json");
const random32 = () => crypto.getRandomValues(new Uint8Array(32));
const b64u = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url");

describe("D3: an explicit kid is 1 to 128 characters of U+0021..U+007E, refused otherwise at load", () => {
  const bad: unknown[] = ["", "has space", "tab\there", "é", "snow☃", "\x7f", "a".repeat(129), null, 7, true, ["k"], {}];
  it("a JWK with a bad kid is refused, whatever its key type", () => {
    for (const kid of bad) {
      for (const jwk of [keys.hs256, keys.eddsa, keys.eddsa_public, keys.a256gcm]) {
        assert.throws(() => Key.fromJwk({ ...jwk, kid }), KeyringError, `${JSON.stringify(kid)} on ${jwk.kty}`);
        assert.throws(() => Keyring.fromJwks({ keys: [{ ...jwk, kid }] }), KeyringError);
      }
    }
  });
  it("generated keys and raw secrets refuse a bad kid too", () => {
    for (const kid of bad) {
      assert.throws(() => Key.fromSecret(random32(), { kid: kid as string }), KeyringError);
      assert.throws(() => Key.generate("A256GCM", { kid: kid as string }), KeyringError);
      assert.throws(() => Key.generate("EdDSA", { kid: kid as string }), KeyringError);
    }
  });
  it("the edges of the range load: 1 and 128 characters, '!' and '~'", () => {
    for (const kid of ["!", "~", "a".repeat(128), "k-1_2025.01:enc/#~"]) {
      assert.equal(Key.fromJwk({ ...keys.hs256, kid }).kid, kid);
    }
  });
});

describe("D4: an encryption key may not hold the secret of any other key of the ring", () => {
  const secret = random32();
  const asEnc = (kid: string) => ({ kty: "oct", alg: "A256GCM", use: "enc", kid, k: b64u(secret) });
  const asSig = (kid: string) => ({ kty: "oct", alg: "HS256", use: "sig", kid, k: b64u(secret) });
  it("refuses one secret as both HS256 and A256GCM, whatever the kids and the order", () => {
    assert.throws(() => Keyring.fromJwks({ keys: [asEnc("enc"), asSig("sig")] }), /same secret/);
    assert.throws(() => Keyring.fromJwks({ keys: [asSig("sig"), keys.eddsa, asEnc("enc")] }), /same secret/);
    assert.throws(() => Keyring.fromJwks({ keys: [{ kty: "oct", alg: "A256GCM", k: b64u(secret) }, { kty: "oct", k: b64u(secret) }] }), KeyringError);
  });
  it("refuses two encryption keys with one secret", () => {
    assert.throws(() => Keyring.fromJwks({ keys: [asEnc("a"), asEnc("b")] }), /same secret/);
  });
  it("refuses it in every way a ring is built: the constructor, rotation, MRTR_STATE_KEYS", () => {
    const enc = Key.fromJwk(asEnc("enc"));
    const sig = Key.fromJwk(asSig("sig"));
    assert.throws(() => new Keyring([sig, enc]), KeyringError);
    assert.throws(() => new Keyring([enc]).rotated(sig), KeyringError);
    const env = { MRTR_STATE_KEYS: JSON.stringify({ keys: [asEnc("enc"), asSig("sig")] }) };
    assert.throws(() => Keyring.fromEnv(undefined, { env }), /same secret/);
  });
  it("the message names the kids, never the secret", () => {
    assert.throws(
      () => Keyring.fromJwks({ keys: [asEnc("enc"), asSig("sig")] }),
      (error: Error) => error.message.includes('"enc"') && error.message.includes('"sig"') && !error.message.includes(b64u(secret)),
    );
  });
  it("distinct secrets load, and so do two HS256 keys of one secret (D4 is about encryption keys)", () => {
    assert.equal(Keyring.fromJwks({ keys: [keys.a256gcm, keys.hs256, keys.eddsa] }).size, 3);
    assert.equal(Keyring.fromJwks({ keys: [asSig("one"), asSig("two")] }).size, 2);
  });
});

describe("D5: one weak-secret rule for every oct secret, in every form", () => {
  const weak = [
    new Uint8Array(32), // all zero
    new Uint8Array(32).fill(0x41),
    Uint8Array.from({ length: 32 }, (_, i) => [1, 2][i % 2] as number),
    new TextEncoder().encode("password".repeat(4)),
    new TextEncoder().encode("12345678".repeat(6)), // 48 bytes: HS256 only
  ];
  it("refuses a weak HS256 secret as a JWK, in a JWKS, and as raw bytes", () => {
    for (const secret of weak) {
      assert.throws(() => Key.fromJwk({ kty: "oct", k: b64u(secret) }), /repeated/);
      assert.throws(() => Keyring.fromJwks({ keys: [keys.eddsa, { kty: "oct", alg: "HS256", k: b64u(secret) }] }), /repeated/);
      assert.throws(() => Key.fromSecret(secret), /repeated/);
    }
  });
  it("refuses a weak A256GCM key as a JWK and in a JWKS, the all-zero key included", () => {
    for (const secret of weak.filter((bytes) => bytes.length === 32)) {
      assert.throws(() => Key.fromJwk({ kty: "oct", alg: "A256GCM", k: b64u(secret) }), /repeated/);
      assert.throws(() => Keyring.fromJwks({ keys: [{ kty: "oct", alg: "A256GCM", use: "enc", k: b64u(secret) }] }), /repeated/);
    }
  });
  it("never names the secret; a pattern of 9 bytes repeated is not caught by the rule and loads", () => {
    assert.throws(() => Key.fromJwk({ kty: "oct", k: b64u(new Uint8Array(32)) }), (error: Error) => !error.message.includes(b64u(new Uint8Array(32))));
    const nine = new TextEncoder().encode("123456789".repeat(4));
    assert.equal(Key.fromSecret(nine).alg, "HS256");
  });
});

describe("every valid key of keys.json loads (issue 24 item 10)", () => {
  it("each single key and each ring", () => {
    for (const [name, value] of Object.entries(keys)) {
      if (typeof value !== "object" || value === null) continue;
      if ("keys" in value) assert.ok(Keyring.fromJwks(value).size >= 1, name);
      else assert.equal(Key.fromJwk(value).kid, (value as { kid: string }).kid, name);
    }
  });
});

describe("a refused key never shows its members", () => {
  it("an unsupported kty is refused without its value in the message", () => {
    const secret = b64u(random32());
    for (const load of [
      () => Key.fromJwk({ kty: secret, k: b64u(random32()) }),
      () => Keyring.fromJwks({ keys: [{ kty: "oct", k: secret }, { kty: secret }] }),
    ]) {
      assert.throws(load, (error: unknown) => error instanceof KeyringError && !error.message.includes(secret));
    }
  });
});
