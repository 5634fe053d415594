/** The Redis replay store: the Python store's keys and retention, first-wins, failing closed. */

import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { createClient } from "redis";

import { InvalidRequestState, Keyring, replayKey, ReplayStoreError, StateSealer } from "../src/index.js";
import { DEFAULT_PREFIX, RedisReplayStore, redisKey } from "../src/replay/redis.js";

const IN_CI = process.env.CI === "true";
const HAVE_SERVER = spawnSync("redis-server", ["--version"]).status === 0;
const MISSING = "redis-server is not installed; run scripts/ci-deps (or apt-get install redis-server)";
if (!HAVE_SERVER && IN_CI) throw new Error(`${MISSING} (CI=true: a missing tool is a failure)`);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

/** A throwaway redis-server on loopback: no persistence, its own port; the test stops it. */
async function startRedis(port?: number): Promise<{ url: string; port: number; stop: () => Promise<void> }> {
  port ??= await freePort();
  const child: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const probe = createClient({ url, socket: { reconnectStrategy: false } });
    probe.on("error", () => {});
    try {
      await probe.connect();
      await probe.close();
      break;
    } catch {
      await sleep(50);
    }
  }
  return {
    url,
    port,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}

describe("RedisReplayStore keys are the Python store's", () => {
  it("prefix + base64url(SHA-256(iss#jti)), for ASCII and non-ASCII issuers (values from mrtr_state.replay.replay_redis)", () => {
    assert.equal(
      redisKey(DEFAULT_PREFIX, replayKey("https://mcp.example.com", "AAAAAAAAAAAAAAAAAAAAAA")),
      "mrtr-state:jti:sRsl-0bSJUNzIImd_W_EaD3zM5L7wTg4fZPbKaLVrVo",
    );
    assert.equal(redisKey("app2:", replayKey("https://é.example", "x".repeat(22))), "app2:mAhsnvLaXT1vjBCrN9O6MqLJPVfYaihfR9sCwuzE3L4");
  });
});

describe("RedisReplayStore against a real redis-server", { skip: HAVE_SERVER ? false : MISSING }, () => {
  let server: { url: string; port: number; stop: () => Promise<void> };
  let now = 1_767_225_600;
  const clock = () => now;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server?.stop();
  });

  it("records with SET NX PX: first true, then false; the key lives exactly the retention", async () => {
    const store = await RedisReplayStore.fromUrl(server.url, { clock });
    try {
      assert.equal(await store.redeem("iss#one", { expiresAt: now + 600 }), true);
      assert.equal(await store.redeem("iss#one", { expiresAt: now + 600 }), false);
      const probe = createClient({ url: server.url });
      await probe.connect();
      const ttl = await probe.pTTL(store.redisKey("iss#one"));
      assert.ok(ttl > 599_000 && ttl <= 600_000, `PTTL ${ttl}`);
      assert.equal(await probe.get(store.redisKey("iss#one")), "1");
      await probe.close();
    } finally {
      await store.close();
    }
  });

  it("a sealer on the store opens a token once, then refuses it as replayed", async () => {
    const store = await RedisReplayStore.fromUrl(server.url, { clock });
    try {
      const sealer = new StateSealer(Keyring.generate("EdDSA"), { issuer: "https://a.example", clock, replayStore: store });
      const token = await sealer.seal({ n: 1 }, { user: "alice", tool: "t", arguments: {} });
      const retry = { user: "alice", tool: "t", arguments: {}, consume: true };
      assert.deepEqual(await sealer.open(token, retry), { n: 1 });
      await assert.rejects(sealer.open(token, retry), (e: unknown) => e instanceof InvalidRequestState && e.reason === "replayed");
    } finally {
      await store.close();
    }
  });

  it("concurrent redemptions of one key: exactly one wins", async () => {
    const stores = await Promise.all(Array.from({ length: 4 }, () => RedisReplayStore.fromUrl(server.url, { clock })));
    try {
      const answers = await Promise.all(stores.flatMap((store) => Array.from({ length: 8 }, () => store.redeem("iss#race", { expiresAt: now + 60 }))));
      assert.equal(answers.filter(Boolean).length, 1);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it("a retention already over by the store's clock is an error, not a silent forget", async () => {
    const store = await RedisReplayStore.fromUrl(server.url, { clock });
    try {
      await assert.rejects(store.redeem("iss#late", { expiresAt: now }), ReplayStoreError);
    } finally {
      await store.close();
    }
  });

  it("a Redis that goes away fails closed: store_unavailable, and no message names the URL", async () => {
    const own = await startRedis();
    const store = await RedisReplayStore.fromUrl(own.url, { clock, timeout: 0.5 });
    await own.stop();
    const sealer = new StateSealer(Keyring.generate("HS256"), { issuer: "https://a.example", clock, replayStore: store });
    const token = await sealer.seal(1, { user: "alice", tool: "t" });
    await assert.rejects(sealer.open(token, { user: "alice", tool: "t", consume: true }), (e: unknown) => {
      assert.ok(e instanceof InvalidRequestState);
      assert.equal(e.reason, "store_unavailable");
      assert.ok(!e.detail.includes("127.0.0.1") && !e.detail.includes(own.url), e.detail);
      return true;
    });
    await store.close();
    const unreachable = RedisReplayStore.fromUrl(own.url, { clock, timeout: 0.5 });
    await assert.rejects(unreachable, (e: unknown) => e instanceof ReplayStoreError && !e.message.includes("127.0.0.1"));
  });

  it("fromUrl's store reconnects after a Redis restart: fail closed while down, recover after (issue 24 item 7)", async () => {
    let own = await startRedis();
    const store = await RedisReplayStore.fromUrl(own.url, { clock, timeout: 0.5 });
    try {
      assert.equal(await store.redeem("iss#before", { expiresAt: now + 600 }), true);
      await own.stop();
      // Down: every redemption is refused at once, never accepted.
      for (let i = 0; i < 3; i++) await assert.rejects(store.redeem(`iss#down-${i}`, { expiresAt: now + 600 }), ReplayStoreError);
      own = await startRedis(own.port);
      // Back: the store finds the new server by itself, within a few seconds.
      let answer: boolean | undefined;
      for (let i = 0; i < 100 && answer === undefined; i++) {
        try {
          answer = await store.redeem("iss#after", { expiresAt: now + 600 });
        } catch (error) {
          assert.ok(error instanceof ReplayStoreError, String(error));
          await sleep(100);
        }
      }
      assert.equal(answer, true, "the store did not recover after Redis came back");
      assert.equal(await store.redeem("iss#after", { expiresAt: now + 600 }), false);
    } finally {
      await store.close();
      await own.stop();
    }
  });

  it("close() ends a store whose Redis is down, without waiting for it", async () => {
    const own = await startRedis();
    const store = await RedisReplayStore.fromUrl(own.url, { clock, timeout: 0.5 });
    await own.stop();
    await assert.rejects(store.redeem("iss#x", { expiresAt: now + 600 }), ReplayStoreError);
    await store.close();
  });
});
