/**
 * The request binding (section 3.4): args_sha256 = BASE64URL(SHA-256(JCS(arguments))).
 *
 * JCS (RFC 8785) is the `canonicalize` package. RFC 8785 was written around ECMAScript, so in
 * JavaScript it is natural: every JSON number is already the IEEE 754 double nearest to its literal
 * (9007199254740993 reads as 9007199254740992), `JSON.stringify` of a number is
 * `Number.prototype.toString`, and the default `sort()` orders member names by UTF-16 code units.
 * `canonicalize` refuses NaN, Infinity and lone surrogates, which have no canonical form.
 */

import { createHash } from "node:crypto";

import canonicalize from "canonicalize";

/** The RFC 8785 canonical JSON of `value`; throws for a value that has none. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error("the value has no JSON form");
  return text;
}

/** The argument digest of `args`, or undefined when they cannot be canonicalized (they match no digest). */
export function argumentsDigest(args: unknown): string | undefined {
  let text: string;
  try {
    text = canonicalJson(args);
  } catch {
    return undefined; // a non-finite number, a lone surrogate, nesting beyond the stack
  }
  return createHash("sha256").update(text, "utf8").digest("base64url");
}
