/**
 * The Redis stores on real topologies: WAIT on a primary with a replica, a Cluster of 3 primaries and 3
 * replicas, and a primary with a replica behind three Sentinels; a primary killed (SIGKILL) in each, and
 * a primary stalled (SIGSTOP) past the store timeout.
 * Every process is started and stopped here (test/redis-servers.ts). About 45 s on two busy cores, most
 * of it the two failovers (the cluster node timeout and Sentinel's down-after are 1 s); each suite is
 * bounded at 120 s.
 */

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { ReplayStoreError } from "../src/index.js";
import { RedisReplayStore, type RedisStoreLogger } from "../src/replay/redis.js";
import { cli, cluster, freePort, HAVE_REDIS, primaryWithReplicas, sentinels, slotOf, slotOwners, Topology, until, type RedisNode } from "./redis-servers.js";

const IN_CI = process.env.CI === "true";
const MISSING = "redis-server and redis-cli are not installed; run scripts/ci-deps (or apt-get install redis-server)";
if (!HAVE_REDIS && IN_CI) throw new Error(`${MISSING} (CI=true: a missing tool is a failure)`);
const SKIP = HAVE_REDIS ? false : MISSING;
const NOW = 1_767_225_600;
const clock = (): number => NOW;
const LATER = { expiresAt: NOW + 600 };

function capture(): RedisStoreLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, warn: (message) => lines.push(`warn ${message}`), info: (message) => lines.push(`info ${message}`) };
}

/** Redeem fresh keys until one is accepted; the number of refusals before it. Bounded by `seconds`. */
async function untilServing(store: RedisReplayStore, tag: string, seconds: number): Promise<number> {
  let refused = 0;
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    try {
      assert.equal(await store.redeem(`iss#${tag}-${refused}`, LATER), true, "a fresh key is accepted");
      return refused;
    } catch (error) {
      assert.ok(error instanceof ReplayStoreError, String(error));
      refused++;
      await sleep(100);
    }
  }
  throw new Error(`the store did not serve again within ${seconds} s`);
}

/**
 * Stall `node` for 0.8 s (SIGSTOP, below the cluster's 1 s failure detection) while `store` (timeout 0.3 s)
 * redeems `key`: refused as unavailable, never answered `replayed` by a second SET of its own, and the
 * node ran exactly one SET for it once resumed. About 1.5 s.
 */
async function stalledOnce(node: RedisNode, store: RedisReplayStore, key: string): Promise<void> {
  const before = node.setCalls();
  node.pause(true);
  try {
    await assert.rejects(store.redeem(key, LATER), (error: unknown) => error instanceof ReplayStoreError && /in time/.test(error.message));
    await sleep(500);
  } finally {
    node.pause(false);
  }
  await until("the stalled SET run", 10, () => cli(node.port, "GET", store.redisKey(key)) === "1");
  await sleep(300); // room for a re-sent SET to arrive, if the client sent one
  assert.equal(node.setCalls() - before, 1, "the SET NX was sent exactly once");
  assert.equal(await store.redeem(key, LATER), false, "the stalled redemption counts as made (fail closed)");
}

