/**
 * The target a state is bound to, as the `aud` claim (profile, section 3.5): `tools/call:<tool>`,
 * `prompts/get:<prompt>` or `resources/read:<uri>`. The method never contains `:`, so two different
 * targets never share an `aud`.
 */

/** What a request addressed: exactly one of a tool, a prompt or a resource. */
export interface TargetOptions {
  readonly tool?: string | undefined;
  readonly prompt?: string | undefined;
  readonly resource?: string | undefined;
}

/** The MCP methods that may answer `input_required`, by target kind. */
export const METHODS = {
  tool: "tools/call",
  prompt: "prompts/get",
  resource: "resources/read",
} as const;

/**
 * The `aud` value for exactly one of `tool`, `prompt` or `resource`.
 *
 * @throws TypeError when not exactly one target is given, or it is not a string.
 * @throws RangeError when the target is the empty string.
 */
export function audience(target: TargetOptions): string {
  const given = (["tool", "prompt", "resource"] as const).filter((kind) => target[kind] !== undefined);
  const [kind] = given;
  if (given.length !== 1 || kind === undefined) throw new TypeError("give exactly one target: tool, prompt or resource");
  const name: unknown = target[kind];
  if (typeof name !== "string") throw new TypeError(`${kind} must be a string, not ${typeof name}`);
  if (name === "") throw new RangeError(`${kind} must not be empty`);
  return `${METHODS[kind]}:${name}`;
}
