/**
 * The `vectors` command: every vector of spec/vectors/ (section 12) against the `mrtr-state` package.
 */

import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";

import { argumentsDigest, canonicalize, isBindable, Key, Keyring, KeyringError, type Json } from "mrtr-state";

import { isObject, JobError, verifyJob, type Verdict } from "./jobs.js";

interface TokenVector {
  readonly id: string;
  readonly expected: Verdict;
  readonly [member: string]: Json | Verdict;
}

/** Check every vector in `dir`; print one line each and a closing tally; return the number that failed. */
export async function checkVectors(dir: string, print: (line: string) => void): Promise<number> {
  // JSON.parse is right for these files: the arguments are meant to be read by the language's
  // ordinary parser (an integer beyond 2^53 becomes the nearest double, which is unbindable).
  const read = async (name: string) => {
    try {
      return JSON.parse(await readFile(join(dir, name), "utf8"));
    } catch (error) {
      throw new JobError(`cannot read ${join(dir, name)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const keys = await read("keys.json");
  const tokens = await read("tokens.json");
  const args = await read("arguments.json");
  let passed = 0;
  let failed = 0;
  const report = (ok: boolean, id: string, got: string, expected: string) => {
    if (ok) passed++;
    else failed++;
    print(`${ok ? "ok  " : "FAIL"} ${id}: ${got} (expected ${expected})`);
  };

  // tokens.json against verifier_jwks; encrypted.json (the encrypted form), once the profile has it,
  // against encrypted_verifier_jwks.
  const files: [any, Json][] = [[tokens, keys.verifier_jwks]];
  if (existsSync(join(dir, "encrypted.json"))) files.push([await read("encrypted.json"), keys.encrypted_verifier_jwks]);
  for (const [file, jwks] of files) {
    for (const vector of file.vectors as TokenVector[]) {
      const job: { [name: string]: Json } = { keys: jwks };
      for (const name of ["token", "user", "tool", "prompt", "resource", "arguments", "now"]) {
        if (vector[name] !== undefined) job[name] = vector[name] as Json;
      }
      for (const name of ["issuer", "max_lifetime", "leeway", "max_token_bytes", "require_arguments"]) {
        const value = vector[name] ?? file.defaults[name];
        if (value !== undefined) job[name] = value as Json;
      }
      const verdict = await verifyJob(job);
      const ok = isDeepStrictEqual(verdict, vector.expected);
      report(ok, vector.id, describe(verdict, ok), describe(vector.expected, true));
    }
  }

  for (const vector of args.vectors) {
    if (vector.unbindable === true) {
      // Only an object binds: null, an array or a scalar is unbindable (profile 3.4 and 8.2).
      const unbindable = !isObject(vector.arguments) || !isBindable(vector.arguments);
      report(unbindable, vector.id, unbindable ? "unbindable" : "bindable", "unbindable");
      continue;
    }
    let canonical: string;
    let digest: string;
    try {
      canonical = canonicalize(vector.arguments);
      digest = argumentsDigest(vector.arguments);
    } catch (error) {
      report(false, vector.id, `no canonical form (${error instanceof Error ? error.message : String(error)})`, "canonical");
      continue;
    }
    const ok = canonical === vector.canonical && digest === vector.digest;
    report(ok, vector.id, `JCS ${canonical}, digest ${digest}`, `JCS ${vector.canonical}, digest ${vector.digest}`);
  }

  if (existsSync(join(dir, "invalid-keys.json"))) {
    for (const vector of (await read("invalid-keys.json")).vectors) {
      let refused = false;
      try {
        // A "jwks" entry is a ring whose keys each load alone (profile 12.4).
        if (vector.jwks !== undefined) Keyring.fromJwks(vector.jwks);
        else Key.fromJwk(vector.jwk);
      } catch (error) {
        if (!(error instanceof KeyringError)) throw error;
        refused = true;
      }
      report(refused, `invalid-keys ${vector.id}`, refused ? "refused at load" : "loaded", "refused at load");
    }
  }

  print(`${passed} passed, ${failed} failed`);
  return failed;
}

function describe(verdict: Verdict, brief: boolean): string {
  if (!verdict.valid) return `refused, ${verdict.reason}`;
  return brief ? "valid" : `valid, state ${JSON.stringify(verdict.state)}`;
}
