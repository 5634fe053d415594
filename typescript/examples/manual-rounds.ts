import { Client, isInputRequiredResult, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createMcpHandler, inputRequired as sdk, McpServer } from "@modelcontextprotocol/server";
import { Keyring, StateSealer } from "mrtr-state";
import { StateBoundary, inputRequired, readRetry } from "mrtr-state/mcp";
import * as z from "zod";

// The server of the example above, in this process: delete_branch asks for a confirmation first.
const sealer = new StateSealer(Keyring.fromEnv(), { issuer: "https://git.example.com" });
const requestedSchema = { type: "object" as const, properties: { confirm: { type: "boolean" as const } }, required: ["confirm"] };
const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "git", version: "1.0.0" });
  new StateBoundary(sealer).install(server);
  server.registerTool("delete_branch", { inputSchema: z.object({ branch: z.string() }) }, async ({ branch }, ctx) => {
    const retry = readRetry(ctx);
    if (retry.accepted("confirm")?.confirm !== true) {
      return inputRequired({ confirm: sdk.elicit({ message: `Delete ${branch}?`, requestedSchema }) }, { state: { branch } });
    }
    return { content: [{ type: "text", text: `deleted ${String(retry.state?.branch)}` }] };
  });
  return server;
});
const authInfo = { token: "access-token", clientId: "git-client", scopes: [], extra: { sub: "alice" } };
const fetchHandler = (url: string | URL, init?: RequestInit) => handler.fetch(new Request(url, init), { authInfo });

// Manual rounds: the client does not answer input_required itself (autoFulfill: false), and a call that
// may be asked opts in with allowInputRequired; without it that answer rejects (UNSUPPORTED_RESULT_TYPE).
const client = new Client(
  { name: "git-client", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } }, inputRequired: { autoFulfill: false }, versionNegotiation: { mode: "auto" } },
);
await client.connect(new StreamableHTTPClientTransport(new URL("http://127.0.0.1/mcp"), { fetch: fetchHandler }));
const params = { name: "delete_branch", arguments: { branch: "old" } };
const first: unknown = await client.callTool(params, { allowInputRequired: true });
if (!isInputRequiredResult(first)) throw new Error("the server did not ask");
console.log(Object.keys(first.inputRequests ?? {}));   // [ 'confirm' ]: ask your user in your own way

// The retry: the same call with the answers and the requestState exactly as received (a sealed token).
// callTool's parameter type leaves these two fields out: passed in a variable, they go through as they are.
const answers = { confirm: { action: "accept" as const, content: { confirm: true } } };
const retry = { ...params, inputResponses: answers, requestState: first.requestState };
const done = await client.callTool(retry, { allowInputRequired: true });
console.log(isInputRequiredResult(done) ? "asked again" : done.content);   // [ { type: 'text', text: 'deleted old' } ]
await client.close();
await handler.close();
