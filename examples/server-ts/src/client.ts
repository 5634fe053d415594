/**
 * A one-call command-line client of the example server on the official TypeScript SDK client
 * (`@modelcontextprotocol/client`, the 2026-07-28 revision, manual multi round-trip mode): it sends one
 * `tools/call`, retry fields included, and prints what came back. The cross-language test drives it.
 *
 *   echo '{"url": ..., "user": "alice", "tool": "delete_branch", "arguments": {...},
 *          "requestState": "...", "inputResponses": {...}}' | node dist/client.js
 *
 * prints one JSON line: {"resultType": "input_required", "requestState", "inputRequests"}, or
 * {"resultType": "complete", "isError", "text", "reason"} (reason: the `_meta` refusal code, or null), or
 * {"error": {"code", "message", "data"}} for a JSON-RPC error. Exit status 2 for a bad request line.
 */

import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { REASON_META_KEY } from "mrtr-state/mcp";

interface Call {
  readonly url: string;
  readonly user: string;
  readonly tool: string;
  readonly arguments?: Record<string, unknown>;
  readonly requestState?: string;
  readonly inputResponses?: Record<string, unknown>;
}

async function readCall(): Promise<Call> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const call = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Partial<Call>;
  if (typeof call.url !== "string" || typeof call.user !== "string" || typeof call.tool !== "string") {
    throw new TypeError('the call needs "url", "user" and "tool" strings');
  }
  return call as Call;
}

async function main(): Promise<void> {
  const call = await readCall();
  const client = new Client(
    { name: "mrtr-state-example-client-ts", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } }, inputRequired: { autoFulfill: false }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const headers = { Authorization: `Bearer ${call.user}-example-token` };
  await client.connect(new StreamableHTTPClientTransport(new URL(call.url), { requestInit: { headers } }));
  try {
    const params = {
      name: call.tool,
      arguments: call.arguments ?? {},
      ...(call.requestState === undefined ? {} : { requestState: call.requestState }),
      ...(call.inputResponses === undefined ? {} : { inputResponses: call.inputResponses }),
    };
    // The manual mode sends requestState and inputResponses; callTool's parameter type omits them.
    const result = (await client.callTool(params as never, { allowInputRequired: true } as never)) as unknown as Record<string, unknown>;
    if (result.resultType === "input_required") {
      print({ resultType: "input_required", requestState: result.requestState ?? null, inputRequests: result.inputRequests ?? null });
    } else {
      const content = Array.isArray(result.content) ? (result.content as { type: string; text?: string }[]) : [];
      const meta = (result._meta ?? {}) as Record<string, unknown>;
      print({ resultType: "complete", isError: result.isError === true, text: content.map((item) => item.text ?? "").join(""), reason: meta[REASON_META_KEY] ?? null });
    }
  } catch (error) {
    const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
    if (typeof code !== "number") throw error;
    print({ error: { code, message, data: data ?? null } });
  } finally {
    await client.close();
  }
}

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + "\n");
}

main().catch((error: unknown) => {
  process.stderr.write(`example client: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 2;
});
