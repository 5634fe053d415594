/** Sealing and opening: the Python library's options, defaults, reason codes and messages. */

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import {
  DEFAULT_TTL,
  decodeUnverified,
  InvalidRequestState,
  Keyring,
  MemoryReplayStore,
  REASONS,
  ReplayStoreError,
  StateSealer,
  UnbindableArguments,
  type Reason,
  type ReplayStore,
  type SealerOptions,
} from "../src/index.js";
import { readVectors } from "./vectors.js";

const keys = readVectors("keys.json");
const ISSUER = "https://mcp.example.com";
const NOW = 1_767_225_600;
const RING = Keyring.fromJwks({ keys: [keys.eddsa, keys.hs256] });
const ARGS = { env: "prod", replicas: 3 };

function sealer(options: Partial<SealerOptions> & { now?: number; ring?: Keyring } = {}): StateSealer {
  const now = options.now ?? NOW;
  const { ring, now: _now, ...rest } = options;
  return new StateSealer(ring ?? RING, { issuer: ISSUER, clock: () => now, ...rest });
}

async function refusal(promise: Promise<unknown>): Promise<Reason> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof InvalidRequestState, `not a refusal: ${String(error)}`);
    assert.equal(error.message, REASONS[error.reason]);
    return error.reason;
  }
  assert.fail("the token was accepted");
}

function flip(token: string, index: number): string {
  const char = token[index] === "A" ? "B" : "A";
  return token.slice(0, index) + char + token.slice(index + 1);
}

describe("a sealed state opens for the same user, target and arguments", () => {
  for (const alg of ["EdDSA", "HS256"] as const) {
    it(`round trip with ${alg}`, async () => {
      const s = sealer({ ring: Keyring.generate(alg) });
      const state = { step: "confirm", plan: ["a", "b"], n: 1.5, big: 2 ** 60 };
      const token = await s.seal(state, { user: "alice", tool: "deploy", arguments: ARGS });
      assert.deepEqual(await s.open(token, { user: "alice", tool: "deploy", arguments: { replicas: 3, env: "prod" } }), state);
    });
  }
  it("writes the reference header and claims: 600 s, a 22-character jti, args_sha256", async () => {
    const token = await sealer().seal({ a: 1 }, { user: "alice", prompt: "summarize", arguments: {} });
    const { header, claims } = decodeUnverified(token);
    assert.deepEqual(Object.keys(header), ["alg", "typ", "kid"]);
    assert.deepEqual(header, { alg: "EdDSA", typ: "mrtr-state+jwt", kid: keys.eddsa.kid });
    assert.deepEqual(Object.keys(claims), ["iss", "sub", "aud", "iat", "exp", "jti", "args_sha256", "state"]);
    assert.equal(claims.aud, "prompts/get:summarize");
    assert.equal(claims.exp, NOW + DEFAULT_TTL);
    assert.equal((claims.jti as string).length, 22);
  });
  it("a token without arguments has no args_sha256", async () => {
    const token = await sealer().seal("s", { user: "alice", resource: "file:///a.txt" });
    assert.equal(Object.hasOwn(decodeUnverified(token).claims, "args_sha256"), false);
  });
});

