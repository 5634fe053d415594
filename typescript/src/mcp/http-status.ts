/**
 * The HTTP status of a JSON-RPC error on Streamable HTTP under MCP 2026-07-28, which the TypeScript SDK
 * does not set for an error answered by a handler (or by the boundary).
 *
 * MCP 2026-07-28 (SEP-2575) says InvalidParams (-32602) MUST go out with HTTP 400 and MethodNotFound
 * (-32601) with HTTP 404 on Streamable HTTP, and the Python, Go and Java SDKs send exactly that; the
 * TypeScript SDK (`@modelcontextprotocol/server` 2.4) sends 200 for such an answer when it comes from
 * dispatch, for instance a refusal in the `"jsonrpc"` mode or arguments that cannot be bound.
 */

/** The MCP revision from which a JSON-RPC error's code sets the HTTP status (SEP-2575). */
const STATUS_REVISION = "2026-07-28";

/** The HTTP status SEP-2575 gives each JSON-RPC error code this module sets; every other code keeps 200. */
const ERROR_STATUS: ReadonlyMap<number, number> = new Map([
  [-32602, 400], // InvalidParams
  [-32601, 404], // MethodNotFound
]);

/**
 * `response` with the HTTP status MCP 2026-07-28 (SEP-2575) gives its JSON-RPC error: 400 for a -32602
 * (InvalidParams), 404 for a -32601 (MethodNotFound), as the Python, Go and Java SDKs send them.
 *
 * Only a 200 response to a request whose `MCP-Protocol-Version` header names 2026-07-28 or a later dated
 * revision, with an `application/json` body that is one JSON-RPC error answering a request (an `id` that
 * is not null) with one of those codes, is changed, and only its status: body and headers are the SDK's
 * own. An event stream (`text/event-stream`), a batch, a result, any other code, a 2025 request (no such
 * header) and any other status come back as they are. Read the body only through the returned response.
 *
 * ```ts
 * const handler = createMcpHandler(factory);
 * const response = await withErrorStatus(request, await handler.fetch(request, { authInfo }));
 * ```
 */
export async function withErrorStatus(request: Request, response: Response): Promise<Response> {
  const version = request.headers.get("mcp-protocol-version")?.trim();
  const type = response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  const modern = version !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= STATUS_REVISION;
  if (response.status !== 200 || !modern || type !== "application/json" || response.body === null) {
    return response;
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  const status = errorStatusOf(bytes) ?? response.status;
  return new Response(bytes, { status, statusText: status === response.status ? response.statusText : "", headers: response.headers });
}

/** The status for a body that is one JSON-RPC error answering a request with a code in ERROR_STATUS. */
function errorStatusOf(bytes: Uint8Array): number | undefined {
  let message: unknown;
  try {
    message = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
  if (typeof message !== "object" || message === null || Array.isArray(message)) return undefined;
  const { jsonrpc, id, error } = message as { jsonrpc?: unknown; id?: unknown; error?: unknown };
  if (jsonrpc !== "2.0" || (typeof id !== "string" && typeof id !== "number")) return undefined;
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "number" ? ERROR_STATUS.get(code) : undefined;
}
