/**
 * Handler helpers: ask for input with {@link inputRequired}, read the retry with {@link readRetry}.
 *
 * A handler never touches a token. It returns `inputRequired(requests, { state })`; the boundary seals
 * that state on the way out. On the retry the boundary has verified the token before the handler runs,
 * and `readRetry(ctx)` hands the handler that verified state with the client's `inputResponses`. It
 * refuses to read a state the boundary did not verify for this very request, so a server that forgot to
 * install the boundary fails loudly instead of trusting the client.
 */

import { inputRequired as sdkInputRequired, type InputRequiredResult, type InputRequests, type ServerContext } from "@modelcontextprotocol/server";

import { checkState, dumps, isPlainObject, type Json } from "../token/json.js";

/** What the boundary verified for one request: the text the handler sees and the claim it came from. */
export interface VerifiedRound {
  readonly requestState: string | undefined;
  readonly claim: Json | undefined;
}

/** Rounds the boundary verified, by the `mcpReq` object of the context it handed the handler. */
const VERIFIED = new WeakMap<object, VerifiedRound>();

/** Record the round verified for a context's `mcpReq` (the boundary calls this). @internal */
export function markVerified(mcpReq: object, round: VerifiedRound): void {
  VERIFIED.set(mcpReq, round);
}

/** One round of a request, as a handler reads it. */
export interface Retry {
  /** The verified state the previous round sealed; `undefined` on a first round. */
  readonly state: { readonly [name: string]: Json } | undefined;
  /**
   * The client's `inputResponses`, keyed as the previous round's `inputRequests` were. Only on a round
   * with a verified state: responses sent without one answer no round of this server (profile 8.2) and
   * are not handed over. They are the client's word for this round and are not sealed: check them.
   */
  readonly responses: { readonly [key: string]: unknown };
  /** The form content of an accepted elicitation under `key`, else `undefined`. */
  accepted(key: string): { readonly [name: string]: unknown } | undefined;
  /** Whether the person declined or cancelled the elicitation under `key`. */
  declined(key: string): boolean;
}

const NOT_INSTALLED =
  "readRetry() found no round a StateBoundary verified on this request: install one with " +
  "new StateBoundary(sealer).install(server) (or the requestState would be trusted unverified); on a 2025-era " +
  "connection the SDK runs the rounds in process, unsealed, so serve the 2026-07-28 revision for multi round-trip tools";

/**
 * The verified round of the request being served: its state and the client's responses.
 *
 * @throws Error no StateBoundary verified this request, or the context carries another requestState.
 * @throws TypeError the verified state is not a JSON object (it was not written by {@link inputRequired}).
 */
export function readRetry(ctx: ServerContext): Retry {
  const verified = VERIFIED.get(ctx.mcpReq);
  if (verified === undefined) throw new Error(NOT_INSTALLED);
  if (ctx.mcpReq.requestState() !== verified.requestState) {
    throw new Error("readRetry() was given a requestState other than the one StateBoundary verified");
  }
  if (verified.requestState === undefined) return retry(undefined, {});
  if (!isPlainObject(verified.claim)) {
    throw new TypeError("the verified requestState is not a JSON object; it was not written by inputRequired()");
  }
  return retry(verified.claim as { [name: string]: Json }, ctx.mcpReq.inputResponses ?? {});
}

function retry(state: Retry["state"], responses: { readonly [key: string]: unknown }): Retry {
  const response = (key: string): { action?: unknown; content?: unknown } | undefined => {
    const value = Object.hasOwn(responses, key) ? responses[key] : undefined;
    return isPlainObject(value) ? value : undefined;
  };
  return {
    state,
    responses,
    accepted(key) {
      const value = response(key);
      return value?.action === "accept" ? { ...(isPlainObject(value.content) ? value.content : {}) } : undefined;
    },
    declined(key) {
      const action = response(key)?.action;
      return action === "decline" || action === "cancel";
    },
  };
}

/**
 * An `input_required` result: `requests` for the client, `state` for the retry. The boundary seals the
 * state (a JSON object, readable by the client: never a secret) bound to the user, the target and the
 * arguments of the request being served. At least one of the two is needed. Without `state`, the state
 * records what was asked, `{"asked": [<the keys of requests>]}`: the answers of a retry reach the handler
 * only with a verified state (profile 8.2), so every round that asks carries one.
 *
 * @throws RangeError neither is given, or the state is JSON the profile cannot carry exactly.
 * @throws TypeError the state is not a plain object of JSON values.
 */
export function inputRequired(requests?: InputRequests, options: { readonly state?: { readonly [name: string]: unknown } } = {}): InputRequiredResult {
  const hasRequests = requests !== undefined && Object.keys(requests).length > 0;
  if (!hasRequests && options.state === undefined) throw new RangeError("inputRequired() needs requests, a state, or both");
  // Without a state, the state records what was asked, as the Python boundary's input_required does: a
  // retry's inputResponses reach the handler only with a verified state (profile 8.2).
  const state = options.state ?? (hasRequests ? { asked: Object.keys(requests).sort(byCodePoint) } : undefined);
  let text: string | undefined;
  if (state !== undefined) {
    if (!isPlainObject(state)) throw new TypeError("state must be a JSON object");
    checkState(state);
    text = dumps(state);
  }
  return sdkInputRequired({ ...(hasRequests ? { inputRequests: requests } : {}), ...(text === undefined ? {} : { requestState: text }) });
}

/** Order strings by Unicode code point, as Python's `sorted` does (the default `sort` uses UTF-16 code units). */
function byCodePoint(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const difference = (x[i]?.codePointAt(0) ?? 0) - (y[i]?.codePointAt(0) ?? 0);
    if (difference !== 0) return difference;
  }
  return x.length - y.length;
}
