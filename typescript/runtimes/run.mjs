// Runs the portable suite (suite.mjs) and every vector under each runtime, from the npm packages that ship
// them: Node (the reference), Deno, Bun, Cloudflare's workerd through miniflare (with and without
// nodejs_compat) and Vercel's edge-runtime. One bundle of the suite (esbuild, platform neutral, the built
// package and the MCP SDK inside) is run unchanged by each; every runtime must pass every check and give
// every check the verdict Node gives, and mint the same bytes for the deterministic tokens.
//
//   node run.mjs [--only name,name]      (after `npm run build` in the package)
//
// Then the Redis store (redis-check.mjs) under Node, Deno and Bun against a redis-server it starts.
// Prints one line per runtime, "RESULT {json}" with every runtime's counts, then "REDIS {json}" with the
// Redis store's. Exits 1 on any failure (and, under CI=true, when redis-server is missing).
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";

import { build } from "esbuild";
import { EdgeRuntime } from "edge-runtime";
import { Miniflare } from "miniflare";

const HERE = dirname(fileURLToPath(import.meta.url));
const PACKAGE = resolve(HERE, "..");
const OUT = join(HERE, "out");
const VECTORS = process.env.MRTR_STATE_VECTORS ?? resolve(PACKAGE, "..", "spec", "vectors");
const TIMEOUT_MS = 180_000;
/** The built package under test: dist/ of the package, or MRTR_STATE_DIST (another build, to compare). */
const DIST = process.env.MRTR_STATE_DIST === undefined ? join(PACKAGE, "dist") : resolve(process.env.MRTR_STATE_DIST);
const COMPATIBILITY_DATE = "2026-04-01";

const only = (() => {
  const at = process.argv.indexOf("--only");
  return at === -1 ? undefined : new Set(process.argv[at + 1].split(","));
})();

if (!existsSync(join(DIST, "index.js"))) {
  console.error("run.mjs: build the package first (npm run build in typescript/)");
  process.exit(2);
}
mkdirSync(OUT, { recursive: true });
const read = (name) => JSON.parse(readFileSync(join(VECTORS, name), "utf8"));
const vectors = {
  keys: read("keys.json"),
  tokens: read("tokens.json"),
  encrypted: read("encrypted.json"),
  args: read("arguments.json"),
  invalidKeys: read("invalid-keys.json"),
};
writeFileSync(join(OUT, "vectors.mjs"), `export default ${JSON.stringify(vectors)};\n`);

const common = {
  entryPoints: [join(HERE, "suite.mjs")],
  bundle: true,
  platform: "neutral",
  mainFields: ["module", "main"],
  // The MCP SDK picks its shims by condition: its web-standard (workerd, browser) builds run everywhere.
  conditions: ["workerd", "worker", "browser", "import", "default"],
  nodePaths: [join(PACKAGE, "node_modules")],
  alias: { "mrtr-state": join(DIST, "index.js"), "mrtr-state/mcp": join(DIST, "mcp", "index.js") },
  target: "es2022",
  logLevel: "error",
};
await build({ ...common, format: "esm", outfile: join(OUT, "suite.bundle.mjs") });
await build({ ...common, format: "iife", globalName: "MrtrSuite", outfile: join(OUT, "suite.iife.js") });
const cli = (name) => `import { run } from "./suite.bundle.mjs";\nconsole.log(JSON.stringify(await run(${JSON.stringify(name)})));\n`;
writeFileSync(join(OUT, "cli.mjs"), cli("cli"));
const bin = (name) => join(HERE, "node_modules", ".bin", name);

