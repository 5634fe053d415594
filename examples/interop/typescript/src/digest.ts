/**
 * The request binding (section 3.4): args_sha256 = BASE64URL(SHA-256(JCS(arguments))).
 *
 * JCS (RFC 8785) is the `canonicalize` package. RFC 8785 was written around ECMAScript, so in
 * JavaScript it is natural: every JSON number is already the IEEE 754 double nearest to its literal
 * (9007199254740993 reads as 9007199254740992), `JSON.stringify` of a number is
 * `Number.prototype.toString`, and the default `sort()` orders member names by UTF-16 code units.
 * `canonicalize` refuses NaN, Infinity and lone surrogates, which have no canonical form.
 *
 * Arguments holding a number whose value is an integer beyond +/-(2^53 - 1) are unbindable (section 3.4):
 * neighbouring integers there share one double and so one digest. A double of magnitude 2^53 or more is
 * always an integer, so the rule by value is `Math.abs(x) > Number.MAX_SAFE_INTEGER`, whatever the literal
 * (9007199254740993, 1e23, 1.152921504606847e+18). An underflow such as 1e-400 is read as 0 by JSON.parse.
 */

import { createHash } from "node:crypto";

import canonicalize from "canonicalize";

/** The RFC 8785 canonical JSON of `value`; throws for a value that has none. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error("the value has no JSON form");
  return text;
}

/** The RFC 8785 canonical JSON of bindable arguments; throws for unbindable ones. */
export function canonicalArguments(args: unknown): string {
  if (!bindable(args)) throw new Error("a number whose value is an integer beyond +/-(2^53 - 1)");
  return canonicalJson(args);
}

function bindable(value: unknown): boolean {
  if (typeof value === "number") return Math.abs(value) <= Number.MAX_SAFE_INTEGER;
  if (Array.isArray(value)) return value.every(bindable);
  if (typeof value === "object" && value !== null) return Object.values(value).every(bindable);
  return true;
}

/** The argument digest of `args`, or undefined when they are unbindable (they match no digest). */
export function argumentsDigest(args: unknown): string | undefined {
  let text: string;
  try {
    text = canonicalArguments(args);
  } catch {
    return undefined; // a large integer, a non-finite number, a lone surrogate, nesting beyond the stack
  }
  return createHash("sha256").update(text, "utf8").digest("base64url");
}
