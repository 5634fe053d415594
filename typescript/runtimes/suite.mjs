// The package's portable suite: every vector of spec/vectors and a check of every module (keys, rings and
// their loading rules, both token forms and every refusal, the digest, the strict JSON reader, the memory
// replay store, and the MCP adapter on the SDK's web-standard handler driven by the SDK's client), on
// standard APIs only, so that one bundle of it runs unchanged under Node, Deno, Bun, workerd and
// edge-runtime. run() returns a report: each check's verdict (compared across runtimes by run.mjs) and
// the failures (a check whose verdict is not the one the vectors or the test expect).
import {
  argumentsDigest,
  canonicalize,
  decodeUnverified,
  dumps,
  InvalidRequestState,
  isBindable,
  Key,
  Keyring,
  KeyringError,
  MemoryReplayStore,
  parseStrictJson,
  REASONS,
  StateSealer,
  UnbindableArguments,
} from "mrtr-state";
import { inputRequired, readRetry, REASON_META_KEY, StateBoundary } from "mrtr-state/mcp";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createMcpHandler, inputRequired as sdkInputRequired, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";

import vectors from "./out/vectors.mjs";

const ISSUER = "https://mcp.example.com";
const NOW = 1_767_225_600;

/** The verdict of a promise: "valid", the refusal's reason, or the class of anything else thrown. */
async function verdictOf(promise) {
  try {
    await promise;
    return "valid";
  } catch (error) {
    if (error instanceof InvalidRequestState) return error.message === REASONS[error.reason] ? error.reason : `${error.reason} (wrong message)`;
    return `threw ${error?.name ?? typeof error}`;
  }
}

function thrown(fn) {
  try {
    fn();
    return "loaded";
  } catch (error) {
    return error instanceof KeyringError ? "KeyringError" : `threw ${error?.name ?? typeof error}`;
  }
}

