/**
 * The `requestState` a handler sees, and the `state` claim of the token (the Python boundary's
 * `plaintext` module, so both languages carry the same claim for the same handler string):
 *
 * - minting: a handler string that is the JSON text of an object or array (which the profile can carry
 *   exactly) becomes that value in the claim, so a replica in another language reads structured state;
 *   any other string is carried verbatim as a JSON string;
 * - opening: a string claim is handed back verbatim; any other value as its compact JSON text.
 */

import { encodeUtf8 } from "../lib/utf8.js";
import { checkState, dumps, MAX_TEXT_DEPTH, parseStrictJson, type Json } from "../token/json.js";

/** The `state` claim for a handler's `requestState` string. */
export function claimOf(text: string): Json {
  const start = text.replace(/^[ \t\r\n]+/, "");
  if (!start.startsWith("{") && !start.startsWith("[")) return text;
  try {
    if (!text.isWellFormed()) return text;
    const value = parseStrictJson(encodeUtf8(text), { maxDepth: MAX_TEXT_DEPTH, iJson: true }).value;
    checkState(value);
    return value;
  } catch {
    return text; // not JSON, or JSON the profile cannot carry exactly
  }
}

/** The `requestState` string a handler sees for a verified `state` claim. */
export function textOf(claim: Json): string {
  return typeof claim === "string" ? claim : dumps(claim);
}