describe("each refusal gets its reason code and the Python library's message", () => {
  const s = sealer();
  const seal = () => s.seal({ step: 1 }, { user: "alice", tool: "deploy", arguments: ARGS });
  const retry = { user: "alice", tool: "deploy", arguments: ARGS };

  it("one changed byte: bad_signature (or malformed)", async () => {
    const token = await seal();
    const payloadStart = token.indexOf(".") + 1;
    assert.equal(await refusal(s.open(flip(token, token.length - 5), retry)), "bad_signature");
    assert.equal(await refusal(s.open(flip(token, payloadStart + 3), retry)), "bad_signature");
  });
  it("another user, tool, prompt, arguments, issuer", async () => {
    const token = await seal();
    assert.equal(await refusal(s.open(token, { ...retry, user: "mallory" })), "wrong_user");
    assert.equal(await refusal(s.open(token, { ...retry, tool: "destroy" })), "wrong_tool");
    assert.equal(await refusal(s.open(token, { user: "alice", prompt: "deploy", arguments: ARGS })), "wrong_tool");
    assert.equal(await refusal(s.open(token, { ...retry, arguments: { env: "staging", replicas: 3 } })), "wrong_request");
    assert.equal(await refusal(s.open(token, { user: "alice", tool: "deploy" })), "wrong_request");
    assert.equal(await refusal(sealer({ issuer: "https://other.example.com" }).open(token, retry)), "wrong_issuer");
  });
  it("expired at exp exactly, accepted one second before; leeway extends both ends", async () => {
    const token = await seal();
    assert.deepEqual(await sealer({ now: NOW + 599 }).open(token, retry), { step: 1 });
    assert.equal(await refusal(sealer({ now: NOW + 600 }).open(token, retry)), "expired");
    assert.deepEqual(await sealer({ now: NOW + 600, leeway: 1 }).open(token, retry), { step: 1 });
    assert.equal(await refusal(sealer({ now: NOW - 1 }).open(token, retry)), "issued_in_future");
  });
  it("a lifetime longer than the verifier's maximum: lifetime_too_long", async () => {
    const long = await sealer({ ttl: 900, maxLifetime: 900 }).seal(1, retry);
    assert.equal(await refusal(s.open(long, retry)), "lifetime_too_long");
  });
  it("a key the ring does not hold: unknown_key; oversized: too_large; not a string: malformed", async () => {
    const other = await sealer({ ring: Keyring.generate("EdDSA") }).seal(1, retry);
    assert.equal(await refusal(s.open(other, retry)), "unknown_key");
    assert.equal(await refusal(s.open("a".repeat(8193), retry)), "too_large");
    assert.equal(await refusal(s.open(42, retry)), "malformed");
    assert.equal(await refusal(s.open("", retry)), "malformed");
    assert.equal(await refusal(s.open("a.b", retry)), "malformed");
  });
  it("every one-character change of a token is refused with a reason code, never another error", async () => {
    const token = await seal();
    for (let i = 0; i < token.length; i++) {
      for (const char of ["A", "_", ".", "="]) {
        if (token[i] === char) continue;
        await refusal(s.open(token.slice(0, i) + char + token.slice(i + 1), retry));
      }
    }
  });
  it("nothing but InvalidRequestState escapes for random garbage", async () => {
    const token = await seal();
    for (let i = 0; i < 300; i++) {
      const cut = token.slice(0, Math.floor(Math.random() * token.length)) + String.fromCharCode(Math.floor(Math.random() * 0x10000));
      await refusal(s.open(cut, retry));
    }
  });
});

describe("the argument binding: unbindable arguments (K2) and the required binding (K3)", () => {
  it("seal refuses arguments holding an integer beyond 2^53 - 1, however written, and says to use strings", async () => {
    for (const value of [9007199254740992, 1e23, 2 ** 60, -(2 ** 53)]) {
      await assert.rejects(sealer().seal(1, { user: "a", tool: "t", arguments: { id: value } }), (error: unknown) => {
        assert.ok(error instanceof UnbindableArguments);
        assert.match(error.message, /as strings/);
        return true;
      });
    }
  });
  it("open refuses unbindable arguments as wrong_request when the token is bound", async () => {
    const token = await sealer().seal(1, { user: "a", tool: "t", arguments: { id: 1 } });
    assert.equal(await refusal(sealer().open(token, { user: "a", tool: "t", arguments: { id: 2 ** 60 } })), "wrong_request");
  });
  it("requireArguments refuses an unbound token for a tool or prompt, never for a resource", async () => {
    const unbound = await sealer().seal(1, { user: "a", tool: "t" });
    assert.deepEqual(await sealer().open(unbound, { user: "a", tool: "t", arguments: {} }), 1);
    assert.equal(await refusal(sealer({ requireArguments: true }).open(unbound, { user: "a", tool: "t", arguments: {} })), "wrong_request");
    assert.equal(await refusal(sealer().open(unbound, { user: "a", tool: "t", arguments: {}, requireArguments: true })), "wrong_request");
    const resource = await sealer().seal(1, { user: "a", resource: "file:///x" });
    assert.deepEqual(await sealer({ requireArguments: true }).open(resource, { user: "a", resource: "file:///x" }), 1);
    await assert.rejects(sealer({ requireArguments: true }).seal(1, { user: "a", tool: "t" }), TypeError);
  });
});