export async function run(runtime) {
  const verdicts = {};
  const failures = [];
  const check = (id, got, expected) => {
    verdicts[id] = got;
    if (JSON.stringify(got) !== JSON.stringify(expected)) failures.push({ id, got, expected });
  };
  const guard = async (id, fn) => {
    try {
      await fn();
    } catch (error) {
      failures.push({ id, got: `crashed: ${error?.name}: ${error?.message}`, expected: "no crash" });
    }
  };
  const { keys, tokens, encrypted, args, invalidKeys } = vectors;

  // Every vector.
  await guard("vectors", async () => {
    const open = (vector, file, ring) => {
      const setting = (name) => vector[name] ?? file.defaults[name];
      const sealer = new StateSealer(ring, {
        issuer: setting("issuer"),
        maxLifetime: setting("max_lifetime"),
        leeway: setting("leeway"),
        maxTokenBytes: setting("max_token_bytes"),
        requireArguments: setting("require_arguments") ?? false,
        clock: () => vector.now,
      });
      return sealer.open(vector.token, { user: vector.user, tool: vector.tool, prompt: vector.prompt, resource: vector.resource, arguments: Object.hasOwn(vector, "arguments") ? vector.arguments : {} });
    };
    const rings = { tokens: Keyring.fromJwks(keys.verifier_jwks), encrypted: Keyring.fromJwks(keys.encrypted_verifier_jwks) };
    for (const [name, file] of [["tokens", tokens], ["encrypted", encrypted]]) {
      for (const vector of file.vectors) {
        let got;
        try {
          const state = await open(vector, file, rings[name]);
          got = JSON.stringify(state) === JSON.stringify(vector.expected.state) ? "valid" : "valid (another state)";
        } catch (error) {
          got = error instanceof InvalidRequestState ? error.reason : `threw ${error?.name}`;
        }
        check(`${name}: ${vector.id}`, got, vector.expected.valid ? "valid" : vector.expected.reason);
      }
    }
    for (const vector of args.vectors) {
      let got;
      try {
        got = { canonical: canonicalize(vector.arguments), digest: argumentsDigest(vector.arguments) };
      } catch (error) {
        got = error instanceof UnbindableArguments ? "unbindable" : `threw ${error?.name}`;
      }
      check(`arguments: ${vector.id}`, got, vector.unbindable === true ? "unbindable" : { canonical: vector.canonical, digest: vector.digest });
      check(`arguments: ${vector.id} isBindable`, isBindable(vector.arguments), vector.unbindable !== true);
    }
    for (const vector of invalidKeys.vectors) {
      const load = vector.jwks !== undefined ? () => Keyring.fromJwks(vector.jwks) : vector.jwk !== undefined ? () => Key.fromJwk(vector.jwk) : undefined;
      check(`invalid-keys: ${vector.id}`, load === undefined ? "neither jwk nor jwks" : thrown(load), "KeyringError");
    }
    for (const [name, value] of Object.entries(keys)) {
      if (typeof value !== "object" || value === null) continue;
      if ("keys" in value) check(`keys: ${name} loads`, Keyring.fromJwks(value).keys.map((key) => key.kid), value.keys.map((key) => key.kid));
      else check(`keys: ${name} loads`, Key.fromJwk(value).kid, value.kid);
    }
    check("keys: the public JWKS of eddsa", Keyring.fromJwks({ keys: [keys.eddsa] }).publicJwks(), { keys: [keys.eddsa_public] });
  });

  // keys: generation, rings, the loading rules, no secret shown.
  await guard("keys", async () => {
    for (const alg of ["HS256", "EdDSA", "A256GCM"]) {
      const key = Key.generate(alg);
      check(`keys: generated ${alg} round-trips through its private JWK`, Key.fromJwk(key.privateJwk()).kid === key.kid, true);
      const secret = key.privateJwk().k ?? key.privateJwk().d;
      check(`keys: ${alg} shows no secret`, [String(key), JSON.stringify(key), String(new Keyring([key]))].some((text) => text.includes(secret)), false);
    }
    const ring = Keyring.generate("HS256").rotated(Key.generate("EdDSA"));
    check("keys: rotation puts the new key first", [ring.size, ring.signingKey.alg], [2, "EdDSA"]);
    check("keys: without() drops a key", ring.without(ring.keys[1].kid).size, 1);
    check("keys: fromEnv reads a JWKS from the env given", Keyring.fromEnv("MRTR_STATE_KEYS", { env: { MRTR_STATE_KEYS: JSON.stringify(keys.verifier_jwks) } }).size, 2);
    check("keys: fromEnv reads a bare secret", Keyring.fromEnv("K", { env: { K: keys.hs256.k } }).signingKey.alg, "HS256");
    const zero = "A".repeat(43);
    check("keys: D5 all-zero A256GCM key refused", thrown(() => Key.fromJwk({ kty: "oct", alg: "A256GCM", k: zero })), "KeyringError");
    check("keys: D5 weak HS256 JWK refused", thrown(() => Key.fromJwk({ kty: "oct", k: zero })), "KeyringError");
    check("keys: D3 kid with a space refused", thrown(() => Key.fromJwk({ ...keys.hs256, kid: "a b" })), "KeyringError");
    check(
      "keys: D4 one secret as HS256 and A256GCM refused",
      thrown(() => Keyring.fromJwks({ keys: [{ ...keys.a256gcm, kid: "enc" }, { kty: "oct", k: keys.a256gcm.k, kid: "sig" }] })),
      "KeyringError",
    );
    check("keys: x not of d refused", thrown(() => Key.fromJwk({ ...keys.eddsa, x: keys.unknown.x })), "KeyringError");
  });

  // The sealer, both forms, every refusal it can meet here; and byte-identical tokens for fixed inputs.
  await guard("sealer", async () => {
    const retry = { user: "alice", tool: "deploy", arguments: { env: "prod", n: 3 } };
    const fixed = { issuer: ISSUER, clock: () => NOW, entropy: (size) => new Uint8Array(size).fill(1) };
    for (const [alg, ring] of [
      ["HS256", Keyring.fromJwks({ keys: [keys.hs256] })],
      ["EdDSA", Keyring.fromJwks({ keys: [keys.eddsa] })],
      ["A256GCM", Keyring.fromJwks({ keys: [keys.a256gcm] })],
    ]) {
      const sealer = new StateSealer(ring, fixed);
      const token = await sealer.seal({ step: "confirm" }, retry);
      // HS256 and EdDSA are deterministic: every runtime must mint the same bytes (run.mjs compares them).
      verdicts[`sealer: ${alg} token`] = alg === "A256GCM" ? token.split(".").length : token;
      check(`sealer: ${alg} opens its own token`, await verdictOf(sealer.open(token, retry)), "valid");
      check(`sealer: ${alg} wrong_user`, await verdictOf(sealer.open(token, { ...retry, user: "bob" })), "wrong_user");
      check(`sealer: ${alg} wrong_tool`, await verdictOf(sealer.open(token, { ...retry, tool: "other" })), "wrong_tool");
      check(`sealer: ${alg} wrong_request`, await verdictOf(sealer.open(token, { ...retry, arguments: { env: "dev", n: 3 } })), "wrong_request");
      check(`sealer: ${alg} D2 null arguments`, await verdictOf(sealer.open(token, { ...retry, arguments: null })), "wrong_request");
      const later = new StateSealer(ring, { ...fixed, clock: () => NOW + 600 });
      check(`sealer: ${alg} expired`, await verdictOf(later.open(token, retry)), "expired");
      const earlier = new StateSealer(ring, { ...fixed, clock: () => NOW - 10 });
      check(`sealer: ${alg} issued_in_future`, await verdictOf(earlier.open(token, retry)), "issued_in_future");
      const other = new StateSealer(ring, { ...fixed, issuer: "https://other.example" });
      check(`sealer: ${alg} wrong_issuer`, await verdictOf(other.open(token, retry)), "wrong_issuer");
      const flipped = token.slice(0, -3) + (token.at(-3) === "A" ? "B" : "A") + token.slice(-2);
      check(`sealer: ${alg} a changed byte`, await verdictOf(sealer.open(flipped, retry)), "bad_signature");
      const stranger = new StateSealer(Keyring.generate(alg), fixed);
      check(`sealer: ${alg} unknown_key`, await verdictOf(stranger.open(token, retry)), "unknown_key");
      check(`sealer: ${alg} too_large`, await verdictOf(sealer.open("a".repeat(9000), retry)), "too_large");
      check(`sealer: ${alg} malformed`, await verdictOf(sealer.open("a.b", retry)), "malformed");
      check(`sealer: ${alg} D2 no token for null arguments`, await verdictOf(sealer.seal(1, { ...retry, arguments: null })), "threw UnbindableArguments");
    }
    const stuck = new StateSealer(Keyring.fromJwks({ keys: [keys.a256gcm] }), { ...fixed, entropy: (size) => new Uint8Array(size) });
    const ivs = new Set();
    for (let i = 0; i < 16; i++) ivs.add((await stuck.seal(1, retry)).split(".")[2]);
    check("sealer: D6 IVs never repeat under a stuck entropy hook", ivs.size, 16);
    const store = new MemoryReplayStore({ clock: () => NOW });
    const once = new StateSealer(Keyring.generate("EdDSA"), { ...fixed, replayStore: store });
    const token = await once.seal(1, retry);
    check("replay: first redemption", await verdictOf(once.open(token, { ...retry, consume: true })), "valid");
    check("replay: second redemption", await verdictOf(once.open(token, { ...retry, consume: true })), "replayed");
    const signed = await new StateSealer(Keyring.fromJwks({ keys: [keys.hs256] }), fixed).seal({ a: 1 }, retry);
    check("token: decodeUnverified", decodeUnverified(signed).claims.state, { a: 1 });
  });

  await guard("json", async () => {
    const bytes = (text) => new TextEncoder().encode(text);
    check("json: duplicate members refused", thrown(() => parseStrictJson(bytes('{"a":1,"a":2}'), { maxDepth: 8, iJson: true })), "threw JsonError");
    check("json: number literals kept", parseStrictJson(bytes('{"t":1.0}'), { maxDepth: 8, iJson: true }).numbers[0].text, "1.0");
    check("json: dumps", dumps({ b: [1, "é"], a: null }), '{"b":[1,"é"],"a":null}');
  });

  // The MCP adapter on the SDK's web-standard handler, driven by the SDK's client through the handler's fetch.
  await guard("mcp", async () => {
    const sealer = new StateSealer(Keyring.generate("EdDSA"), { issuer: ISSUER, replayStore: new MemoryReplayStore() });
    const confirm = sdkInputRequired.elicit({ message: "Sure?", requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] } });
    const handler = createMcpHandler(() => {
      const server = new McpServer({ name: "suite", version: "1.0.0" });
      new StateBoundary(sealer, { logger: { warn() {}, error() {} }, singleUse: true }).install(server);
      server.registerTool("delete", { inputSchema: z.object({ branch: z.string() }) }, async (args, ctx) => {
        const retry = readRetry(ctx);
        if (retry.state === undefined) return inputRequired({ confirm }, { state: { branch: args.branch } });
        return { content: [{ type: "text", text: `deleted ${retry.state.branch}` }] };
      });
      return server;
    });
    const connect = async (user) => {
      const client = new Client(
        { name: "suite-client", version: "1.0.0" },
        { capabilities: { elicitation: { form: {} } }, inputRequired: { autoFulfill: false }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      const authInfo = { token: "t", clientId: "c", scopes: [], extra: { sub: user } };
      await client.connect(new StreamableHTTPClientTransport(new URL("http://127.0.0.1/mcp"), { fetch: (url, init) => handler.fetch(new Request(url, init), { authInfo }) }));
      return client;
    };
    const alice = await connect("alice");
    const bob = await connect("bob");
    const first = await alice.callTool({ name: "delete", arguments: { branch: "b1" } }, { allowInputRequired: true });
    check("mcp: the first round is sealed", typeof first.requestState === "string" && first.requestState.split(".").length === 3, true);
    const answers = { confirm: { action: "accept", content: { ok: true } } };
    const refused = await bob.callTool({ name: "delete", arguments: { branch: "b1" }, requestState: first.requestState, inputResponses: answers });
    check("mcp: another user is refused", refused._meta?.[REASON_META_KEY], "wrong_user");
    const done = await alice.callTool({ name: "delete", arguments: { branch: "b1" }, requestState: first.requestState, inputResponses: answers });
    check("mcp: the retry is served", done.content, [{ type: "text", text: "deleted b1" }]);
    const again = await alice.callTool({ name: "delete", arguments: { branch: "b1" }, requestState: first.requestState, inputResponses: answers });
    check("mcp: single use", again._meta?.[REASON_META_KEY], "replayed");
    await handler.close();
  });

  return { runtime, checks: Object.keys(verdicts).length, verdicts, failures };
}
