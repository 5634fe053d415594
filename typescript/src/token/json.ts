/**
 * Strict JSON for token segments and key files (profile, sections 3.3 and 5), and exact JSON writing.
 *
 * Reading: `JSON.parse` cannot serve the profile: it keeps the last of two members with the same name
 * (so `{"sub":"mallory","sub":"alice"}` reads as alice), and it reads `1767226140.0` and
 * `1.76722614e9` as the same number as `1767226140`, so the integer literals that step 12 asks for
 * cannot be told apart afterwards. This reader accepts exactly RFC 8259 JSON in UTF-8, and refuses:
 * invalid UTF-8 and a byte order mark, duplicate member names at any depth, `NaN`/`Infinity`, number
 * literals beyond the range of a double (`1e400`; an underflow such as `1e-400` reads as 0, as every
 * JSON parser reads it), and nesting deeper than a limit. With `iJson` (token segments) it also
 * refuses what I-JSON (RFC 7493) forbids and `JSON.parse` lets through: an integer literal beyond
 * +/-(2^53 - 1), which `JSON.parse` silently rounds to another integer, and a `\u` escape of a lone
 * surrogate. It returns the value and the text of every number literal with its path.
 *
 * Writing: compact JSON that every language reads back as the same values (I-JSON).
 */

import { encodeUtf8 } from "../lib/utf8.js";

/** A JSON value as this reader returns it. */
export type Json = null | boolean | number | string | Json[] | { [name: string]: Json };

/** Where a number literal was found (object member names and array indexes from the root) and its text. */
export interface NumberLiteral {
  readonly path: readonly (string | number)[];
  readonly text: string;
}

/** The value of a JSON text and its number literals. */
export interface ParsedJson {
  readonly value: Json;
  readonly numbers: readonly NumberLiteral[];
}

/** The text is not strict JSON. The message names the problem and its offset, never the content. */
export class JsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JsonError";
  }
}

// fatal: invalid UTF-8 throws. ignoreBOM: a leading U+FEFF is kept, and then refused as not JSON.
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const HEX4 = /^[0-9A-Fa-f]{4}$/;
const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/** How strictly to read: arrays and objects nest `maxDepth` levels at most; `iJson` adds the I-JSON rules. */
export interface StrictOptions {
  readonly maxDepth: number;
  readonly iJson: boolean;
}

/** Parse one strict JSON text from UTF-8 bytes. */
export function parseStrictJson(bytes: Uint8Array, options: StrictOptions): ParsedJson {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new JsonError("not valid UTF-8");
  }
  return new Reader(text, options).document();
}

/** Whether a JSON number literal is an integer literal (no fraction, no exponent) beyond +/-(2^53 - 1). */
export function isUnsafeIntegerLiteral(text: string): boolean {
  return !/[.eE]/.test(text) && !Number.isSafeInteger(Number(text));
}

/** Whether `value` is a JSON object (not an array, not null). */
export function isObject(value: unknown): value is { [name: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

class Reader {
  private at = 0;
  private readonly path: (string | number)[] = [];
  private readonly numbers: NumberLiteral[] = [];

  constructor(
    private readonly text: string,
    private readonly options: StrictOptions,
  ) {}

  document(): ParsedJson {
    this.space();
    const value = this.value(0);
    this.space();
    if (this.at !== this.text.length) this.fail("text after the JSON value");
    return { value, numbers: this.numbers };
  }

  private value(depth: number): Json {
    switch (this.text.charAt(this.at)) {
      case "{":
        return this.object(depth + 1);
      case "[":
        return this.array(depth + 1);
      case '"':
        return this.string();
      case "t":
        return this.literal("true", true);
      case "f":
        return this.literal("false", false);
      case "n":
        return this.literal("null", null);
      default:
        return this.number();
    }
  }

  private object(depth: number): { [name: string]: Json } {
    this.enter(depth);
    const object: { [name: string]: Json } = {};
    const names = new Set<string>();
    this.space();
    if (this.take("}")) return object;
    do {
      this.space();
      if (this.text.charAt(this.at) !== '"') this.fail("expected a member name");
      const name = this.string();
      if (names.has(name)) this.fail("duplicate member name");
      names.add(name);
      this.space();
      this.expect(":");
      this.space();
      this.path.push(name);
      const value = this.value(depth);
      this.path.pop();
      // Not `object[name] = value`: a member named "__proto__" stays a member, as with JSON.parse.
      Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
      this.space();
    } while (this.take(","));
    this.expect("}");
    return object;
  }

  private array(depth: number): Json[] {
    this.enter(depth);
    const array: Json[] = [];
    this.space();
    if (this.take("]")) return array;
    do {
      this.space();
      this.path.push(array.length);
      array.push(this.value(depth));
      this.path.pop();
      this.space();
    } while (this.take(","));
    this.expect("]");
    return array;
  }

  private string(): string {
    this.at++; // the opening quote
    let out = "";
    let start = this.at;
    for (;;) {
      const code = this.text.charCodeAt(this.at);
      if (Number.isNaN(code)) this.fail("unterminated string");
      if (code === 0x22) break; // "
      if (code < 0x20) this.fail("unescaped control character in a string");
      if (code === 0x5c) {
        // backslash
        out += this.text.slice(start, this.at);
        out += this.escape();
        start = this.at;
      } else {
        this.at++;
      }
    }
    out += this.text.slice(start, this.at);
    this.at++; // the closing quote
    // The text was valid UTF-8, so a lone surrogate can only have come from a \u escape.
    if (this.options.iJson && !out.isWellFormed()) this.fail("escaped lone surrogate, not valid Unicode");
    return out;
  }

  private escape(): string {
    const letter = this.text.charAt(this.at + 1);
    if (letter === "u") {
      const hex = this.text.slice(this.at + 2, this.at + 6);
      if (!HEX4.test(hex)) this.fail("bad \\u escape");
      this.at += 6;
      // A UTF-16 code unit: a pair of escapes makes one character beyond the BMP, as in JSON.parse.
      return String.fromCharCode(parseInt(hex, 16));
    }
    const char = ESCAPES[letter];
    if (char === undefined) this.fail("bad escape");
    this.at += 2;
    return char;
  }

  private number(): number {
    NUMBER.lastIndex = this.at;
    const match = NUMBER.exec(this.text);
    if (match === null) this.fail("not a JSON value"); // NaN, Infinity, a stray character
    const text = match[0];
    const value = Number(text);
    if (!Number.isFinite(value)) this.fail("number literal beyond the range of a double");
    if (this.options.iJson && isUnsafeIntegerLiteral(text)) this.fail("integer literal beyond +/-(2^53 - 1)");
    this.at += text.length;
    this.numbers.push({ path: [...this.path], text });
    return value;
  }

  private literal<T extends Json>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.at)) this.fail("not a JSON value");
    this.at += word.length;
    return value;
  }

  private enter(depth: number): void {
    if (depth > this.options.maxDepth) this.fail(`nested deeper than ${this.options.maxDepth} levels`);
    this.at++; // the opening bracket
  }

  private space(): void {
    for (;;) {
      const char = this.text.charAt(this.at);
      if (char !== " " && char !== "\t" && char !== "\n" && char !== "\r") return;
      this.at++;
    }
  }

  private take(char: string): boolean {
    if (this.text.charAt(this.at) !== char) return false;
    this.at++;
    return true;
  }

  private expect(char: string): void {
    if (!this.take(char)) this.fail(`expected '${char}'`);
  }

  private fail(problem: string): never {
    throw new JsonError(`${problem} at offset ${this.at}`);
  }
}


