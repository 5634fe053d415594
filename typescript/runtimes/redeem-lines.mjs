// Redeems replay-store keys with one long-lived npm Redis store (the built package, ../dist), one key a
// line, for the failover tests in tests/replay: a store must follow a failover while it runs, which a
// process per redemption cannot show. The line protocol of go/internal/cmd/redeemlines:
//
//   node runtimes/redeem-lines.mjs --cluster redis://127.0.0.1:7000,redis://127.0.0.1:7001 \
//       [--timeout 0.3] [--wait 1 --wait-timeout 0.2]
//   node runtimes/redeem-lines.mjs --url redis://127.0.0.1:6379/0
//
// (after `npm run build` in typescript/; times in seconds). Each line of stdin is "KEY EXPIRES_AT" (the
// store key, iss#jti, and the retention's end in seconds since the epoch); each answer is one line of
// stdout, {"first": true|false} or {"error": "..."}, in the order of the lines: a line is redeemed only
// once the one before it has its answer. It ends at the end of stdin. The store's own log is not shown.
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

import { RedisReplayStore } from "../dist/replay/redis.js";

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    cluster: { type: "string" },
    timeout: { type: "string" },
    wait: { type: "string" },
    "wait-timeout": { type: "string" },
  },
});
const options = { logger: { warn() {}, info() {} } };
if (values.timeout !== undefined) options.timeout = Number(values.timeout);
if (values.wait !== undefined) options.waitReplicas = Number(values.wait);
if (values["wait-timeout"] !== undefined) options.waitTimeout = Number(values["wait-timeout"]);

const answer = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
let store;
try {
  if (values.cluster !== undefined) store = await RedisReplayStore.fromCluster(values.cluster.split(","), options);
  else if (values.url !== undefined) store = await RedisReplayStore.fromUrl(values.url, options);
  else throw new Error("give --url or --cluster");
} catch (error) {
  answer({ error: `${error?.name}: ${error?.message}` });
  process.exit(2);
}
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  const [key, expires] = line.trim().split(" ");
  const expiresAt = Number(expires);
  if (!key || !Number.isInteger(expiresAt)) {
    answer({ error: "a line is KEY EXPIRES_AT" });
    continue;
  }
  try {
    answer({ first: await store.redeem(key, { expiresAt }) });
  } catch (error) {
    answer({ error: `${error?.name}: ${error?.message}` });
  }
}
await store.close();
