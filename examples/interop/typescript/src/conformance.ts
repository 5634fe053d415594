/**
 * The `conformance` command: the conformance protocol of `mrtr-state conformance` (docs/conformance.md)
 * on stdin and stdout, one JSON object a line, answered in order with the package's verdicts.
 */

import { createInterface } from "node:readline";

import {
  argumentsDigest,
  dumps,
  isBindable,
  Key,
  Keyring,
  KeyringError,
  type Json,
} from "mrtr-state";

import { isObject, JobError, verifyJob } from "./jobs.js";

async function answer(request: { readonly [name: string]: Json }): Promise<{ [name: string]: Json }> {
  const { id: _id, op, ...job } = request;
  if (op === "verify") return await verifyJob(job);
  if (op === "digest") {
    // Absent arguments are {}; present ones that are not an object (null included) are unbindable (8.2).
    const args = Object.hasOwn(request, "arguments") ? request.arguments : {};
    if (!isObject(args) || !isBindable(args)) return { unbindable: true };
    try {
      return { digest: argumentsDigest(args) };
    } catch {
      return { unbindable: true };
    }
  }
  if (op === "load_key") {
    try {
      // One key ("jwk"), or a ring ("jwks"), whose keys must also keep their secrets apart (profile 7.6).
      if (Object.hasOwn(request, "jwks")) Keyring.fromJwks(request.jwks);
      else Key.fromJwk(request.jwk);
      return { loaded: true };
    } catch (error) {
      if (error instanceof KeyringError || error instanceof TypeError) return { loaded: false };
      throw error;
    }
  }
  return { unsupported: true };
}

/** Answer every request line; a line that is not a JSON object, or a job that cannot run, gets an error answer. */
export async function conformance(): Promise<void> {
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    let reply: { [name: string]: Json };
    let id: Json = null;
    try {
      // A request line is read as a request is (profile 3.4, issue 32 D2): JSON.parse, whose last member of a
      // repeated name wins, and with no depth limit of its own, so arguments nested deeper than the 256
      // levels that bind are read, and found unbindable, with the line's own id.
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new JobError("a request line is not JSON");
      }
      if (!isObject(parsed)) throw new JobError("a request line is not a JSON object");
      id = parsed.id ?? null;
      reply = await answer(parsed);
    } catch (error) {
      if (!(error instanceof JobError)) throw error;
      reply = { error: error.message };
    }
    process.stdout.write(dumps({ id, ...reply }) + "\n");
  }
}
