/**
 * RFC 8785 (JSON Canonicalization Scheme) and the argument digest of the profile (section 3.4).
 *
 * `args_sha256 = BASE64URL(SHA-256(JCS(arguments)))`. RFC 8785 was written around ECMAScript, so in
 * JavaScript most of it is the language's own: a JSON number is the IEEE 754 double nearest to its
 * literal, `JSON.stringify` of a number is `Number.prototype.toString` and of a string is the JCS
 * escaping, and the default `sort()` orders member names by UTF-16 code units.
 *
 * Unbindable arguments (profile 3.4, decision D1): the rule is applied to the IEEE 754 double nearest
 * the literal, as every JSON parser reads it: a number whose double has magnitude 2^53 or more
 * (`9007199254740992`, `9007199254740991.5`, which reads as 2^53, `1e23`) makes the arguments
 * unbindable. Such arguments have no digest; a tool should take such ids as strings. Arguments that
 * are present but not a JSON object are unbindable too (decision D2).
 */

import * as b64 from "../token/b64.js";
import { sha256 } from "../lib/sha2.js";
import { utf8Scratch } from "../lib/utf8.js";

import { isPlainObject } from "../token/json.js";

/** Why arguments holding an integer beyond the safe range have no digest: the Python library's sentence. */
export const UNBINDABLE_NUMBER =
  "the arguments hold a number whose value is an integer beyond +/-(2**53 - 1); RFC 8785 " +
  "writes numbers as IEEE 754 doubles, so neighbouring integers there share one digest and " +
  "cannot be bound: pass such ids (64-bit ids, nanosecond timestamps) as strings";

/** Why arguments that are JSON but not an object have no digest (decision D2). */
export const NOT_AN_OBJECT = "the arguments are not a JSON object (null, an array, a string, a number or a boolean): only an object, or no arguments at all, can be bound";

/** JCS nests as deep as the value does; this bound keeps a hostile value from exhausting the stack. */
const MAX_DEPTH = 256;

/**
 * Arguments (or another value) that have no RFC 8785 form the profile can bind: a number beyond the
 * safe integer range, a non-finite number, a lone surrogate, or nesting beyond 256 levels.
 */
export class UnbindableArguments extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = "UnbindableArguments";
  }
}

/**
 * The RFC 8785 canonical JSON text of `value`.
 *
 * @throws TypeError for a value that is not JSON (undefined, a function, a bigint, a class instance).
 * @throws UnbindableArguments for JSON that has no canonical form the profile binds.
 */
export function canonicalize(value: unknown): string {
  return encode(value, 0);
}

/**
 * The profile's argument digest of an arguments object: base64url(SHA-256(JCS(arguments))), unpadded.
 *
 * @throws TypeError when `args` is not JSON or holds a value that is not JSON.
 * @throws UnbindableArguments when the arguments cannot be bound (see the module's note), and when they
 *   are JSON but not an object (decision D2).
 */
export function argumentsDigest(args: unknown): string {
  if (!isPlainObject(args)) {
    // Profile 3.4 and 8.2 (decision D2): present arguments that are JSON but not an object (null, an
    // array, a string, a number, a boolean) are unbindable; only absent arguments read as {}.
    if (args === null || Array.isArray(args) || ["string", "number", "boolean"].includes(typeof args)) {
      throw new UnbindableArguments(NOT_AN_OBJECT);
    }
    throw new TypeError("arguments must be a JSON object");
  }
  return b64.encode(sha256(utf8Scratch(canonicalize(args))));
}

/** The digest of `args`, or `undefined` when they cannot be canonicalized (they match no digest). */
export function digestOrUndefined(args: unknown): string | undefined {
  try {
    return argumentsDigest(args);
  } catch {
    return undefined;
  }
}

/** Whether `args` is an arguments object that has a digest. */
export function isBindable(args: unknown): boolean {
  return digestOrUndefined(args) !== undefined;
}

/** Why `args` have no digest (a fixed sentence that names no value), or `undefined` when they have one. */
export function bindingProblem(args: unknown): string | undefined {
  try {
    argumentsDigest(args);
  } catch (error) {
    return error instanceof Error ? error.message : "the arguments are not JSON";
  }
  return undefined;
}

function encode(value: unknown, depth: number): string {
  switch (typeof value) {
    case "string":
      if (!value.isWellFormed()) throw new UnbindableArguments("a string holds a lone surrogate, which is not valid Unicode");
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new UnbindableArguments("a non-finite number is not JSON");
      // Profile 3.4 (decision D1): by the double, not the literal; no double lies between 2^53 - 1 and 2^53.
      if (Math.abs(value) >= 2 ** 53) {
        throw new UnbindableArguments(UNBINDABLE_NUMBER);
      }
      return JSON.stringify(value); // -0 is written "0", as RFC 8785 asks
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (value === null) return "null";
      if (depth >= MAX_DEPTH) throw new UnbindableArguments(`the value nests deeper than ${MAX_DEPTH} levels`);
      if (Array.isArray(value)) return `[${(value as unknown[]).map((item) => encode(item, depth + 1)).join(",")}]`;
      if (!isPlainObject(value)) throw new TypeError("an object that is not plain JSON (a class instance, Map or Date)");
      const names = Object.keys(value).sort(); // UTF-16 code unit order (RFC 8785, 3.2.3)
      const members = names.map((name) => {
        if (!name.isWellFormed()) throw new UnbindableArguments("a member name holds a lone surrogate");
        return `${JSON.stringify(name)}:${encode(value[name], depth + 1)}`;
      });
      return `{${members.join(",")}}`;
    }
    default:
      throw new TypeError(`a ${typeof value} is not JSON`);
  }
}
