// The Worker example in workerd (miniflare), driven by the MCP TypeScript SDK's client: the boundary seals
// and opens requestState on Cloudflare's runtime, and single use holds in the Durable Object store, with and
// without nodejs_compat. Run by `npm test` after `npm run build` (dist/worker.js).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Miniflare } from "miniflare";
import { decodeUnverified, Keyring } from "mrtr-state";
import { REASON_META_KEY } from "mrtr-state/mcp";

const SCRIPT = fileURLToPath(new URL("../dist/worker.js", import.meta.url));
const URL_MCP = "http://worker.example/mcp";
const YES = { confirm: { action: "accept", content: { confirm: true } } };
const ARGS = { repo: "acme/api", branch: "old-feature" };

for (const flags of [[], ["nodejs_compat"]]) {
  describe(`the Worker example in workerd${flags.length > 0 ? " with nodejs_compat" : ""}`, () => {
    let mf;
    const connect = async (token) => {
      const client = new Client(
        { name: "worker-test", version: "1.0.0" },
        { capabilities: { elicitation: { form: {} } }, inputRequired: { autoFulfill: false }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      const transport = new StreamableHTTPClientTransport(new URL(URL_MCP), {
        fetch: (url, init) => mf.dispatchFetch(String(url), init),
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      });
      await client.connect(transport);
      return client;
    };
    const ask = async (client) => {
      const result = await client.callTool({ name: "delete_branch", arguments: ARGS }, { allowInputRequired: true });
      assert.equal(typeof result.requestState, "string", JSON.stringify(result));
      return result.requestState;
    };
    const retry = (client, requestState) => client.callTool({ name: "delete_branch", arguments: ARGS, requestState, inputResponses: YES });

    before(async () => {
      mf = new Miniflare({
        modules: true,
        scriptPath: SCRIPT,
        compatibilityDate: "2026-04-01",
        compatibilityFlags: flags,
        bindings: { MRTR_STATE_KEYS: JSON.stringify(Keyring.generate("EdDSA").privateJwks()), MRTR_STATE_ISSUER: "https://worker.example" },
        durableObjects: { REPLAY: "ReplayStoreObject" },
      });
      await mf.ready;
    });
    after(async () => {
      await mf?.dispose();
    });

    it("seals the first round's state bound to the user, the tool and the arguments", async () => {
      const alice = await connect("alice-example-token");
      const token = await ask(alice);
      const { header, claims } = decodeUnverified(token);
      assert.equal(header.alg, "EdDSA");
      assert.equal(claims.sub, "alice");
      assert.equal(claims.aud, "tools/call:delete_branch");
      assert.equal(claims.iss, "https://worker.example");
      assert.equal(typeof claims.args_sha256, "string");
      assert.deepEqual(claims.state, { repo: "acme/api", branch: "old-feature", head: "4b1d0aa" });
    });

    it("refuses another user's state and other arguments before the tool runs", async () => {
      const alice = await connect("alice-example-token");
      const bob = await connect("bob-example-token");
      const token = await ask(alice);
      const refused = await retry(bob, token);
      assert.equal(refused.isError, true);
      assert.equal(refused._meta?.[REASON_META_KEY], "wrong_user");
      const other = await alice.callTool({ name: "delete_branch", arguments: { ...ARGS, branch: "release-1.0" }, requestState: token, inputResponses: YES });
      assert.equal(other._meta?.[REASON_META_KEY], "wrong_request");
    });

    it("serves the confirmed retry once; the Durable Object refuses the second as replayed", async () => {
      const alice = await connect("alice-example-token");
      const token = await ask(alice);
      const done = await retry(alice, token);
      assert.deepEqual(done.content, [{ type: "text", text: "Deleted acme/api@old-feature (was at 4b1d0aa)." }]);
      const again = await retry(alice, token);
      assert.equal(again._meta?.[REASON_META_KEY], "replayed");
    });

    it("of concurrent retries with one state, exactly one is served", async () => {
      const alice = await connect("alice-example-token");
      const token = await ask(alice);
      const results = await Promise.all(Array.from({ length: 8 }, () => retry(alice, token)));
      assert.equal(results.filter((result) => result.isError !== true).length, 1);
      assert.deepEqual(new Set(results.filter((result) => result.isError === true).map((result) => result._meta?.[REASON_META_KEY])), new Set(["replayed"]));
    });

    it("answers an unauthenticated request 401", async () => {
      const response = await mf.dispatchFetch(URL_MCP, { method: "POST", body: "{}", headers: { "Content-Type": "application/json" } });
      assert.equal(response.status, 401);
      await response.arrayBuffer();
    });
  });
}
