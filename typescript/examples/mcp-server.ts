import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createMcpHandler, inputRequired as sdk, McpServer } from "@modelcontextprotocol/server";
import { Keyring, StateSealer } from "mrtr-state";
import { StateBoundary, inputRequired, readRetry } from "mrtr-state/mcp";
import * as z from "zod";

const sealer = new StateSealer(Keyring.fromEnv(), { issuer: "https://git.example.com" });
const requestedSchema = { type: "object" as const, properties: { confirm: { type: "boolean" as const } }, required: ["confirm"] };

// createMcpHandler builds a server per request: install the boundary in that factory.
const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "git", version: "1.0.0" });
  new StateBoundary(sealer).install(server);
  server.registerTool("delete_branch", { inputSchema: z.object({ branch: z.string() }) }, async ({ branch }, ctx) => {
    const retry = readRetry(ctx);                 // verified before this handler ran
    if (retry.accepted("confirm")?.confirm !== true) {
      return inputRequired({ confirm: sdk.elicit({ message: `Delete ${branch}?`, requestedSchema }) }, { state: { branch } });
    }
    return { content: [{ type: "text", text: `deleted ${String(retry.state?.branch)}` }] };
  });
  return server;
});

// The user arrives as the SDK's AuthInfo: your bearer authentication verifies the access token and puts its
// subject in extra.sub; here a fixed one, for a call in this process.
const authInfo = { token: "access-token", clientId: "git-client", scopes: [], extra: { sub: "alice" } };
const fetchHandler = (url: string | URL, init?: RequestInit) => handler.fetch(new Request(url, init), { authInfo });

// The TypeScript client speaks the legacy revision by default: it must opt in to 2026-07-28.
const client = new Client(
  { name: "git-client", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } },
);
client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { confirm: true } }));
await client.connect(new StreamableHTTPClientTransport(new URL("http://127.0.0.1/mcp"), { fetch: fetchHandler }));
console.log(await client.callTool({ name: "delete_branch", arguments: { branch: "old" } }));
await client.close();
await handler.close();
