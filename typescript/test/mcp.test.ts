/**
 * The MCP adapter on the real TypeScript SDK: a modern (2026-07-28) server from createMcpHandler, called
 * in process by the SDK's client over its Streamable HTTP transport (a fetch function, no socket).
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { describe, it } from "node:test";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createMcpHandler, inputRequired as sdkInputRequired, McpServer, Protocol, Server, type CallToolResult } from "@modelcontextprotocol/server";
import * as z from "zod";

import { audience, decodeUnverified, Keyring, MemoryReplayStore, REASONS, StateSealer } from "../src/index.js";
import { handlerTableProblem, inputRequired, readRetry, REASON_META_KEY, StateBoundary, SUPPORTED_SDK, type StateBoundaryOptions } from "../src/mcp/index.js";

const ISSUER = "https://git.example.com";
const CONFIRM = sdkInputRequired.elicit({
  message: "Really?",
  requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] },
});
const YES = { confirm: { action: "accept", content: { confirm: true } } };
const quiet = { warn: () => {}, error: () => {} };

interface Setup {
  readonly now?: () => number;
  readonly boundary?: StateBoundaryOptions;
  readonly sealer?: StateSealer;
}

/** A server with a tool, a prompt and a resource that each ask once, then answer with the verified state. */
function serve(setup: Setup = {}) {
  const clock = setup.now ?? (() => Date.now() / 1000);
  const sealer = setup.sealer ?? new StateSealer(Keyring.generate("EdDSA"), { issuer: ISSUER, clock, replayStore: new MemoryReplayStore({ clock }) });
  const handlerCalls: string[] = [];
  const factory = () => {
    const server = new McpServer({ name: "mrtr-test", version: "1.0.0" });
    new StateBoundary(sealer, { logger: quiet, ...setup.boundary }).install(server);
    server.registerTool("delete_branch", { inputSchema: z.object({ branch: z.string() }) }, async (args, ctx) => {
      handlerCalls.push("delete_branch");
      const retry = readRetry(ctx);
      if (retry.state === undefined) return inputRequired({ confirm: CONFIRM }, { state: { branch: args.branch, step: "confirm" } });
      return { content: [{ type: "text", text: `deleted ${retry.state.branch} (${retry.accepted("confirm")?.confirm === true})` }] };
    });
    // Asks whatever its arguments (none are required).
    server.registerTool("confirm", { inputSchema: z.object({ note: z.string().optional() }) }, async (_args, ctx) => {
      handlerCalls.push("confirm");
      if (readRetry(ctx).state === undefined) return inputRequired({ confirm: CONFIRM }, { state: { step: 1 } });
      return { content: [{ type: "text", text: "confirmed" }] };
    });
    server.registerPrompt("summarize", { argsSchema: z.object({ topic: z.string() }) }, async (_args, ctx) => {
      handlerCalls.push("summarize");
      const retry = readRetry(ctx);
      if (retry.state === undefined) return inputRequired({ confirm: CONFIRM }, { state: { step: 1 } });
      return { messages: [{ role: "user", content: { type: "text", text: `step ${retry.state.step}` } }] };
    });
    // Registered after install: the boundary covers it too.
    server.registerResource("report", "file:///reports/q3.csv", {}, async (uri, ctx) => {
      const retry = readRetry(ctx);
      if (retry.state === undefined) return inputRequired({ confirm: CONFIRM }, { state: { step: 1 } });
      return { contents: [{ uri: uri.href, text: "q3" }] };
    });
    return server;
  };
  const handler = createMcpHandler(factory);
  const connect = async (user: string | undefined) => {
    const authInfo = { token: "t", clientId: "shared-client", scopes: [], ...(user === undefined ? {} : { extra: { sub: user } }) };
    const client = new Client(
      { name: "mrtr-test-client", version: "1.0.0" },
      { capabilities: { elicitation: { form: {} } }, inputRequired: { autoFulfill: false }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL("http://127.0.0.1/mcp"), { fetch: (url, init) => handler.fetch(new Request(url, init), { authInfo }) }),
    );
    return client;
  };
  return { sealer, connect, handlerCalls, close: () => handler.close() };
}

