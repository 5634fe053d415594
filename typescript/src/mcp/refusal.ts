/**
 * How a refused `requestState` is answered on the wire, as the Python boundary answers it (profile 8.3):
 *
 * - a tool error, for `tools/call` (the rule's check asks for one):
 *   `{"content": [{"type": "text", "text": "<sentence>"}], "isError": true, "_meta": {"io.github.mrtr-state/reason": "<code>"}}`
 * - a JSON-RPC error, for `prompts/get` and `resources/read` always, and for `tools/call` when the
 *   boundary is configured so: `{"code": -32602, "message": "<sentence>", "data": {"reason": "<code>"}}`
 *
 * The reason code sits in `_meta` rather than `structuredContent`, which is the tool's own data, must match
 * its `outputSchema`, and is meant for the model.
 */

import { ProtocolError, ProtocolErrorCode, type CallToolResult } from "@modelcontextprotocol/server";

import type { InvalidRequestState } from "../errors.js";

/** The `_meta` key of a refused tool call that holds the reason code. */
export const REASON_META_KEY = "io.github.mrtr-state/reason";

/** The `tools/call` result for a refused `requestState`: a tool error with the safe sentence and the code. */
export function toolError(refusal: InvalidRequestState): CallToolResult {
  return { content: [{ type: "text", text: refusal.message }], isError: true, _meta: { [REASON_META_KEY]: refusal.reason } };
}

/** The JSON-RPC error (`-32602`, invalid params) for a refused `requestState`. */
export function jsonrpcError(refusal: InvalidRequestState): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, refusal.message, { reason: refusal.reason });
}
