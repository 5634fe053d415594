/**
 * The jobs the interop tests send (tests/interop/harness.py): each checked member by member, so
 * that a bad job gets a clear message instead of a wrong verdict.
 */

import { loadRing, loadSigningKey } from "./keys.js";
import type { MintRequest } from "./mint.js";
import {
  DEFAULT_LEEWAY,
  DEFAULT_MAX_LIFETIME,
  DEFAULT_MAX_TOKEN_BYTES,
  MAX_LEEWAY,
  type Target,
} from "./profile.js";
import { isObject, type Json, type NumberLiteral } from "./strict-json.js";
import type { Policy, Request } from "./verify.js";

/** A job the program cannot run. The message names the member, never its value. */
export class JobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JobError";
  }
}

type Job = { readonly [name: string]: Json };

const VERIFY_MEMBERS = [
  ...["keys", "token", "issuer", "user", "tool", "prompt", "resource", "arguments", "now"],
  ...["max_lifetime", "leeway", "max_token_bytes", "require_arguments"],
];
const MINT_MEMBERS = ["key", "issuer", "user", "tool", "prompt", "resource", "arguments", "now", "ttl", "state", "jti"];
const JTI = /^[A-Za-z0-9_-]{22,64}$/;

/** A verify job: the token, the verifier's ring and policy, and the request being served. */
export interface VerifyJob {
  readonly token: unknown;
  readonly ring: Awaited<ReturnType<typeof loadRing>>;
  readonly request: Request;
  readonly policy: Policy;
}

/** Read a verify job. */
export async function readVerifyJob(job: Json): Promise<VerifyJob> {
  const members = checkMembers(job, VERIFY_MEMBERS);
  if (!Object.hasOwn(members, "token")) throw new JobError('the job has no "token"');
  const args = Object.hasOwn(members, "arguments") ? members.arguments : {}; // absent means {}
  if (!isObject(args)) throw new JobError('"arguments" must be a JSON object');
  return {
    token: members.token, // any JSON value: a token that is not a string is refused as malformed
    ring: await loadRing(members.keys),
    request: { user: nonEmpty(members, "user"), target: target(members), arguments: args },
    policy: {
      issuer: nonEmpty(members, "issuer"),
      now: integer(members, "now", 0),
      maxLifetime: integer(members, "max_lifetime", 1, DEFAULT_MAX_LIFETIME),
      leeway: integer(members, "leeway", 0, DEFAULT_LEEWAY, MAX_LEEWAY),
      maxTokenBytes: integer(members, "max_token_bytes", 1, DEFAULT_MAX_TOKEN_BYTES),
      requireArguments: flag(members, "require_arguments"),
    },
  };
}

/**
 * Read a mint job. `unsafeIntegers` are the integer literals beyond 2^53 - 1 in the job's text
 * (paths relative to the job): a state holding one is not I-JSON, which a JavaScript value cannot show.
 */
export async function readMintJob(job: Json, unsafeIntegers: readonly NumberLiteral[]): Promise<MintRequest> {
  const members = checkMembers(job, MINT_MEMBERS);
  if (!Object.hasOwn(members, "state")) throw new JobError('the job has no "state"');
  if (unsafeIntegers.some((literal) => literal.path[0] === "state")) {
    throw new JobError("the state holds an integer outside the safe range +/-(2^53 - 1)");
  }
  const args = members.arguments;
  if (args !== undefined && !isObject(args)) throw new JobError('"arguments" must be a JSON object');
  const jti = members.jti;
  if (jti !== undefined && (typeof jti !== "string" || !JTI.test(jti))) {
    throw new JobError('"jti" must be 22 to 64 base64url characters');
  }
  const now = integer(members, "now", 0);
  return {
    key: await loadSigningKey(members.key),
    issuer: nonEmpty(members, "issuer"),
    user: nonEmpty(members, "user"),
    target: target(members),
    arguments: args,
    now,
    ttl: integer(members, "ttl", 1, undefined, Number.MAX_SAFE_INTEGER - now),
    state: members.state as Json,
    jti,
  };
}

function checkMembers(job: Json, allowed: readonly string[]): Job {
  if (!isObject(job)) throw new JobError("a job must be a JSON object");
  const unknown = Object.keys(job).filter((name) => !allowed.includes(name));
  if (unknown.length > 0) throw new JobError(`the job has members this command does not know: ${unknown.join(", ")}`);
  return job;
}

function target(job: Job): Target {
  const given = (["tool", "prompt", "resource"] as const).filter((kind) => job[kind] !== undefined);
  const [kind] = given;
  if (given.length !== 1 || kind === undefined) throw new JobError('give exactly one of "tool", "prompt", "resource"');
  const name = nonEmpty(job, kind);
  if (kind === "tool") return { tool: name };
  if (kind === "prompt") return { prompt: name };
  return { resource: name };
}

function nonEmpty(job: Job, name: string): string {
  const value = job[name];
  if (typeof value !== "string" || value === "") throw new JobError(`"${name}" must be a non-empty string`);
  return value;
}

function flag(job: Job, name: string): boolean {
  const value = job[name] ?? false;
  if (typeof value !== "boolean") throw new JobError(`"${name}" must be true or false`);
  return value;
}

function integer(job: Job, name: string, min: number, fallback?: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = Object.hasOwn(job, name) ? job[name] : fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new JobError(`"${name}" must be an integer from ${min} to ${max}`);
  }
  return value;
}
