/**
 * mrtr-state for the TypeScript MCP SDK (`@modelcontextprotocol/server` 2.4.x, the releases it is tested with; a peer dependency):
 * `requestState` as tokens of the profile, sealed bound to the authenticated user, the target and the
 * arguments, and opened before any handler runs, with the Python boundary's refusals.
 *
 * ```ts
 * import { Keyring, StateSealer } from "mrtr-state";
 * import { StateBoundary, inputRequired, readRetry } from "mrtr-state/mcp";
 *
 * const sealer = new StateSealer(Keyring.fromEnv(), { issuer: "https://git.example.com" });
 * new StateBoundary(sealer).install(server); // an McpServer or a lowlevel Server
 * ```
 *
 * Implements rule AGT-18 of the Agent Wranglers agents-as-users playbook
 * (https://agentwranglers.se/playbook/agents-as-users/mcp-servers/signed-request-state, CC BY 4.0).
 */

export { handlerTableProblem, StateBoundary, SUPPORTED_SDK, type BoundaryLogger, type StateBoundaryOptions, type ToolRefusal } from "./boundary.js";
export { withErrorStatus } from "./http-status.js";
export { authenticatedSubject, type Principal } from "./principal.js";
export { jsonrpcError, REASON_META_KEY, toolError } from "./refusal.js";
export { inputRequired, readRetry, type Retry } from "./rounds.js";
export { TARGET_METHODS, targetOf, type Target, type TargetMethod } from "./request.js";
