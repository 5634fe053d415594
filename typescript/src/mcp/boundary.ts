/**
 * The boundary: seal every outgoing `requestState`, open every incoming one, before any handler runs.
 *
 * The TypeScript SDK's own extension point, `ServerOptions.requestState.verify`, cannot carry the profile:
 * it is given the state and a context that holds neither the tool, prompt or resource name nor the
 * arguments (so it cannot check `aud` or `args_sha256`); it has no outbound counterpart (a handler would
 * have to seal by hand, and could forget); and every refusal becomes one fixed `-32602` "Invalid or expired
 * requestState" with `data.reason: "invalid_request_state"`, never the tool error with the reason code
 * that profile section 8.3 asks for. So {@link StateBoundary} sits one level further out: it wraps the
 * server's request handlers for `tools/call`, `prompts/get` and `resources/read` (whoever registers them,
 * `McpServer` or a lowlevel `Server`, before or after `install`), and sees the raw request (`params.name`
 * or `params.uri`, `params.arguments` as sent, the lifted `requestState`) before the SDK's own
 * multi-round-trip seam and the handler. This uses the SDK's handler table (`Protocol._requestHandlers`,
 * a Map), which is not a public API; `install` checks its shape and refuses an SDK it does not recognise.
 *
 * Inbound, a `requestState` is opened with the request's user, target and arguments; the handler sees
 * the verified state through {@link readRetry}, never the token. A refusal is answered without calling
 * the handler, as a tool error or a JSON-RPC `-32602` error. Outbound, the `requestState` string of an
 * `input_required` result is sealed into a token bound to the same three.
 */

import { isInputRequiredResult, ProtocolError, ProtocolErrorCode, type McpServer, type Server, type ServerContext } from "@modelcontextprotocol/server";

import { bindingProblem } from "../binding/canonical.js";
import { InvalidRequestState } from "../errors.js";
import type { StateSealer } from "../sealer.js";
import { claimOf, textOf } from "./plaintext.js";
import { authenticatedSubject, type Principal } from "./principal.js";
import { jsonrpcError, toolError } from "./refusal.js";
import { isTargetMethod, promptArgumentsProblem, targetOf, type Target, type TargetMethod } from "./request.js";
import { markVerified } from "./rounds.js";

/** How a refused `requestState` on `tools/call` is answered: a tool error (default) or a JSON-RPC `-32602` error. */
export type ToolRefusal = "tool_error" | "jsonrpc";

/** Where the boundary reports refusals and failures; never given a token, a claim value or key material. */
export interface BoundaryLogger {
  warn(message: string): void;
  error(message: string): void;
}

/** How a {@link StateBoundary} is configured. */
export interface StateBoundaryOptions {
  /**
   * Who the state belongs to: by default {@link authenticatedSubject} (the subject a bearer token
   * verifier put in `AuthInfo.extra.sub`). A string binds every request to that one user, a deliberate
   * choice for a server without authentication (then the "another user" check means nothing). With no
   * principal the boundary refuses to seal or open (a JSON-RPC internal error).
   */
  readonly principal?: Principal;
  /** `"tool_error"` (default) or `"jsonrpc"`: how a refused state on `tools/call` is answered. */
  readonly toolRefusal?: ToolRefusal;
  /**
   * `true` to redeem every state once, or the `aud` values (`audience({tool: "delete_branch"})`) whose
   * states are single use. Needs a sealer made with a `replayStore`.
   */
  readonly singleUse?: boolean | readonly string[];
  /** Require the argument binding on `tools/call` and `prompts/get` (default true; never on `resources/read`). */
  readonly requireArguments?: boolean;
  /** Where refusals (warn) and sealing failures (error) are reported; default `console`. */
  readonly logger?: BoundaryLogger;
}

const NO_PRINCIPAL_WIRE = "The server cannot bind request state to a user: no authenticated principal.";
const badArguments = (problem: string) => `The request's arguments cannot be bound to a request state (they must be I-JSON): ${problem}.`;
const INTERNAL = "Internal error";
/** The answer to an `inputResponses` entry that is no result: it names the entry (quoted, cut short), never its value. */
const badResponse = (key: string) => {
  const name = JSON.stringify(key.length > 64 ? `${key.slice(0, 64)}...` : key);
  return `Invalid params: inputResponses[${name}] is not a result of the input request it answers (an object such as an ElicitResult).`;
};


type Handler = (request: { method: string; params?: unknown }, ctx: ServerContext) => Promise<unknown>;
type HandlerTable = Map<string, Handler>;