describe("WAIT on a primary with a replica", { skip: SKIP, timeout: 120_000 }, () => {
  const topology = new Topology();
  let primary: RedisNode;
  before(async () => {
    [primary] = (await primaryWithReplicas(topology, 1)) as [RedisNode];
  });
  after(() => topology.stop());

  it("waitReplicas 1: accepted once the replica acknowledged, and the second redemption is replayed", async () => {
    const store = await RedisReplayStore.fromUrl(primary.url, { clock, waitReplicas: 1, logger: capture() });
    try {
      assert.equal(await store.redeem("iss#wait-1", LATER), true);
      assert.equal(await store.redeem("iss#wait-1", LATER), false);
    } finally {
      await store.close();
    }
  });

  it("fewer replicas than waitReplicas in time is store_unavailable, and the key still counts as redeemed (fail closed)", async () => {
    const store = await RedisReplayStore.fromUrl(primary.url, { clock, waitReplicas: 2, waitTimeout: 0.1, logger: capture() });
    const plain = await RedisReplayStore.fromUrl(primary.url, { clock, logger: capture() });
    try {
      await assert.rejects(store.redeem("iss#wait-2", LATER), /did not confirm the redemption on 2 replica\(s\) in time \(1 acknowledged\)/);
      assert.equal(await plain.redeem("iss#wait-2", LATER), false);
    } finally {
      await store.close();
      await plain.close();
    }
  });

  it("waitTimeout must leave room within timeout, and waitReplicas is a small integer", async () => {
    await assert.rejects(RedisReplayStore.fromUrl(primary.url, { waitReplicas: 1, waitTimeout: 1, timeout: 1 }), RangeError);
    await assert.rejects(RedisReplayStore.fromUrl(primary.url, { waitReplicas: 1.5 }), RangeError);
    await assert.rejects(RedisReplayStore.fromUrl(primary.url, { connectTimeout: 0 }), RangeError);
  });

  it("an outage is logged once with its cause, never a key, and its end once", async () => {
    const own = await topology.node();
    const logger = capture();
    const store = await RedisReplayStore.fromUrl(own.url, { clock, timeout: 0.5, logger });
    try {
      await own.stop("SIGKILL");
      for (let i = 0; i < 5; i++) await assert.rejects(store.redeem(`iss#out-${i}`, LATER), ReplayStoreError);
      const warnings = logger.lines.filter((line) => line.startsWith("warn"));
      assert.equal(warnings.length, 1, logger.lines.join("\n"));
      assert.match(warnings[0]!, /^warn mrtr-state: the Redis replay store is unavailable, redemptions are refused until it answers: Redis could not record the redemption \(\w+\)$/);
      assert.ok(!logger.lines.join("\n").includes(store.redisKey("iss#out-0")) && !logger.lines.join("\n").includes(String(own.port)));
      await own.start([]);
      await untilServing(store, "back", 20);
      assert.deepEqual(logger.lines.slice(-1), ["info mrtr-state: the Redis replay store answers again"]);
    } finally {
      await store.close();
    }
  });

  it("a primary stalled past the timeout: store_unavailable, and its SET NX was sent once, never again", async () => {
    const own = await topology.node();
    const store = await RedisReplayStore.fromUrl(own.url, { clock, timeout: 0.3, logger: capture() });
    try {
      await stalledOnce(own, store, "iss#stalled-single");
    } finally {
      await store.close();
    }
  });
});

