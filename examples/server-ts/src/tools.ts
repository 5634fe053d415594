/** What both tools share: a failure the person should read, text results, the elicitation check. */

import type { CallToolResult, ServerContext } from "@modelcontextprotocol/server";

/** A failure the tool reports to the person (the SDK turns a thrown error into a tool error). */
export class ToolFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolFailure";
  }
}

/** A result of one text item. */
export function text(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }] };
}

/** Fail unless the request's client can ask the person (declared in the 2026-07-28 per-request envelope). */
export function needsElicitation(ctx: ServerContext, tool: string): void {
  const envelope = ctx.mcpReq.envelope as Readonly<Record<string, unknown>> | undefined;
  const capabilities = envelope?.["io.modelcontextprotocol/clientCapabilities"] as { elicitation?: unknown } | undefined;
  if (capabilities?.elicitation === undefined) throw new ToolFailure(`${tool} needs a client that can ask the person (elicitation).`);
}