function checkSingleUse(singleUse: unknown): boolean | ReadonlySet<string> {
  if (typeof singleUse === "boolean") return singleUse;
  if (!Array.isArray(singleUse)) throw new TypeError("singleUse must be a boolean or an array of aud values such as 'tools/call:delete'");
  for (const aud of singleUse) {
    const [method, ...rest] = typeof aud === "string" ? aud.split(":") : [""];
    if (!isTargetMethod(method) || rest.join(":") === "") {
      throw new RangeError(`singleUse entries are aud values such as 'tools/call:delete_branch', not ${JSON.stringify(aud)}`);
    }
  }
  return new Set(singleUse as string[]);
}

/**
 * Carries `requestState` as tokens of the profile in a server built on `@modelcontextprotocol/server`.
 *
 * ```ts
 * const sealer = new StateSealer(Keyring.fromEnv(), { issuer: "https://git.example.com" });
 * new StateBoundary(sealer).install(mcpServer);
 * ```
 *
 * Handlers return {@link inputRequired}`(requests, { state })` and read the verified retry with
 * {@link readRetry}`(ctx)`. One boundary serves one server.
 */
export class StateBoundary {
  readonly #sealer: StateSealer;
  readonly #principal: Principal;
  readonly #toolRefusal: ToolRefusal;
  readonly #singleUse: boolean | ReadonlySet<string>;
  readonly #requireArguments: boolean;
  readonly #logger: BoundaryLogger;
  #installed = false;

  constructor(sealer: StateSealer, options: StateBoundaryOptions = {}) {
    if (typeof sealer !== "object" || sealer === null || typeof sealer.open !== "function") throw new TypeError("sealer must be a StateSealer");
    const principal = options.principal ?? authenticatedSubject;
    if (typeof principal === "string" ? principal === "" : typeof principal !== "function") {
      throw new TypeError("principal must be a non-empty string or a function of the request context");
    }
    const toolRefusal = options.toolRefusal ?? "tool_error";
    if (toolRefusal !== "tool_error" && toolRefusal !== "jsonrpc") throw new RangeError("toolRefusal must be 'tool_error' or 'jsonrpc'");
    this.#singleUse = checkSingleUse(options.singleUse ?? false);
    if (this.#singleUse !== false && sealer.replayStore === undefined) {
      throw new TypeError("singleUse needs a StateSealer made with a replayStore, e.g. new StateSealer(ring, { issuer, replayStore: new MemoryReplayStore() })");
    }
    this.#sealer = sealer;
    this.#principal = principal;
    this.#toolRefusal = toolRefusal;
    this.#requireArguments = options.requireArguments ?? true;
    this.#logger = options.logger ?? console;
  }

