/**
 * The `vectors` command: every vector of spec/vectors/ (section 12) against this implementation.
 */

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";

import { argumentsDigest, canonicalArguments } from "./digest.js";
import { JobError, readVerifyJob } from "./jobs.js";
import { KeyError, loadRing } from "./keys.js";
import type { Json } from "./strict-json.js";
import { verify, type Verdict } from "./verify.js";

interface TokenVector {
  readonly id: string;
  readonly expected: Verdict;
  readonly [member: string]: Json | Verdict;
}

interface ArgumentVector {
  readonly id: string;
  readonly arguments: Json;
  readonly canonical?: string;
  readonly digest?: string;
  readonly unbindable?: boolean;
}

interface InvalidKeyVector {
  readonly id: string;
  readonly jwk: Json;
}

/** Check every vector in `dir`; print one line each and a closing tally; return the number that failed. */
export async function checkVectors(dir: string, print: (line: string) => void): Promise<number> {
  // JSON.parse is right for these files: the arguments are meant to be read by the language's
  // ordinary parser (an integer beyond 2^53 becomes the nearest double, as RFC 8785 wants).
  const read = async (name: string) => {
    try {
      return JSON.parse(await readFile(join(dir, name), "utf8"));
    } catch (error) {
      throw new JobError(`cannot read ${join(dir, name)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const keys = await read("keys.json");
  const tokens = await read("tokens.json");
  const encrypted = await read("encrypted.json");
  const args = await read("arguments.json");
  const invalidKeys = await read("invalid-keys.json");
  let passed = 0;
  let failed = 0;
  const report = (ok: boolean, id: string, got: string, expected: string) => {
    if (ok) passed++;
    else failed++;
    print(`${ok ? "ok  " : "FAIL"} ${id}: ${got} (expected ${expected})`);
  };

  // tokens.json against verifier_jwks; encrypted.json (the encrypted form) against encrypted_verifier_jwks.
  for (const [file, jwks] of [
    [tokens, keys.verifier_jwks],
    [encrypted, keys.encrypted_verifier_jwks],
  ]) {
    for (const vector of file.vectors as TokenVector[]) {
      const job: { [name: string]: Json } = { keys: jwks };
      for (const name of ["token", "issuer", "user", "tool", "prompt", "resource", "arguments", "now"]) {
        if (vector[name] !== undefined) job[name] = vector[name] as Json;
      }
      for (const name of ["issuer", "max_lifetime", "leeway", "max_token_bytes", "require_arguments"]) {
        job[name] = (vector[name] ?? file.defaults[name]) as Json;
      }
      const { token, ring, request, policy } = await readVerifyJob(job);
      const verdict = await verify(token, ring, request, policy);
      const ok = isDeepStrictEqual(verdict, vector.expected);
      report(ok, vector.id, describe(verdict, ok), describe(vector.expected, true));
    }
  }

  for (const vector of args.vectors as ArgumentVector[]) {
    let got = "unbindable";
    try {
      got = `JCS ${canonicalArguments(vector.arguments)}, digest ${argumentsDigest(vector.arguments)}`;
    } catch {
      // reported as unbindable
    }
    const expected = vector.unbindable === true ? "unbindable" : `JCS ${vector.canonical}, digest ${vector.digest}`;
    report(got === expected, vector.id, got, expected);
  }

  for (const vector of invalidKeys.vectors as InvalidKeyVector[]) {
    let got = "loaded";
    try {
      await loadRing({ keys: [vector.jwk] });
    } catch (error) {
      if (!(error instanceof KeyError)) throw error;
      got = `refused: ${error.message}`;
    }
    report(got !== "loaded", vector.id, got, "refused");
  }

  print(`${passed} passed, ${failed} failed`);
  return failed;
}

function describe(verdict: Verdict, brief: boolean): string {
  if (!verdict.valid) return `refused, ${verdict.reason}`;
  return brief ? "valid" : `valid, state ${JSON.stringify(verdict.state)}`;
}
