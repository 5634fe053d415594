/** Reading the profile's vectors (spec/vectors/ of the repository) for the tests. */

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The directory of the vectors: MRTR_STATE_VECTORS, or spec/vectors next to this package. */
export const VECTORS_DIR =
  process.env.MRTR_STATE_VECTORS ?? fileURLToPath(new URL("../../../spec/vectors/", import.meta.url));

/** One vector file, read with JSON.parse (the arguments are meant for the language's ordinary parser). */
export function readVectors(name: string): any {
  return JSON.parse(readFileSync(`${VECTORS_DIR}/${name}`, "utf8"));
}

/** Whether a vector file exists (files added by a later revision of the profile). */
export function hasVectors(name: string): boolean {
  return existsSync(`${VECTORS_DIR}/${name}`);
}