describe("RedisReplayStore.fromCluster on a Cluster of 3 primaries and 3 replicas", { skip: SKIP, timeout: 120_000 }, () => {
  const topology = new Topology();
  let nodes: RedisNode[];
  before(async () => {
    nodes = await cluster(topology);
  });
  after(() => topology.stop());

  it("writes the single store's key on the primary of its slot: first true, then false", async () => {
    const store = await RedisReplayStore.fromCluster(nodes[0]!.url, { clock, logger: capture() });
    try {
      assert.equal(await store.redeem("iss#cluster-1", LATER), true);
      assert.equal(await store.redeem("iss#cluster-1", LATER), false);
      const name = store.redisKey("iss#cluster-1");
      assert.equal(Number(cli(nodes[0]!.port, "CLUSTER", "KEYSLOT", name)), slotOf(name), "the test's slot function is Redis's");
      assert.equal(cli(slotOwners(nodes)(name), "GET", name), "1");
    } finally {
      await store.close();
    }
  });

  it("concurrent redemptions of one key through two clients: exactly one wins", async () => {
    const stores = await Promise.all([0, 1].map(() => RedisReplayStore.fromCluster(nodes.map((node) => node.url), { clock, logger: capture() })));
    try {
      const answers = await Promise.all(stores.flatMap((store) => Array.from({ length: 8 }, () => store.redeem("iss#cluster-race", LATER))));
      assert.equal(answers.filter(Boolean).length, 1);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it("an unreachable cluster rejects the builder, naming no host", async () => {
    const port = await freePort();
    await assert.rejects(
      RedisReplayStore.fromCluster(`redis://127.0.0.1:${port}`, { connectTimeout: 0.5, logger: capture() }),
      (error: unknown) => error instanceof ReplayStoreError && !error.message.includes("127.0.0.1"),
    );
  });

  it("a primary stalled past the timeout: store_unavailable, and its SET NX was sent once, never again", async () => {
    const store = await RedisReplayStore.fromCluster(nodes.map((node) => node.url), { clock, timeout: 0.3, logger: capture() });
    try {
      const owner = slotOwners(nodes);
      const key = "iss#stalled-cluster";
      await stalledOnce(nodes.find((node) => node.port === owner(store.redisKey(key)))!, store, key);
    } finally {
      await store.close();
    }
  });

  it("a primary killed: what was redeemed with WAIT stays redeemed, a store made before serves its slot again after the promotion, and a WAIT store the surviving primaries' slots", async () => {
    const logger = capture();
    const durable = await RedisReplayStore.fromCluster(nodes.map((node) => node.url), { clock, waitReplicas: 1, logger: capture() });
    const store = await RedisReplayStore.fromCluster(nodes.map((node) => node.url), { clock, timeout: 1, logger });
    try {
      assert.equal(await durable.redeem("iss#before-failover", LATER), true);
      const owner = slotOwners(nodes);
      const victimPort = owner(durable.redisKey("iss#before-failover"));
      // Fresh keys on the same primary: they can only be served again by the promoted replica.
      const fresh: string[] = [];
      for (let i = 0; fresh.length < 300 && i < 5000; i++) if (owner(store.redisKey(`iss#slot-${i}`)) === victimPort) fresh.push(`iss#slot-${i}`);
      const victim = nodes.find((node) => node.port === victimPort)!;
      await victim.stop("SIGKILL");
      let served = false;
      const deadline = Date.now() + 30_000;
      while (!served && Date.now() < deadline && fresh.length > 0) {
        try {
          served = await store.redeem(fresh.shift()!, LATER);
          assert.equal(served, true, "a fresh key is accepted");
        } catch (error) {
          assert.ok(error instanceof ReplayStoreError, String(error));
          await sleep(100);
        }
      }
      assert.ok(served, "the store did not serve the killed primary's slot within 30 s");
      assert.equal(await store.redeem("iss#before-failover", LATER), false, "the redemption made with WAIT survived the failover");
      // The WAIT store accepts on a surviving primary's slot, whose replica acknowledges: its WAIT goes to that
      // primary alone (through the cluster client, WAIT went to every primary, and the promoted one, which has no
      // replica, made every redemption of every slot "did not confirm").
      const elsewhere = Array.from({ length: 50 }, (_, i) => `iss#elsewhere-${i}`).filter((key) => owner(store.redisKey(key)) !== victimPort);
      let accepted = false;
      const reasons = new Set<string>();
      while (!accepted && Date.now() < deadline + 15_000 && elsewhere.length > 0) {
        try {
          accepted = await durable.redeem(elsewhere.shift()!, LATER);
          assert.equal(accepted, true, "a fresh key is accepted");
        } catch (error) {
          assert.ok(error instanceof ReplayStoreError, String(error));
          reasons.add(error.message);
          await sleep(200);
        }
      }
      assert.ok(accepted, `the WAIT store refused every fresh key on the surviving primaries: ${[...reasons].join("; ")}`);
      assert.equal(logger.lines.filter((line) => line.startsWith("warn")).length, 1, logger.lines.join("\n"));
      assert.equal(logger.lines.at(-1), "info mrtr-state: the Redis Cluster replay store answers again");
    } finally {
      await durable.close();
      await store.close();
    }
  });
});

describe("RedisReplayStore.fromSentinel on a primary, a replica and three Sentinels", { skip: SKIP, timeout: 120_000 }, () => {
  const topology = new Topology();
  const SERVICE = "mrtr";
  let data: RedisNode[];
  let watchers: RedisNode[];
  before(async () => {
    ({ data, sentinels: watchers } = await sentinels(topology, SERVICE));
  });
  after(() => topology.stop());

  const addresses = (): { host: string; port: number }[] => watchers.map((node) => ({ host: "127.0.0.1", port: node.port }));

  it("redeems on the primary Sentinel names: first true, then false, with WAIT for the replica", async () => {
    const store = await RedisReplayStore.fromSentinel(addresses(), SERVICE, { clock, waitReplicas: 1, logger: capture() });
    try {
      assert.equal(await store.redeem("iss#sentinel-1", LATER), true);
      assert.equal(await store.redeem("iss#sentinel-1", LATER), false);
      assert.equal(cli(data[0]!.port, "GET", store.redisKey("iss#sentinel-1")), "1");
    } finally {
      await store.close();
    }
  });

  it("no Sentinel reachable rejects the builder, naming no host", async () => {
    const port = await freePort();
    await assert.rejects(
      RedisReplayStore.fromSentinel([{ host: "127.0.0.1", port }], SERVICE, { connectTimeout: 0.5, logger: capture() }),
      (error: unknown) => error instanceof ReplayStoreError && !error.message.includes("127.0.0.1"),
    );
  });

  it("the primary killed: what was redeemed with WAIT stays redeemed, and the store serves the promoted replica", async () => {
    const logger = capture();
    const durable = await RedisReplayStore.fromSentinel(addresses(), SERVICE, { clock, waitReplicas: 1, logger: capture() });
    const store = await RedisReplayStore.fromSentinel(addresses(), SERVICE, { clock, logger });
    try {
      assert.equal(await durable.redeem("iss#before-switch", LATER), true);
      await data[0]!.stop("SIGKILL");
      await untilServing(store, "after-switch", 40);
      assert.equal(await store.redeem("iss#before-switch", LATER), false, "the redemption made with WAIT survived the failover");
      assert.equal(logger.lines.filter((line) => line.startsWith("warn")).length, 1, logger.lines.join("\n"));
    } finally {
      await durable.close();
      await store.close();
    }
  });
});