  /**
   * Put this boundary around `server`'s `tools/call`, `prompts/get` and `resources/read` handlers (an
   * `McpServer` or a lowlevel `Server`), those registered already and those registered later.
   *
   * @throws Error this boundary is already installed, or the SDK's handler table is not the one this
   *   package knows (another major version of `@modelcontextprotocol/server`).
   */
  install(server: McpServer | Server): this {
    if (this.#installed) throw new Error("this StateBoundary is already installed; make one per server");
    const protocol = ("server" in server ? server.server : server) as unknown as { _requestHandlers?: unknown };
    if (protocol._requestHandlers instanceof BoundTable) throw new Error("the server already has a StateBoundary");
    const problem = handlerTableProblem(protocol);
    if (problem !== undefined) {
      throw new Error(
        `mrtr-state/mcp cannot install on this @modelcontextprotocol/server (${SUPPORTED_SDK} is what it is tested with): ${problem}; ` +
          "it would otherwise leave request states unverified, so it refuses",
      );
    }
    const table = protocol._requestHandlers as HandlerTable;
    const bound = new BoundTable(this);
    for (const [method, handler] of table as HandlerTable) bound.set(method, handler);
    protocol._requestHandlers = bound;
    this.#installed = true;
    return this;
  }

  /** The handler for `method` with the boundary around it. @internal */
  wrap(method: TargetMethod, inner: Handler): Handler {
    return async (request, ctx) => this.#serve(method, inner, request, ctx);
  }

  async #serve(method: TargetMethod, inner: Handler, request: { method: string; params?: unknown }, ctx: ServerContext): Promise<unknown> {
    const wire: unknown = ctx.mcpReq.requestState();
    let user: string | undefined;
    let handlerCtx: ServerContext;
    if (wire === undefined || wire === null) {
      // A first round (absent, or an explicit null): nothing to verify, and no responses to hand over.
      handlerCtx = this.#context(ctx, { requestState: undefined, claim: undefined });
    } else {
      const target = this.#target(method, request.params);
      user = this.#user(ctx);
      let claim;
      try {
        claim = await this.#sealer.open(wire, {
          user,
          ...target.binding,
          arguments: target.arguments,
          consume: this.#isSingleUse(target),
          requireArguments: this.#requireArguments && method !== "resources/read",
        });
      } catch (error) {
        if (!(error instanceof InvalidRequestState)) throw error;
        this.#logger.warn(`requestState refused on ${method}: ${error.reason} (${error.detail})`);
        if (method !== "tools/call" || this.#toolRefusal === "jsonrpc") throw jsonrpcError(error);
        return toolError(error);
      }
      // With a verified state, an answer that is no result of any input request ("yes" where an
      // ElicitResult belongs, or a wrapped {method, result}) is a -32602, as Python's and Java's boundaries
      // answer it; a refused state is refused first, and on a first round every answer is dropped. The SDK
      // drops such entries and records their keys; the handler would ask again.
      const bad = ctx.mcpReq.droppedInputResponseKeys?.[0];
      if (bad !== undefined) {
        this.#logger.warn(`an inputResponses entry on ${method} is not a result`);
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, badResponse(bad));
      }
      handlerCtx = this.#context(ctx, { requestState: textOf(claim), claim });
    }
    if (method === "prompts/get") {
      // Arguments MCP does not allow on prompts/get (null, not an object, a value that is not a string): the
      // SDK would answer -32603 as it parses them for the handler; Python's answers -32602 (a first round of
      // unbindable arguments, profile 8.2, or the SDK's own check). A retry's state was opened first.
      const problem = promptArgumentsProblem(request.params);
      if (problem !== undefined) {
        this.#logger.warn(`the arguments on prompts/get are not an object of strings`);
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, problem);
      }
    }
    const result = await inner(method === "tools/call" ? withoutNullArguments(request) : request, handlerCtx);
    return this.#seal(method, request.params, ctx, result, user);
  }

  /** The context the handler gets: the verified text as its requestState, marked as verified. */
  #context(ctx: ServerContext, round: { requestState: string | undefined; claim: ReturnType<typeof claimOf> | undefined }): ServerContext {
    const mcpReq = { ...ctx.mcpReq, requestState: (() => round.requestState) as ServerContext["mcpReq"]["requestState"] };
    if (round.requestState === undefined) delete mcpReq.inputResponses; // answers to no verified round (profile 8.2)
    markVerified(mcpReq, round);
    return { ...ctx, mcpReq } as ServerContext;
  }

  async #seal(method: TargetMethod, params: unknown, ctx: ServerContext, result: unknown, knownUser: string | undefined): Promise<unknown> {
    if (!isInputRequiredResult(result)) return result;
    const state: unknown = result.requestState;
    if (state === undefined) return result;
    if (typeof state !== "string") {
      this.#logger.error(`an input_required result on ${method} has a requestState that is not a string`);
      throw new ProtocolError(ProtocolErrorCode.InternalError, INTERNAL);
    }
    const target = this.#target(method, params);
    const user = knownUser ?? this.#user(ctx);
    let token: string;
    try {
      token = await this.#sealer.seal(claimOf(state), { user, ...target.binding, arguments: target.arguments });
    } catch (error) {
      // Only now find out whose fault it is: the client's arguments (no digest exists for them), or the
      // server's (a state too large, a ring that cannot sign).
      const problem = target.arguments === undefined ? undefined : bindingProblem(target.arguments);
      if (problem !== undefined) {
        this.#logger.warn(`arguments on ${method} cannot be bound to requestState: ${problem}`);
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, badArguments(problem));
      }
      this.#logger.error(`cannot seal requestState on ${method}: ${error instanceof Error ? error.message : String(error)}`);
      throw new ProtocolError(ProtocolErrorCode.InternalError, INTERNAL);
    }
    return { ...result, requestState: token };
  }

  #isSingleUse(target: Target): boolean {
    return typeof this.#singleUse === "boolean" ? this.#singleUse : this.#singleUse.has(target.aud);
  }

  #target(method: TargetMethod, params: unknown): Target {
    try {
      return targetOf(method, params);
    } catch (error) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, error instanceof Error ? error.message : `${method} params are malformed`);
    }
  }

  #user(ctx: ServerContext): string {
    const principal = this.#principal;
    if (typeof principal === "string") return principal;
    let user: string | undefined;
    try {
      user = principal(ctx);
    } catch (error) {
      // A failing principal function fails closed.
      this.#logger.error(`the principal function threw on ${ctx.mcpReq.method}: ${error instanceof Error ? error.name : typeof error}`);
      throw new ProtocolError(ProtocolErrorCode.InternalError, INTERNAL);
    }
    if (typeof user === "string" && user !== "") return user;
    this.#logger.error(
      `no authenticated principal to bind requestState to on ${ctx.mcpReq.method}: use a bearer token verifier that sets ` +
        "AuthInfo.extra.sub, or give StateBoundary a principal",
    );
    throw new ProtocolError(ProtocolErrorCode.InternalError, NO_PRINCIPAL_WIRE);
  }

  /** The boundary's settings, never a key. */
  toString(): string {
    const singleUse = typeof this.#singleUse === "boolean" ? String(this.#singleUse) : JSON.stringify([...this.#singleUse]);
    return `StateBoundary(sealer=${this.#sealer}, toolRefusal=${this.#toolRefusal}, singleUse=${singleUse})`;
  }
}

