// The Redis replay store (mrtr-state/redis, the built package) against a real redis-server at REDIS_URL,
// run unchanged by Node, Deno and Bun (run.mjs starts the server and stops it): the Python store's names,
// first-wins verdicts, one winner among concurrent redemptions, and a refusal (never an acceptance) when
// Redis cannot be reached. Prints one JSON report.
import { RedisReplayStore, redisKey } from "../dist/replay/redis.js";
import { InvalidRequestState, Keyring, replayKey, StateSealer } from "../dist/index.js";

const report = { checks: 0, failures: [] };
const check = (id, got, expected) => {
  report.checks++;
  if (JSON.stringify(got) !== JSON.stringify(expected)) report.failures.push({ id, got, expected });
};
const url = process.env.REDIS_URL;
const now = Date.now() / 1000;
const clock = () => now;
try {
  check("name", redisKey("mrtr-state:jti:", replayKey("https://mcp.example.com", "AAAAAAAAAAAAAAAAAAAAAA")), "mrtr-state:jti:sRsl-0bSJUNzIImd_W_EaD3zM5L7wTg4fZPbKaLVrVo");
  const store = await RedisReplayStore.fromUrl(url, { clock });
  const key = `iss#${Math.random().toString(36).slice(2)}`;
  check("first", await store.redeem(key, { expiresAt: now + 60 }), true);
  check("second", await store.redeem(key, { expiresAt: now + 60 }), false);
  const race = `iss#race-${Math.random().toString(36).slice(2)}`;
  const answers = await Promise.all(Array.from({ length: 8 }, () => store.redeem(race, { expiresAt: now + 60 })));
  check("one winner", answers.filter(Boolean).length, 1);
  const sealer = new StateSealer(Keyring.generate("EdDSA"), { issuer: "https://a.example", clock, replayStore: store });
  const token = await sealer.seal(1, { user: "alice", tool: "t", arguments: {} });
  const retry = { user: "alice", tool: "t", arguments: {}, consume: true };
  check("open once", await sealer.open(token, retry), 1);
  check("replayed", await sealer.open(token, retry).then(() => "valid", (e) => (e instanceof InvalidRequestState ? e.reason : String(e))), "replayed");
  await store.close();
  const dead = await RedisReplayStore.fromUrl("redis://127.0.0.1:1", { clock, timeout: 0.5 }).then(() => "connected", (e) => e.name);
  check("unreachable", dead, "ReplayStoreError");
} catch (error) {
  report.failures.push({ id: "crash", got: `${error?.name}: ${error?.message}`, expected: "no crash" });
}
console.log(JSON.stringify(report));
