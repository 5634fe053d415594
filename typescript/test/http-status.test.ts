/**
 * withErrorStatus: a JSON-RPC -32602 answer on Streamable HTTP under MCP 2026-07-28 goes out with HTTP 400
 * (SEP-2575), as the Python, Go and Java SDKs send it, where the TypeScript SDK's handler sends 200; every
 * other answer keeps its status, body and headers.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { createMcpHandler, inputRequired as sdkInputRequired, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";

import { Keyring, MemoryReplayStore, StateSealer } from "../src/index.js";
import { inputRequired, StateBoundary, withErrorStatus } from "../src/mcp/index.js";

const PROTOCOL = "2026-07-28";
const META = { "io.modelcontextprotocol/protocolVersion": PROTOCOL, "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } };
const quiet = { warn: () => {}, error: () => {} };

/** createMcpHandler with the boundary in the "jsonrpc" refusal mode and one tool that asks once. */
function handler() {
  const sealer = new StateSealer(Keyring.generate("EdDSA"), { issuer: "https://git.example.com", replayStore: new MemoryReplayStore() });
  return createMcpHandler(() => {
    const server = new McpServer({ name: "mrtr-status-test", version: "1.0.0" });
    new StateBoundary(sealer, { toolRefusal: "jsonrpc", logger: quiet }).install(server);
    server.registerTool("delete_branch", { inputSchema: z.object({ branch: z.string() }) }, async () =>
      inputRequired({ confirm: sdkInputRequired.elicit({ message: "Really?", requestedSchema: { type: "object", properties: {} } }) }, { state: { step: 1 } }),
    );
    return server;
  });
}

function request(method: string, params: Record<string, unknown>, headers: Record<string, string> = {}): Request {
  return new Request("http://127.0.0.1/mcp", {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": PROTOCOL,
      "Mcp-Method": method,
      ...(typeof params.name === "string" ? { "Mcp-Name": params.name } : {}),
      authorization: "Bearer t",
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { ...params, _meta: META } }),
  });
}

const AUTH = { authInfo: { token: "t", clientId: "c", scopes: [], extra: { sub: "alice" } } };

describe("withErrorStatus", () => {
  it("sends the boundary's -32602 refusal from createMcpHandler with HTTP 400, body and headers unchanged", async () => {
    const mcp = handler();
    for (const params of [
      { name: "delete_branch", arguments: { branch: "b" }, requestState: 42 }, // malformed: refused
      { name: "delete_branch", arguments: { branch: "b", n: 2 ** 60 } }, // arguments that cannot be bound
    ]) {
      const sdk = await mcp.fetch(request("tools/call", params), AUTH);
      const sdkBody = await sdk.clone().text();
      assert.equal(JSON.parse(sdkBody).error?.code, -32602, sdkBody);
      assert.equal(sdk.status, 200, "the SDK now sends its own status: withErrorStatus may be needless, say so in the README");
      const sent = await withErrorStatus(request("tools/call", params), sdk);
      assert.equal(sent.status, 400, JSON.stringify(params));
      assert.equal(await sent.text(), sdkBody);
      assert.equal(sent.headers.get("content-type"), sdk.headers.get("content-type"));
    }
    await mcp.close();
  });

  it("leaves a result, and the SDK's own statuses, as they are", async () => {
    const mcp = handler();
    const first = request("tools/call", { name: "delete_branch", arguments: { branch: "b" } });
    const sent = await withErrorStatus(first, await mcp.fetch(first, AUTH));
    assert.equal(sent.status, 200);
    assert.equal((await sent.json()).result?.resultType, "input_required");
    // A header mismatch: the SDK's 400 (-32020) stays 400.
    const mismatch = request("tools/call", { name: "delete_branch", arguments: { branch: "b" } }, { "Mcp-Name": "other" });
    assert.equal((await withErrorStatus(mismatch, await mcp.fetch(mismatch, AUTH))).status, 400);
    await mcp.close();
  });

  it("sends -32601 with 404 and changes nothing but a single JSON-RPC error with a request id, on the 2026-07-28 wire", async () => {
    const error = (code: number, id: unknown = 7) => JSON.stringify({ jsonrpc: "2.0", id, error: { code, message: "m" } });
    const json = { "content-type": "application/json", "x-kept": "yes" };
    const modern = new Request("http://127.0.0.1/mcp", { method: "POST", headers: { "MCP-Protocol-Version": PROTOCOL } });
    const status = async (body: string, headers: Record<string, string> = json, req = modern, code = 200) => {
      const sent = await withErrorStatus(req, new Response(body, { status: code, headers }));
      assert.equal(await sent.text(), body);
      assert.equal(sent.headers.get("x-kept"), headers["x-kept"] ?? null);
      return sent.status;
    };
    assert.equal(await status(error(-32602)), 400);
    assert.equal(await status(error(-32602, "a")), 400);
    assert.equal(await status(error(-32602), { "content-type": "application/json; charset=utf-8", "x-kept": "yes" }), 400);
    assert.equal(await status(error(-32601)), 404);
    assert.equal(await status(error(-32603)), 200); // another code
    assert.equal(await status(error(-32602, null)), 200); // no request id
    assert.equal(await status(`[${error(-32602)}]`), 200); // a batch
    assert.equal(await status(JSON.stringify({ jsonrpc: "2.0", id: 7, result: {} })), 200);
    assert.equal(await status("not json"), 200);
    assert.equal(await status(`event: message\ndata: ${error(-32602)}\n\n`, { "content-type": "text/event-stream" }), 200);
    assert.equal(await status(error(-32602), json, modern, 202), 202); // not a 200
    const legacy = new Request("http://127.0.0.1/mcp", { method: "POST", headers: { "MCP-Protocol-Version": "2025-11-25" } });
    assert.equal(await status(error(-32602), json, legacy), 200);
    assert.equal(await status(error(-32602), json, new Request("http://127.0.0.1/mcp", { method: "POST" })), 200);
  });
});