/** Run the CLI entry under a runtime's binary; its report, or a failure naming what went wrong. */
function subprocess(command, args) {
  const result = spawnSync(command, args, { cwd: OUT, encoding: "utf8", timeout: TIMEOUT_MS, env: { ...process.env, NO_COLOR: "1" } });
  if (result.error) throw new Error(`${command} did not run: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`exited ${result.status}: ${result.stderr.slice(-2000)}`);
  const line = result.stdout.trim().split("\n").at(-1);
  return JSON.parse(line);
}

async function workerd(flags) {
  const script = readFileSync(join(OUT, "suite.bundle.mjs"), "utf8") + `\nexport default { async fetch() { return Response.json(await run("workerd")); } };\n`;
  const mf = new Miniflare({ modules: true, script, compatibilityDate: COMPATIBILITY_DATE, compatibilityFlags: flags });
  try {
    const response = await mf.dispatchFetch("http://localhost/");
    const text = await response.text();
    if (response.status !== 200) throw new Error(`answered ${response.status}: ${text.slice(0, 2000)}`);
    return JSON.parse(text);
  } finally {
    await mf.dispose();
  }
}

async function edgeRuntime() {
  const initialCode =
    readFileSync(join(OUT, "suite.iife.js"), "utf8") +
    `\naddEventListener("fetch", (event) => event.respondWith(MrtrSuite.run("edge-runtime").then((report) => new Response(JSON.stringify(report)))));\n`;
  const runtime = new EdgeRuntime({ initialCode });
  const response = await runtime.dispatchFetch("http://localhost/");
  await response.waitUntil();
  return JSON.parse(await response.text());
}

const runtimes = [
  ["node", () => subprocess(process.execPath, ["cli.mjs"])],
  ["deno", () => subprocess(bin("deno"), ["run", "--quiet", "--no-config", "--no-lock", "--no-prompt", "cli.mjs"])],
  ["bun", () => subprocess(bin("bun"), ["cli.mjs"])],
  ["workerd", () => workerd([])],
  ["workerd+nodejs_compat", () => workerd(["nodejs_compat"])],
  ["edge-runtime", () => edgeRuntime()],
];

let reference;
let failed = false;
const summary = {};
for (const [name, start] of runtimes) {
  if (only !== undefined && name !== "node" && !only.has(name)) continue;
  let report;
  try {
    report = await start();
  } catch (error) {
    console.log(`${name}: FAILED to run: ${error.message}`);
    summary[name] = { ran: false };
    failed = true;
    continue;
  }
  reference ??= report;
  const differing = Object.keys(reference.verdicts).filter((id) => !isDeepStrictEqual(report.verdicts[id], reference.verdicts[id]));
  const missing = Object.keys(reference.verdicts).filter((id) => !(id in report.verdicts));
  summary[name] = { ran: true, checks: report.checks, failures: report.failures.length, differing: differing.length };
  const ok = report.failures.length === 0 && differing.length === 0 && missing.length === 0;
  failed ||= !ok;
  console.log(`${name}: ${report.checks} checks, ${report.failures.length} failures, ${differing.length} verdicts unlike node's${ok ? "" : " FAILED"}`);
  for (const failure of report.failures.slice(0, 20)) console.log(`  failure ${JSON.stringify(failure)}`);
  for (const id of differing.slice(0, 20)) console.log(`  differs ${id}: ${JSON.stringify(report.verdicts[id])} (node: ${JSON.stringify(reference.verdicts[id])})`);
}
console.log(`RESULT ${JSON.stringify(summary)}`);

// The Redis store (its own module, for runtimes with TCP sockets) under Node, Deno and Bun, against a
// redis-server this script starts on a free loopback port and always stops.
const redisSummary = {};
if (spawnSync("redis-server", ["--version"]).status !== 0) {
  console.log("redis: redis-server is not installed; the Redis store was not run under Deno and Bun");
  if (process.env.CI === "true") failed = true;
} else {
  const port = await new Promise((resolve, reject) => {
    const probe = createServer().once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port: free } = probe.address();
      probe.close(() => resolve(free));
    });
  });
  const server = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
  try {
    for (let i = 0; i < 100 && spawnSync("redis-cli", ["-p", String(port), "ping"], { encoding: "utf8" }).stdout?.trim() !== "PONG"; i++) await sleep(50);
    const env = { ...process.env, REDIS_URL: `redis://127.0.0.1:${port}`, NO_COLOR: "1" };
    for (const [name, command, args] of [
      ["node", process.execPath, ["redis-check.mjs"]],
      ["deno", bin("deno"), ["run", "-A", "--quiet", "redis-check.mjs"]],
      ["bun", bin("bun"), ["redis-check.mjs"]],
    ]) {
      if (only !== undefined && name !== "node" && !only.has(name)) continue;
      const result = spawnSync(command, args, { cwd: HERE, encoding: "utf8", timeout: TIMEOUT_MS, env });
      let report;
      try {
        report = JSON.parse(result.stdout.trim().split("\n").at(-1));
      } catch {
        report = { checks: 0, failures: [{ id: "run", got: `exited ${result.status}: ${result.stderr.slice(-1000)}` }] };
      }
      redisSummary[name] = { checks: report.checks, failures: report.failures.length };
      const ok = report.failures.length === 0 && report.checks > 0;
      failed ||= !ok;
      console.log(`redis store under ${name}: ${report.checks} checks, ${report.failures.length} failures${ok ? "" : " FAILED"}`);
      for (const failure of report.failures) console.log(`  failure ${JSON.stringify(failure)}`);
    }
  } finally {
    server.kill("SIGTERM");
    await new Promise((resolve) => (server.exitCode !== null ? resolve() : server.once("exit", resolve)));
  }
}
console.log(`REDIS ${JSON.stringify(redisSummary)}`);
process.exit(failed ? 1 : 0);