/** The largest integer every JSON implementation represents exactly (2^53 - 1). */
export const MAX_SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/** How deeply arrays and objects may nest inside the state claim (profile, 3.3). */
export const MAX_STATE_DEPTH = 32;

/** How deeply any JSON text of a token may nest: the claims object around the state. */
export const MAX_TEXT_DEPTH = MAX_STATE_DEPTH + 1;

/** Whether `value` is a plain object: made by a literal, `JSON.parse` or `Object.create(null)`. */
export function isPlainObject(value: unknown): value is { [name: string]: unknown } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Refuse a state the profile cannot carry exactly (profile, section 3.3).
 *
 * @throws TypeError for a value that is not JSON (undefined, a function, a bigint, a Map, a Date, a
 *   class instance): `JSON.stringify` would silently drop or change it.
 * @throws RangeError for JSON the profile forbids: a non-finite number, a lone surrogate, nesting
 *   deeper than {@link MAX_STATE_DEPTH}. Messages name the problem, never a value.
 */
export function checkState(value: unknown): void {
  check(value, 0, "state");
}

function check(value: unknown, depth: number, what: string): void {
  switch (typeof value) {
    case "string":
      if (!value.isWellFormed()) throw new RangeError(`the ${what} holds a lone surrogate, which is not valid Unicode`);
      return;
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(value)) throw new RangeError(`the ${what} holds a non-finite number`);
      return;
    case "object":
      if (value === null) return;
      if (depth === MAX_STATE_DEPTH) throw new RangeError(`the ${what} nests deeper than ${MAX_STATE_DEPTH} levels`);
      if (Array.isArray(value)) {
        for (const item of value as unknown[]) check(item, depth + 1, what);
        return;
      }
      if (!isPlainObject(value)) {
        throw new TypeError(`the ${what} holds an object that is not plain JSON (a class instance, Map or Date)`);
      }
      for (const [name, item] of Object.entries(value)) {
        if (!name.isWellFormed()) throw new RangeError(`the ${what} has a member name with a lone surrogate`);
        check(item, depth + 1, what);
      }
      return;
    default:
      throw new TypeError(
        `the ${what} holds a ${typeof value}, which is not JSON; use objects, arrays, strings, numbers, booleans and null`,
      );
  }
}

/**
 * Compact JSON text that every reader reads back as the same values: `JSON.stringify`, except that an
 * integral double beyond 2^53 - 1 is written in exponent form (2^60 as `1.152921504606847e+18`, not as
 * the integer literal `1152921504606847000`, which an exact reader would take for another number and a
 * strict verifier refuses). Call {@link checkState} first: this writes what it is given.
 */
export function dumps(value: unknown): string {
  if (typeof value === "number") {
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) return value.toExponential();
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${(value as unknown[]).map(dumps).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const members = Object.entries(value).map(([name, item]) => `${JSON.stringify(name)}:${dumps(item)}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** Read strict JSON from text (not a token segment): a key file, an environment variable. */
export function parseStrictText(text: string, maxDepth: number): Json {
  return parseStrictJson(encodeUtf8(text), { maxDepth, iJson: false }).value;
}