/**
 * The `tools/call` request the SDK is handed: `"arguments": null` taken away, so that the SDK reads it as
 * absent, as the Python and Java SDKs read it (the TypeScript SDK's schema would answer `-32602` before the
 * tool's own input check, where Python's answers the tool's error). Only what the SDK and the handler see
 * changes: the boundary binds the arguments as sent, and `null` is unbindable (profile 3.4, 8.2), so a
 * handler that asks on it gets `-32602` and no token, and a retry carrying it opens no state bound to
 * arguments (refused `wrong_request` before this runs).
 */
function withoutNullArguments(request: { method: string; params?: unknown }): { method: string; params?: unknown } {
  const params = request.params;
  if (typeof params !== "object" || params === null || !Object.hasOwn(params, "arguments")) return request;
  const { arguments: args, ...rest } = params as { arguments?: unknown };
  return args === null ? { ...request, params: rest } : request;
}

/** The versions of `@modelcontextprotocol/server` the adapter is tested with (its peer dependency range). */
export const SUPPORTED_SDK = "@modelcontextprotocol/server 2.4.x";

/** Methods of the SDK's `Protocol` whose source must read or write the handler table as `install` expects. */
const TABLE_USES: readonly (readonly [string, string])[] = [
  ["_onrequest", "._requestHandlers.get("], // dispatch looks the handler up by method, at each request
  ["setRequestHandler", "._requestHandlers.set("], // registration stores it, so BoundTable.set sees it
];

/**
 * Why `protocol` (a `Server`, or an `McpServer`'s `.server`) does not have the handler table `install`
 * relies on, or `undefined` when it has it. `install` replaces `Protocol._requestHandlers`, a private
 * member, so it checks everything it depends on first: the table is the server's own, plain `Map` of
 * method names to handler functions; the server's dispatch (`_onrequest`) reads the table with `get` at
 * each request and its registration (`setRequestHandler`) writes it with `set`. Any difference (another SDK release reorganised it)
 * is a reason to refuse: a boundary that is silently bypassed would hand the client's state to the
 * handler unverified.
 */
export function handlerTableProblem(protocol: unknown): string | undefined {
  // Checked by shape, not by `instanceof Protocol`: an application may hold another copy of the SDK
  // than the one this package resolves (a linked or nested install), whose classes are other objects.
  if (typeof protocol !== "object" || protocol === null) return "the server is not an object";
  if (!Object.hasOwn(protocol, "_requestHandlers")) return "the server has no own _requestHandlers member (Protocol's handler table)";
  const table: unknown = (protocol as { _requestHandlers: unknown })._requestHandlers;
  if (!(table instanceof Map) || Object.getPrototypeOf(table) !== Map.prototype) return "Protocol._requestHandlers is not a plain Map";
  for (const [method, handler] of table) {
    if (typeof method !== "string" || typeof handler !== "function") return "Protocol._requestHandlers does not map method names to functions";
  }
  for (const [name, use] of TABLE_USES) {
    // The method the SDK will call on this object, wherever in its class chain it is defined.
    const method: unknown = (protocol as Record<string, unknown>)[name];
    if (typeof method !== "function") return `the server has no ${name} method (Protocol's)`;
    if (!Function.prototype.toString.call(method).includes(use)) return `Protocol's ${name} no longer uses ${use.slice(1, -1)}`;
  }
  return undefined;
}

/** The server's handler table with the boundary put around every target method's handler as it is set. */
class BoundTable extends Map<string, Handler> {
  readonly #boundary: StateBoundary | undefined;

  constructor(boundary: StateBoundary) {
    super();
    this.#boundary = boundary;
  }

  override set(method: string, handler: Handler): this {
    // Map's constructor calls set before #boundary exists; BoundTable is always built empty.
    const boundary = this.#boundary;
    return super.set(method, boundary !== undefined && isTargetMethod(method) ? boundary.wrap(method, handler) : handler);
  }
}