describe("minting refuses what the profile cannot carry", () => {
  it("non-JSON values, non-finite numbers, lone surrogates, deep nesting, oversized states", async () => {
    const seal = (state: unknown) => sealer().seal(state, { user: "a", tool: "t" });
    await assert.rejects(seal(undefined), TypeError);
    await assert.rejects(seal({ when: new Date() }), TypeError);
    await assert.rejects(seal(10n), TypeError);
    await assert.rejects(seal(Number.NaN), RangeError);
    await assert.rejects(seal("\ud800"), RangeError);
    let deep: unknown = 1;
    for (let i = 0; i < 33; i++) deep = [deep];
    await assert.rejects(seal(deep), /deeper than 32/);
    await assert.rejects(seal("x".repeat(9000)), /over the cap/);
  });
  it("checks its options as the Python library does", () => {
    assert.throws(() => sealer({ ttl: 601 }), RangeError);
    assert.throws(() => sealer({ leeway: 301 }), RangeError);
    assert.throws(() => sealer({ maxTokenBytes: 511 }), RangeError);
    assert.throws(() => sealer({ issuer: "" }), RangeError);
    assert.throws(() => sealer({ ttl: 1.5 }), TypeError);
    assert.equal(sealer({ maxLifetime: 60 }).ttl, 60);
  });
});

describe("single use (step 20)", () => {
  const retry = { user: "alice", tool: "deploy", arguments: ARGS };
  it("a token opens once with consume: true, then is replayed", async () => {
    const s = sealer({ replayStore: new MemoryReplayStore({ clock: () => NOW }) });
    const token = await s.seal(1, retry);
    assert.equal(await s.open(token, { ...retry, consume: true }), 1);
    assert.equal(await refusal(s.open(token, { ...retry, consume: true })), "replayed");
    assert.equal(await s.open(token, retry), 1); // without consume it still opens
  });
  it("an invalid token never costs a store write", async () => {
    const seen: string[] = [];
    const store: ReplayStore = { redeem: (key) => (seen.push(key), true) };
    const s = sealer({ replayStore: store });
    const token = await s.seal(1, retry);
    await refusal(s.open(token, { ...retry, user: "mallory", consume: true }));
    assert.deepEqual(seen, []);
    await s.open(token, { ...retry, consume: true });
    assert.deepEqual(seen, [`${ISSUER}#${decodeUnverified(token).claims.jti}`]);
  });
  it("retention is exp plus twice the leeway", async () => {
    const asked: number[] = [];
    const s = sealer({ leeway: 5, replayStore: { redeem: (_key, { expiresAt }) => (asked.push(expiresAt), true) } });
    await s.open(await s.seal(1, retry), { ...retry, consume: true });
    assert.deepEqual(asked, [NOW + 600 + 10]);
  });
  it("a failing or confused store fails closed: store_unavailable", async () => {
    for (const redeem of [
      () => {
        throw new ReplayStoreError("down");
      },
      () => {
        throw new Error("boom");
      },
      () => Promise.reject(new Error("late boom")),
      () => "yes" as unknown as boolean,
    ]) {
      const s = sealer({ replayStore: { redeem } });
      assert.equal(await refusal(s.open(await s.seal(1, retry), { ...retry, consume: true })), "store_unavailable");
    }
  });
  it("consume: true without a store is a configuration error, not a refusal", async () => {
    await assert.rejects(sealer().open("x", { ...retry, consume: true }), TypeError);
  });
});