async function firstRound(client: Client, name = "delete_branch", args: Record<string, unknown> = { branch: "release-1.2" }): Promise<string> {
  const result = (await call(client, { name, arguments: args }, { allowInputRequired: true })) as unknown as { requestState?: string };
  assert.equal(typeof result.requestState, "string");
  return result.requestState as string;
}

/** callTool with the retry fields (requestState, inputResponses) the client's manual mode sends but its types omit. */
function call(client: Client, params: Record<string, unknown>, options?: object): Promise<CallToolResult> {
  return client.callTool(params as never, options as never) as Promise<CallToolResult>;
}

function refusalOf(result: CallToolResult): string {
  assert.equal(result.isError, true);
  const reason = result._meta?.[REASON_META_KEY] as keyof typeof REASONS;
  assert.deepEqual(result.content, [{ type: "text", text: REASONS[reason] }]);
  return reason;
}

describe("StateBoundary on @modelcontextprotocol/server", () => {
  it("seals the outgoing requestState bound to the user, the tool and the arguments, and opens it on the retry", async () => {
    const { connect, close } = serve();
    const alice = await connect("alice");
    const token = await firstRound(alice);
    const { claims } = decodeUnverified(token);
    assert.equal(claims.sub, "alice");
    assert.equal(claims.aud, "tools/call:delete_branch");
    assert.equal(typeof claims.args_sha256, "string");
    assert.deepEqual(claims.state, { branch: "release-1.2", step: "confirm" });
    const done = await call(alice, { name: "delete_branch", arguments: { branch: "release-1.2" }, requestState: token, inputResponses: YES });
    assert.deepEqual(done.content, [{ type: "text", text: "deleted release-1.2 (true)" }]);
    await close();
  });

  it("refuses another user, tool, arguments, a changed byte and a non-string state as tool errors with the reason in _meta", async () => {
    const { connect, handlerCalls, close } = serve();
    const alice = await connect("alice");
    const bob = await connect("bob");
    const token = await firstRound(alice);
    const retry = { name: "delete_branch", arguments: { branch: "release-1.2" }, inputResponses: YES };
    const calls = handlerCalls.length;
    assert.equal(refusalOf(await call(bob, { ...retry, requestState: token })), "wrong_user");
    assert.equal(refusalOf(await call(alice, { ...retry, arguments: { branch: "main" }, requestState: token })), "wrong_request");
    const flipped = token.slice(0, -3) + (token.at(-3) === "A" ? "B" : "A") + token.slice(-2);
    assert.equal(refusalOf(await call(alice, { ...retry, requestState: flipped })), "bad_signature");
    assert.equal(refusalOf(await call(alice, { ...retry, requestState: "" })), "malformed");
    assert.equal(handlerCalls.length, calls, "a refused retry never reaches the handler");
    const prompt = await alice.getPrompt({ name: "summarize", arguments: { topic: "q3" } }, { allowInputRequired: true } as never);
    const promptToken = (prompt as unknown as { requestState: string }).requestState;
    assert.equal(refusalOf(await call(alice, { ...retry, requestState: promptToken })), "wrong_tool");
    await close();
  });

  it("refuses an expired state, and a second use of a single-use state as replayed", async () => {
    let now = 1_767_225_600;
    const { connect, close } = serve({ now: () => now, boundary: { singleUse: [audience({ tool: "delete_branch" })] } });
    const alice = await connect("alice");
    const retry = { name: "delete_branch", arguments: { branch: "release-1.2" }, inputResponses: YES };
    const token = await firstRound(alice);
    assert.equal((await call(alice, { ...retry, requestState: token })).isError, undefined);
    assert.equal(refusalOf(await call(alice, { ...retry, requestState: token })), "replayed");
    const late = await firstRound(alice);
    now += 600;
    assert.equal(refusalOf(await call(alice, { ...retry, requestState: late })), "expired");
    await close();
  });

  it("answers -32602 with data.reason on prompts/get and resources/read, and on tools/call when configured", async () => {
    const { connect, close } = serve({ boundary: { toolRefusal: "jsonrpc" } });
    const alice = await connect("alice");
    const bob = await connect("bob");
    const expectReason = (reason: string) => (error: unknown) => {
      const { code, message, data } = error as { code: number; message: string; data: { reason: string } };
      assert.equal(code, -32602);
      assert.equal(data.reason, reason);
      assert.ok(message.includes(REASONS[reason as keyof typeof REASONS]), message);
      return true;
    };
    const token = await firstRound(alice);
    await assert.rejects(call(bob, { name: "delete_branch", arguments: { branch: "release-1.2" }, requestState: token }), expectReason("wrong_user"));
    const prompt = (await alice.getPrompt({ name: "summarize", arguments: { topic: "q3" } }, { allowInputRequired: true } as never)) as unknown as {
      requestState: string;
    };
    assert.equal(decodeUnverified(prompt.requestState).claims.aud, "prompts/get:summarize");
    await assert.rejects(bob.getPrompt({ name: "summarize", arguments: { topic: "q3" }, requestState: prompt.requestState } as never), expectReason("wrong_user"));
    const resource = (await alice.readResource({ uri: "file:///reports/q3.csv" }, { allowInputRequired: true } as never)) as unknown as {
      requestState: string;
    };
    const { claims } = decodeUnverified(resource.requestState);
    assert.equal(claims.aud, "resources/read:file:///reports/q3.csv");
    assert.equal(Object.hasOwn(claims, "args_sha256"), false);
    await assert.rejects(bob.readResource({ uri: "file:///reports/q3.csv", requestState: resource.requestState } as never), expectReason("wrong_user"));
    const read = await alice.readResource({ uri: "file:///reports/q3.csv", requestState: resource.requestState } as never);
    assert.equal((read.contents[0] as { text: string }).text, "q3");
    await close();
  });

  it("requires the argument binding on tools: a token sealed without args_sha256 is refused as wrong_request", async () => {
    const sealer = new StateSealer(Keyring.generate("HS256"), { issuer: ISSUER });
    const { connect, close } = serve({ sealer });
    const alice = await connect("alice");
    const unbound = await sealer.seal({ branch: "x" }, { user: "alice", tool: "delete_branch" });
    assert.equal(refusalOf(await call(alice, { name: "delete_branch", arguments: { branch: "x" }, requestState: unbound })), "wrong_request");
    await close();
  });

  it("D2: arguments present but not an object (null, an array, a string) are unbindable: a bound token is refused wrong_request", async () => {
    const sealer = new StateSealer(Keyring.generate("HS256"), { issuer: ISSUER });
    const { connect, handlerCalls, close } = serve({ sealer });
    const alice = await connect("alice");
    const token = await sealer.seal({ branch: "x" }, { user: "alice", tool: "delete_branch", arguments: {} });
    const calls = handlerCalls.length;
    for (const args of [null, [1, 2], "branch"]) {
      assert.equal(refusalOf(await call(alice, { name: "delete_branch", arguments: args, requestState: token })), "wrong_request", JSON.stringify(args));
    }
    assert.equal(handlerCalls.length, calls, "a refused retry never reaches the handler");
    await close();
  });

  it("hands the SDK tools/call arguments null as absent (as Python's SDK reads them), and never binds null", async () => {
    const { connect, handlerCalls, close } = serve();
    const alice = await connect("alice");
    const calls = handlerCalls.length;
    // delete_branch needs a branch: the tool's own input check answers, as with arguments absent or {}.
    for (const args of [null, undefined, {}]) {
      const result = await call(alice, { name: "delete_branch", ...(args === undefined ? {} : { arguments: args }) }, { allowInputRequired: true });
      assert.equal(result.isError, true, JSON.stringify(args));
      assert.match(JSON.stringify(result.content), /Input validation error/, JSON.stringify(args));
      assert.equal(result._meta?.[REASON_META_KEY], undefined);
    }
    assert.equal(handlerCalls.length, calls, "the input check answers before the handler");
    // A tool that asks: arguments absent are {} and get a token; null is unbindable: -32602, no token.
    assert.equal(typeof (await firstRound(alice, "confirm", {})), "string");
    await assert.rejects(call(alice, { name: "confirm", arguments: null }, { allowInputRequired: true }), (error: unknown) => {
      assert.equal((error as { code: number }).code, -32602);
      assert.match((error as Error).message, /cannot be bound to a request state.*not a JSON object/);
      return true;
    });
    assert.deepEqual(handlerCalls.slice(calls), ["confirm", "confirm"]);
    // A string or an array stays the SDK's -32602 (MCP allows only an object), before the handler.
    for (const args of ["x", [1]]) {
      await assert.rejects(call(alice, { name: "confirm", arguments: args }, { allowInputRequired: true }), (error: unknown) => {
        assert.equal((error as { code: number }).code, -32602, JSON.stringify(args));
        return true;
      });
    }
    assert.equal(handlerCalls.length, calls + 2);
    await close();
  });

  it("answers unbindable arguments with -32602 and no token, and refuses to bind without a principal", async () => {
    const { connect, close } = serve();
    const alice = await connect("alice");
    await assert.rejects(firstRound(alice, "delete_branch", { branch: "x", id: 2 ** 60 }), (error: unknown) => {
      assert.equal((error as { code: number }).code, -32602);
      assert.match((error as Error).message, /cannot be bound/);
      return true;
    });
    const nobody = await connect(undefined);
    await assert.rejects(firstRound(nobody), (error: unknown) => (error as { code: number }).code === -32603);
    await close();
  });

  it("answers prompts/get arguments MCP does not allow (null, not an object, a value not a string) with -32602, not the SDK's -32603", async () => {
    const { connect, handlerCalls, close } = serve();
    const alice = await connect("alice");
    const calls = handlerCalls.length;
    for (const args of [null, "topic", [1], { topic: 2 ** 60 }, { topic: { deep: "x" } }]) {
      await assert.rejects(alice.getPrompt({ name: "summarize", arguments: args } as never, { allowInputRequired: true } as never), (error: unknown) => {
        assert.equal((error as { code: number }).code, -32602, JSON.stringify(args));
        assert.match((error as Error).message, /prompts\/get arguments must be an object of strings/);
        return true;
      });
    }
    assert.equal(handlerCalls.length, calls, "the handler never runs");
    await close();
  });

  it("hands inputResponses to the handler only with a verified state (profile 8.2)", async () => {
    const { connect, close } = serve();
    const alice = await connect("alice");
    const result = (await call(alice, { name: "delete_branch", arguments: { branch: "b" }, inputResponses: YES }, { allowInputRequired: true })) as unknown as {
      resultType: string;
    };
    assert.equal(result.resultType, "input_required"); // answers without a state are not taken as a yes
    await close();
  });

  it("answers an inputResponses entry that is no result with -32602 naming the entry (never its value) after the state opens", async () => {
    const { connect, handlerCalls, close } = serve();
    const alice = await connect("alice");
    const token = await firstRound(alice);
    const calls = handlerCalls.length;
    const bad = { confirm: "yes-secret" };
    const retry = { name: "delete_branch", arguments: { branch: "release-1.2" }, requestState: token, inputResponses: bad };
    await assert.rejects(call(alice, retry, { allowInputRequired: true }), (error: unknown) => {
      assert.equal((error as { code: number }).code, -32602);
      assert.match((error as Error).message, /inputResponses\["confirm"\] is not a result/);
      assert.doesNotMatch((error as Error).message, /yes-secret/);
      return true;
    });
    assert.equal(handlerCalls.length, calls); // the handler never ran
    // A refused state is refused first; on a first round the answers are dropped and the handler asks.
    const forged = await call(alice, { ...retry, requestState: "abc.def.ghi" }, { allowInputRequired: true });
    assert.equal(refusalOf(forged), "malformed");
    const first = (await call(alice, { ...retry, requestState: undefined }, { allowInputRequired: true })) as unknown as { resultType: string };
    assert.equal(first.resultType, "input_required");
    await close();
  });

  it("carries encrypted states when the ring's first key is an A256GCM key: the client cannot read them", async () => {
    const sealer = new StateSealer(Keyring.generate("A256GCM"), { issuer: ISSUER });
    const { connect, close } = serve({ sealer });
    const alice = await connect("alice");
    const bob = await connect("bob");
    const token = await firstRound(alice);
    assert.equal(token.split(".").length, 5);
    assert.throws(() => decodeUnverified(token));
    const retry = { name: "delete_branch", arguments: { branch: "release-1.2" }, inputResponses: YES };
    assert.equal(refusalOf(await call(bob, { ...retry, requestState: token })), "wrong_user");
    const done = await call(alice, { ...retry, requestState: token });
    assert.deepEqual(done.content, [{ type: "text", text: "deleted release-1.2 (true)" }]);
    await close();
  });

  it("a round that asks without a state still seals one, recording the keys asked, as the Python boundary does", () => {
    const result = inputRequired({ "😀": CONFIRM, "\uffff": CONFIRM, b: CONFIRM, a: CONFIRM });
    assert.deepEqual(JSON.parse(result.requestState as string), { asked: ["a", "b", "\uffff", "😀"] });
    assert.throws(() => inputRequired({}), RangeError);
  });

  it("readRetry refuses a context no boundary verified", () => {
    const ctx = { mcpReq: { requestState: () => undefined } } as never;
    assert.throws(() => readRetry(ctx), /no round a StateBoundary verified/);
  });

  it("checks its options and installs once", () => {
    const sealer = new StateSealer(Keyring.generate("HS256"), { issuer: ISSUER });
    assert.throws(() => new StateBoundary(sealer, { singleUse: true }), /replayStore/);
    assert.throws(() => new StateBoundary(sealer, { singleUse: ["delete_branch"] as never }), RangeError);
    assert.throws(() => new StateBoundary(sealer, { principal: "" }), TypeError);
    const server = new McpServer({ name: "x", version: "1" });
    const boundary = new StateBoundary(sealer).install(server);
    assert.throws(() => boundary.install(server), /already installed/);
    assert.throws(() => new StateBoundary(sealer).install(server), /already has a StateBoundary/);
  });

  it("the SDK still has the handler table install relies on (fails loudly when an SDK release changes it)", () => {
    for (const protocol of [new McpServer({ name: "x", version: "1" }).server, new Server({ name: "x", version: "1" }, { capabilities: { tools: {} } })]) {
      assert.equal(handlerTableProblem(protocol), undefined, `the SDK changed what StateBoundary.install patches: ${handlerTableProblem(protocol)}`);
    }
  });

  it("the installed SDK is inside the peer range the package declares", () => {
    const entry = createRequire(import.meta.url).resolve("@modelcontextprotocol/server");
    const sdk = JSON.parse(readFileSync(new URL("../package.json", pathToFileURL(entry)), "utf8")) as { name: string; version: string };
    assert.equal(sdk.name, "@modelcontextprotocol/server");
    const own = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { peerDependencies: Record<string, string> };
    assert.equal(own.peerDependencies["@modelcontextprotocol/server"], ">=2.4.0 <2.5.0");
    assert.match(sdk.version, /^2\.4\.\d+$/, `tested with ${sdk.version}, outside ${SUPPORTED_SDK}`);
  });

  it("install refuses, with a clear error, a server whose handler table is not the one it knows", () => {
    const sealer = new StateSealer(Keyring.generate("HS256"), { issuer: ISSUER });
    const install = (mutate: (protocol: Record<string, unknown>) => void) => {
      const server = new McpServer({ name: "x", version: "1" });
      mutate(server.server as unknown as Record<string, unknown>);
      return () => new StateBoundary(sealer).install(server);
    };
    const refused = /cannot install on this @modelcontextprotocol\/server \(@modelcontextprotocol\/server 2\.4\.x is what it is tested with\)/;
    assert.throws(install((p) => (p._requestHandlers = {})), refused);
    assert.throws(install((p) => (p._requestHandlers = new (class extends Map {})())), /not a plain Map/);
    assert.throws(install((p) => (p._requestHandlers = new Map([["tools/call", "not a function"]]))), /method names to functions/);
    assert.throws(install((p) => delete p._requestHandlers), /no own _requestHandlers/);
    assert.throws(() => new StateBoundary(sealer).install({ _requestHandlers: new Map() } as never), /no _onrequest method/);
    const original = Protocol.prototype.setRequestHandler;
    try {
      (Protocol.prototype as unknown as Record<string, unknown>).setRequestHandler = function (this: unknown) {};
      assert.throws(install(() => {}), /Protocol's setRequestHandler no longer uses _requestHandlers.set/);
    } finally {
      Protocol.prototype.setRequestHandler = original;
    }
  });
});
