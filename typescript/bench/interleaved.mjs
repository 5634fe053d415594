// One interleaved benchmark of two builds of the package on this runtime: each round runs the same
// operations on build A, then on build B (the order alternating), so both meet the same machine load.
//
//   node bench/interleaved.mjs BEFORE_DIR AFTER_DIR [rounds=15] [ms-per-round=300] [only=regex]
//
// BEFORE_DIR and AFTER_DIR each hold a built package (its index.js). Before timing, it checks that both
// builds mint byte-identical tokens for one ring, clock and entropy (HS256, EdDSA; A256GCM's IV is random)
// and open each other's tokens. It prints, per operation, the median operations per second of each build
// over the rounds and the ratio after/before.
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

const [beforeDir, afterDir, roundsText = "15", msText = "300", onlyText = ""] = process.argv.slice(2);
const only = new RegExp(onlyText);
if (!beforeDir || !afterDir) {
  console.error("usage: node bench/interleaved.mjs BEFORE_DIR AFTER_DIR [rounds] [ms-per-round]");
  process.exit(2);
}
const load = (dir) => import(pathToFileURL(resolve(dir, "index.js")).href);
const builds = { before: await load(beforeDir), after: await load(afterDir) };
const rounds = Number(roundsText);
const msPerRound = Number(msText);

const NOW = 1_767_225_600;
const ISSUER = "https://bench.example.com";
const retry = { user: "alice", tool: "deploy", arguments: { env: "prod", replicas: 3, tags: ["a", "b"], note: "x".repeat(64) } };
const state = { step: "confirm", plan: { items: [1, 2, 3], owner: "alice" } };
const entropy = (size) => new Uint8Array(size).fill(7);

// One private JWKS, made by the "before" build, loaded by both.
const jwks = {};
for (const alg of ["HS256", "EdDSA", "A256GCM"]) jwks[alg] = builds.before.Keyring.generate(alg).privateJwks();

function sealerFor(build, alg) {
  return new build.StateSealer(build.Keyring.fromJwks(jwks[alg]), { issuer: ISSUER, clock: () => NOW, entropy });
}

// Same tokens, same verdicts.
for (const alg of ["HS256", "EdDSA", "A256GCM"]) {
  const a = sealerFor(builds.before, alg);
  const b = sealerFor(builds.after, alg);
  const ta = await a.seal(state, retry);
  const tb = await b.seal(state, retry);
  if (alg !== "A256GCM" && ta !== tb) throw new Error(`${alg}: the builds mint different tokens`);
  if (JSON.stringify(await a.open(tb, retry)) !== JSON.stringify(state)) throw new Error(`${alg}: before cannot open after's token`);
  if (JSON.stringify(await b.open(ta, retry)) !== JSON.stringify(state)) throw new Error(`${alg}: after cannot open before's token`);
}
console.log("tokens: byte-identical for HS256 and EdDSA; every token opens on the other build");

const operations = {};
for (const alg of ["HS256", "EdDSA", "A256GCM"]) {
  const prepared = {};
  for (const [name, build] of Object.entries(builds)) {
    const sealer = sealerFor(build, alg);
    prepared[name] = { sealer, token: await sealer.seal(state, retry) };
  }
  operations[`seal ${alg}`] = (name) => prepared[name].sealer.seal(state, retry);
  operations[`open ${alg}`] = (name) => prepared[name].sealer.open(prepared[name].token, retry);
}
operations["argumentsDigest"] = (name) => builds[name].argumentsDigest(retry.arguments);
operations["load EdDSA JWK"] = (name) => builds[name].Key.fromJwk(jwks.EdDSA.keys[0]);
operations["load HS256 JWK"] = (name) => builds[name].Key.fromJwk(jwks.HS256.keys[0]);

async function rate(operation, name) {
  let count = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < msPerRound) {
    for (let i = 0; i < 20; i++) await operation(name);
    count += 20;
    elapsed = performance.now() - start;
  }
  return (count * 1000) / elapsed;
}

const median = (values) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)];
};

console.log(`runtime: ${typeof Deno !== "undefined" ? "deno" : typeof Bun !== "undefined" ? "bun" : `node ${process.version}`}; ${rounds} rounds of ${msPerRound} ms per build and operation`);
console.log("operation            before op/s    after op/s   after/before");
for (const [label, operation] of Object.entries(operations)) {
  if (!only.test(label)) continue;
  for (const name of ["before", "after"]) await rate(operation, name); // warm-up
  const results = { before: [], after: [] };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ["before", "after"] : ["after", "before"];
    for (const name of order) results[name].push(await rate(operation, name));
  }
  const before = median(results.before);
  const after = median(results.after);
  console.log(`${label.padEnd(20)} ${before.toFixed(0).padStart(11)} ${after.toFixed(0).padStart(13)} ${(after / before).toFixed(2).padStart(14)}`);
}
