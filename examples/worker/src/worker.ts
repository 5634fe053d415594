/**
 * An MCP server on Cloudflare Workers with mrtr-state: the SDK's web-standard handler (`createMcpHandler`),
 * the `StateBoundary` around it, and single use kept in a Durable Object (`ReplayStoreObject`), which is
 * strongly consistent where Workers KV is not.
 *
 * `delete_branch` asks the person to confirm, sealing the branch and the commit it showed; the retry is
 * opened, bound to the user, the tool and the exact arguments, redeemed once in the Durable Object, and
 * only then does the handler run. Users are bearer tokens (`alice-example-token`, `bob-example-token`),
 * as in the other examples; a real deployment verifies its OAuth access tokens instead.
 *
 * Bindings (wrangler.toml): `MRTR_STATE_KEYS`, a secret (`wrangler secret put MRTR_STATE_KEYS`: a JWKS or
 * an HS256 secret); `REPLAY`, the Durable Object namespace of `ReplayStoreObject`; `MRTR_STATE_ISSUER`
 * (optional, default `https://tools.example.com`).
 */

import { createMcpHandler, inputRequired as sdk, McpServer, OAuthError, OAuthErrorCode, requireBearerAuth, type AuthInfo } from "@modelcontextprotocol/server";
import { audience, Keyring, StateSealer } from "mrtr-state";
import { DurableObjectReplayStore, type DurableObjectNamespaceLike } from "mrtr-state/durable-object";
import { inputRequired, readRetry, StateBoundary } from "mrtr-state/mcp";
import * as z from "zod";

// The Durable Object class the configuration binds as REPLAY: exported by the Worker's main module.
export { ReplayStoreObject } from "mrtr-state/durable-object";

/** What the Worker is given. */
export interface Env {
  readonly MRTR_STATE_KEYS: string;
  readonly MRTR_STATE_ISSUER?: string;
  readonly REPLAY: DurableObjectNamespaceLike;
}

const SCOPE = "tools";
const EXAMPLE_TOKENS: Readonly<Record<string, string>> = { "alice-example-token": "alice", "bob-example-token": "bob" };

/** The example's git host: branch heads by repository. A Worker keeps no state between requests, so this is fixed. */
const BRANCHES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "acme/api": { main: "9f2c1e7", "old-feature": "4b1d0aa", "release-1.0": "77e0c3b" },
};

const verifier = {
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const user = Object.hasOwn(EXAMPLE_TOKENS, token) ? EXAMPLE_TOKENS[token] : undefined;
    if (user === undefined) throw new OAuthError(OAuthErrorCode.InvalidToken, "unknown token");
    return { token, clientId: "example-client", scopes: [SCOPE], expiresAt: Math.floor(Date.now() / 1000) + 3600, extra: { sub: user } };
  },
};

function addTools(server: McpServer): void {
  server.registerTool(
    "delete_branch",
    { description: "Delete a branch, after the person confirms it.", inputSchema: z.object({ repo: z.string(), branch: z.string() }) },
    async ({ repo, branch }, ctx) => {
      const head = BRANCHES[repo]?.[branch];
      if (head === undefined || branch === "main") return { isError: true, content: [{ type: "text", text: `${repo} has no deletable branch '${branch}'.` }] };
      const retry = readRetry(ctx); // opened, bound and redeemed by the boundary before this runs
      if (retry.state === undefined || retry.accepted("confirm")?.confirm !== true) {
        const confirm = sdk.elicit({
          message: `Delete ${repo}@${branch} (at ${head})?`,
          requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] },
        });
        return inputRequired({ confirm }, { state: { repo, branch, head } });
      }
      return { content: [{ type: "text", text: `Deleted ${retry.state.repo}@${retry.state.branch} (was at ${retry.state.head}).` }] };
    },
  );
}

/** One handler per isolate and configuration: the ring is parsed once, not per request. */
let cached: { readonly env: Env; readonly handle: (request: Request) => Promise<Response> } | undefined;

function handlerFor(env: Env): (request: Request) => Promise<Response> {
  if (cached?.env === env) return cached.handle;
  const ring = Keyring.fromEnv("MRTR_STATE_KEYS", { env }); // the typed Env as it is: only MRTR_STATE_KEYS is read
  const replayStore = new DurableObjectReplayStore(env.REPLAY);
  const sealer = new StateSealer(ring, {
    issuer: env.MRTR_STATE_ISSUER ?? "https://tools.example.com",
    replayStore,
  });
  const mcp = createMcpHandler(() => {
    const server = new McpServer({ name: "mrtr-state-example-worker", version: "1.0.0" });
    addTools(server);
    new StateBoundary(sealer, { singleUse: [audience({ tool: "delete_branch" })] }).install(server);
    return server;
  });
  const gate = requireBearerAuth({ verifier, requiredScopes: [SCOPE] });
  const handle = async (request: Request): Promise<Response> => {
    if (new URL(request.url).pathname !== "/mcp") return new Response("Not found", { status: 404 });
    const auth = await gate(request); // headers only: the body of a refused request is never read
    if (auth instanceof Response) return auth;
    return mcp.fetch(request, { authInfo: auth });
  };
  cached = { env, handle };
  return handle;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    return handlerFor(env)(request);
  },
};
