/**
 * What a `requestState` is bound to in an MCP request: its target and arguments, read from the
 * request's raw `params` exactly as they came off the wire (the Python boundary's `request` module):
 *
 * | method           | target        | arguments bound                   |
 * |------------------|---------------|-----------------------------------|
 * | `tools/call`     | `params.name` | `params.arguments` (absent: `{}`) |
 * | `prompts/get`    | `params.name` | `params.arguments` (absent: `{}`) |
 * | `resources/read` | `params.uri`  | none: the URI is the whole request |
 *
 * Arguments that are present but not an object (`null`, an array, a string, a number, a boolean) are
 * carried as they are: they are unbindable (decision D2), so no token is sealed for them and a token
 * carrying `args_sha256` is refused for them as `wrong_request`.
 */

import { isPlainObject } from "../token/json.js";
import { audience, type TargetOptions } from "../binding/target.js";

/** The MCP methods whose results may be `input_required`, with the parameter naming their target. */
export const TARGET_METHODS = {
  "tools/call": ["name", "tool"],
  "prompts/get": ["name", "prompt"],
  "resources/read": ["uri", "resource"],
} as const;

/** One of the methods that may answer `input_required`. */
export type TargetMethod = keyof typeof TARGET_METHODS;

/** Whether `method` may answer `input_required`. */
export function isTargetMethod(method: unknown): method is TargetMethod {
  return typeof method === "string" && Object.hasOwn(TARGET_METHODS, method);
}

/** The request a `requestState` is minted for or presented on. */
export interface Target {
  readonly method: TargetMethod;
  /** The target as `seal`/`open` options: `{tool: name}`, `{prompt: name}` or `{resource: uri}`. */
  readonly binding: TargetOptions;
  /** The profile's `aud` for it. */
  readonly aud: string;
  /**
   * The arguments as sent (`{}` when absent; any other value, `null` included, as it is: unbindable when
   * not an object); `undefined` for `resources/read`, which has none.
   */
  readonly arguments: unknown;
}

/** The target and arguments of one request; a `RangeError` with a client-safe message when malformed. */
export function targetOf(method: TargetMethod, params: unknown): Target {
  const [field, kind] = TARGET_METHODS[method];
  const raw: { readonly [name: string]: unknown } = isPlainObject(params) ? params : {};
  const name = raw[field];
  if (typeof name !== "string" || name === "") throw new RangeError(`${method} needs a non-empty string '${field}'`);
  const binding: TargetOptions = { [kind]: name };
  if (kind === "resource") return { method, binding, aud: audience(binding), arguments: undefined };
  // Profile 8.2 (decision D2): only absent arguments are {}.
  const args = raw.arguments === undefined ? {} : raw.arguments;
  return { method, binding, aud: audience(binding), arguments: args };
}

/**
 * Why the `arguments` of a `prompts/get` request are not what MCP's `GetPromptRequest` allows (absent, or an
 * object whose values are strings), as a client-safe sentence naming no value; `undefined` when they are.
 * The SDK rejects such a request only as it reaches the handler, with a plain error (`-32603`); the boundary
 * answers it `-32602` first, as the Python SDK does.
 */
export function promptArgumentsProblem(params: unknown): string | undefined {
  const args = isPlainObject(params) ? params.arguments : undefined;
  if (args === undefined) return undefined;
  if (!isPlainObject(args)) return `Invalid params: prompts/get arguments must be an object of strings, not ${args === null ? "null" : Array.isArray(args) ? "an array" : typeof args}.`;
  const bad = Object.keys(args).find((name) => typeof args[name] !== "string");
  if (bad === undefined) return undefined;
  const shown = bad.length <= 64 ? bad : `${bad.slice(0, 64)}...`;
  return `Invalid params: prompts/get arguments must be an object of strings; ${JSON.stringify(shown)} is not a string.`;
}
