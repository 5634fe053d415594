/** The encrypted form (profile 3.6, 5.1, 7.6): A256GCM keys, JWE tokens, rings of both forms. */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { inspect } from "node:util";

import { compactDecrypt, decodeProtectedHeader } from "jose";

import { decodeUnverified, InvalidRequestState, Key, Keyring, KeyringError, StateSealer, type Reason } from "../src/index.js";

const NOW = 1_767_225_600;
const ISSUER = "https://mcp.example.com";
const sealer = (ring: Keyring, now = NOW) => new StateSealer(ring, { issuer: ISSUER, clock: () => now });
const retry = { user: "alice", tool: "deploy", arguments: { env: "prod" } };

async function reason(promise: Promise<unknown>): Promise<Reason> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof InvalidRequestState, String(error));
    return error.reason;
  }
  assert.fail("accepted");
}

describe("A256GCM keys (section 7.6, decision E2)", () => {
  it("need alg A256GCM, use enc if any, and exactly 32 bytes; an oct JWK without alg stays HS256", () => {
    const key = Key.generate("A256GCM");
    const jwk = key.privateJwk();
    assert.deepEqual(Object.keys(jwk), ["kty", "alg", "use", "kid", "k"]);
    assert.equal(Key.fromJwk(jwk).kid, key.kid);
    assert.equal(Key.fromJwk({ kty: "oct", k: jwk.k }).alg, "HS256");
    assert.throws(() => Key.fromJwk({ ...jwk, use: "sig" }), /use 'enc'/);
    assert.throws(() => Key.fromJwk({ kty: "oct", alg: "A256GCM", k: Buffer.alloc(48, 7).toString("base64url") }), /exactly 32.*Key\.generate\("A256GCM"\)/);
    assert.throws(() => Key.fromJwk({ kty: "oct", alg: "HS256", use: "enc", k: jwk.k }), /use 'sig'/);
  });
  it("are never published, shown or logged, and their kid is the thumbprint over k and kty", () => {
    const key = Key.generate("A256GCM");
    const secret = key.privateJwk().k as string;
    for (const shown of [String(key), JSON.stringify(key), inspect(key), inspect(new Keyring([key]))]) assert.ok(!shown.includes(secret), shown);
    assert.throws(() => key.publicJwk(), KeyringError);
    assert.deepEqual(new Keyring([key, Key.generate("EdDSA")]).publicJwks().keys.length, 1);
    const { kid, ...unnamed } = key.privateJwk();
    assert.equal(Key.fromJwk(unnamed).kid, kid);
  });
  it("load from MRTR_STATE_KEYS as a JWKS", () => {
    const ring = new Keyring([Key.generate("A256GCM"), Key.generate("HS256")]);
    const loaded = Keyring.fromEnv(undefined, { env: { MRTR_STATE_KEYS: JSON.stringify(ring.privateJwks()) } });
    assert.deepEqual(loaded.keys.map((k) => k.alg), ["A256GCM", "HS256"]);
  });
});

describe("encrypted tokens", () => {
  it("seal as a five-segment JWE with the reference header, hide every claim, and open to the state", async () => {
    const ring = Keyring.generate("A256GCM");
    const token = await sealer(ring).seal({ secret: "plan" }, retry);
    const segments = token.split(".");
    assert.equal(segments.length, 5);
    assert.equal(segments[1], "");
    assert.equal(segments[2]?.length, 16);
    assert.equal(segments[4]?.length, 22);
    assert.deepEqual(decodeProtectedHeader(token), { alg: "dir", enc: "A256GCM", typ: "mrtr-state+jwt", kid: ring.keys[0]!.kid });
    assert.equal(Buffer.from(token, "utf8").includes("plan"), false);
    assert.throws(() => decodeUnverified(token), InvalidRequestState);
    assert.deepEqual(await sealer(ring).open(token, retry), { secret: "plan" });
  });
  it("open with jose's compactDecrypt as a stock JWE: the plaintext is the signed form's claims", async () => {
    const ring = Keyring.generate("A256GCM");
    const token = await sealer(ring).seal(1, retry);
    const secret = Buffer.from(ring.keys[0]!.privateJwk().k as string, "base64url");
    const { plaintext } = await compactDecrypt(token, new Uint8Array(secret));
    const claims = JSON.parse(Buffer.from(plaintext).toString("utf8"));
    assert.deepEqual(Object.keys(claims), ["iss", "sub", "aud", "iat", "exp", "jti", "args_sha256", "state"]);
  });
  it("are refused for every binding, as signed tokens are", async () => {
    const ring = Keyring.generate("A256GCM");
    const token = await sealer(ring).seal(1, retry);
    assert.equal(await reason(sealer(ring).open(token, { ...retry, user: "bob" })), "wrong_user");
    assert.equal(await reason(sealer(ring).open(token, { ...retry, tool: "other" })), "wrong_tool");
    assert.equal(await reason(sealer(ring).open(token, { ...retry, arguments: { env: "dev" } })), "wrong_request");
    assert.equal(await reason(sealer(ring, NOW + 600).open(token, retry)), "expired");
    const changed = token.slice(0, -2) + (token.at(-2) === "A" ? "B" : "A") + token.at(-1);
    assert.equal(await reason(sealer(ring).open(changed, retry)), "bad_signature");
    assert.equal(await reason(sealer(Keyring.generate("A256GCM")).open(token, retry)), "unknown_key");
  });
  it("a ring of both forms: its first key decides the form; a token naming the other form's key is algorithm_mismatch", async () => {
    const encryption = Key.generate("A256GCM");
    const signing = Key.generate("EdDSA");
    const both = new Keyring([encryption, signing]);
    const encrypted = await sealer(both).seal(1, retry);
    assert.equal(encrypted.split(".").length, 5);
    const signedRing = new Keyring([signing, encryption]);
    const signedToken = await sealer(signedRing).seal(2, retry);
    assert.equal(signedToken.split(".").length, 3);
    assert.equal(await sealer(both).open(signedToken, retry), 2);
    assert.equal(await sealer(signedRing).open(encrypted, retry), 1);
    // A signed token whose kid names the encryption key: its alg (EdDSA) is not the key's (A256GCM).
    const [, payload, signature] = signedToken.split(".");
    const header = Buffer.from(JSON.stringify({ alg: "HS256", typ: "mrtr-state+jwt", kid: encryption.kid })).toString("base64url");
    assert.equal(await reason(sealer(both).open(`${header}.${payload}.${signature}`, retry)), "algorithm_mismatch");
  });
});

describe("D6: the GCM IV always comes from the platform's CSPRNG, never from the entropy hook", () => {
  it("a stuck entropy hook repeats the jti but never the IV", async () => {
    const stuck = new StateSealer(Keyring.generate("A256GCM"), { issuer: ISSUER, clock: () => NOW, entropy: (size) => new Uint8Array(size) });
    const tokens = await Promise.all(Array.from({ length: 64 }, () => stuck.seal({ step: 1 }, retry)));
    const ivs = new Set(tokens.map((token) => token.split(".")[2]));
    assert.equal(ivs.size, tokens.length);
    assert.ok(!ivs.has(Buffer.alloc(12).toString("base64url")));
  });
});
