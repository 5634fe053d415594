/**
 * The Durable Object replay store in Node, against an in-memory double of the object's storage (the real
 * workerd runs it in examples/worker's tests): the Redis store's names and verdicts, failing closed.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { InvalidRequestState, Keyring, replayKey, ReplayStoreError, StateSealer } from "../src/index.js";
import { DurableObjectReplayStore, ReplayStoreObject, type DurableObjectStorageLike } from "../src/replay/durable-object.js";
import { redisKey } from "../src/replay/redis.js";

/** Storage as a Durable Object's, in memory; `calls` counts the objects reached, by name. */
class MemoryStorage implements DurableObjectStorageLike {
  readonly data = new Map<string, unknown>();
  alarm: number | null = null;
  async get(key: string) {
    return this.data.get(key);
  }
  async put(key: string, value: number) {
    this.data.set(key, value);
  }
  async delete(keys: string[]) {
    keys.forEach((key) => this.data.delete(key));
    return keys.length;
  }
  async list(options: { limit?: number }) {
    return new Map([...this.data].sort(([a], [b]) => (a < b ? -1 : 1)).slice(0, options.limit));
  }
  async getAlarm() {
    return this.alarm;
  }
  async setAlarm(time: number) {
    this.alarm = time;
  }
}

function namespace() {
  const objects = new Map<string, { object: ReplayStoreObject; storage: MemoryStorage }>();
  return {
    objects,
    idFromName: (name: string) => name,
    get(id: never) {
      const name = id as unknown as string;
      if (!objects.has(name)) {
        const storage = new MemoryStorage();
        objects.set(name, { object: new ReplayStoreObject({ storage }), storage });
      }
      const { object } = objects.get(name)!;
      return { fetch: (request: Request) => object.fetch(request) };
    },
  };
}

describe("DurableObjectReplayStore", () => {
  const now = Date.now() / 1000;
  const clock = () => now;

  it("records the Redis store's name, first true then false, for the retention asked", async () => {
    const ns = namespace();
    const store = new DurableObjectReplayStore(ns, { clock });
    const key = replayKey("https://a.example", "A".repeat(22));
    assert.equal(store.storeKey(key), redisKey("mrtr-state:jti:", key));
    assert.equal(await store.redeem(key, { expiresAt: now + 600 }), true);
    assert.equal(await store.redeem(key, { expiresAt: now + 600 }), false);
    const [shard, { storage }] = [...ns.objects][0]!;
    assert.match(shard, /^mrtr-state:jti:shard-\d+$/);
    const expires = storage.data.get(store.storeKey(key)) as number;
    assert.ok(Math.abs(expires - (Date.now() + 600_000)) < 5_000, String(expires));
    assert.equal(storage.alarm, expires);
  });

  it("a sealer on it opens a token once, then refuses it as replayed; concurrent redemptions: one wins", async () => {
    const store = new DurableObjectReplayStore(namespace(), { clock });
    const sealer = new StateSealer(Keyring.generate("EdDSA"), { issuer: "https://a.example", clock, replayStore: store });
    const token = await sealer.seal({ n: 1 }, { user: "alice", tool: "t", arguments: {} });
    const retry = { user: "alice", tool: "t", arguments: {}, consume: true };
    const verdicts = await Promise.allSettled(Array.from({ length: 8 }, () => sealer.open(token, retry)));
    assert.equal(verdicts.filter((v) => v.status === "fulfilled").length, 1);
    for (const v of verdicts.filter((v) => v.status === "rejected")) {
      assert.ok(v.reason instanceof InvalidRequestState && v.reason.reason === "replayed");
    }
  });

  it("an expired record is a new redemption, and the alarm deletes expired names", async () => {
    const ns = namespace();
    const store = new DurableObjectReplayStore(ns, { clock });
    assert.equal(await store.redeem("iss#x", { expiresAt: now + 0.01 }), true);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(await store.redeem("iss#x", { expiresAt: now + 60 }), true);
    const { object, storage } = [...ns.objects.values()][0]!;
    storage.data.set("stale", Date.now() - 1);
    await object.alarm();
    assert.equal(storage.data.has("stale"), false);
    assert.equal(storage.data.has(store.storeKey("iss#x")), true);
  });

  it("fails closed: an unreachable, slow or odd object is a ReplayStoreError, never an acceptance", async () => {
    const failing = { idFromName: (name: string) => name, get: () => ({ fetch: async () => Promise.reject(new TypeError("network")) }) };
    await assert.rejects(new DurableObjectReplayStore(failing, { clock }).redeem("k", { expiresAt: now + 60 }), ReplayStoreError);
    const slow = { idFromName: (name: string) => name, get: () => ({ fetch: () => new Promise<Response>(() => {}) }) };
    await assert.rejects(new DurableObjectReplayStore(slow, { clock, timeout: 0.05 }).redeem("k", { expiresAt: now + 60 }), /in time/);
    const odd = { idFromName: (name: string) => name, get: () => ({ fetch: async () => Response.json({ first: "yes" }) }) };
    await assert.rejects(new DurableObjectReplayStore(odd, { clock }).redeem("k", { expiresAt: now + 60 }), /verdict/);
    const error = { idFromName: (name: string) => name, get: () => ({ fetch: async () => new Response("x", { status: 500 }) }) };
    await assert.rejects(new DurableObjectReplayStore(error, { clock }).redeem("k", { expiresAt: now + 60 }), /HTTP 500/);
    await assert.rejects(new DurableObjectReplayStore(namespace(), { clock }).redeem("k", { expiresAt: now }), /retention/);
  });

  it("the object refuses malformed requests without recording anything", async () => {
    const storage = new MemoryStorage();
    const object = new ReplayStoreObject({ storage });
    const post = (body: string) => object.fetch(new Request("https://x/redeem", { method: "POST", body }));
    for (const body of ["", "[]", '{"key":"","ms":1}', '{"key":"k","ms":0}', '{"key":"k","ms":1.5}', '{"key":"k","ms":999999999999}', `{"key":"${"k".repeat(2000)}","ms":1}`]) {
      assert.equal((await post(body)).status, 400, body);
    }
    assert.equal((await object.fetch(new Request("https://x/other"))).status, 404);
    assert.equal(storage.data.size, 0);
  });
});
