/**
 * The jobs the interop tests send (tests/interop/harness.py), read member by member so that a bad job
 * gets a clear message instead of a wrong verdict, and run with the `mrtr-state` package.
 */

import {
  InvalidRequestState,
  Key,
  Keyring,
  KeyringError,
  StateSealer,
  type Json,
  type NumberLiteral,
  type Reason,
  type TargetOptions,
} from "mrtr-state";

/** A job the program cannot run. The message names the member, never its value. */
export class JobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JobError";
  }
}

/** The outcome of a verify job: the state of an accepted token, or the reason code of a refused one. */
export type Verdict = { readonly valid: true; readonly state: Json } | { readonly valid: false; readonly reason: Reason };

type Job = { readonly [name: string]: Json };

const VERIFY_MEMBERS = [
  ...["keys", "token", "issuer", "user", "tool", "prompt", "resource", "arguments", "now"],
  ...["max_lifetime", "leeway", "max_token_bytes", "require_arguments"],
];
const MINT_MEMBERS = ["key", "issuer", "user", "tool", "prompt", "resource", "arguments", "now", "ttl", "state", "jti"];
const JTI = /^[A-Za-z0-9_-]{22,64}$/;

/** Run a verify job: the package's `StateSealer.open` with the job's ring, policy, clock and request. */
export async function verifyJob(job: Json): Promise<Verdict> {
  const members = checkMembers(job, VERIFY_MEMBERS);
  if (!Object.hasOwn(members, "token")) throw new JobError('the job has no "token"');
  // Absent means {}; any other value is the retry's, and one that is not an object (null included) is
  // unbindable (profile 3.4 and 8.2): it matches no digest, which the package decides at step 19.
  const args = Object.hasOwn(members, "arguments") ? members.arguments : {};
  const now = integer(members, "now", 0);
  const requireArguments = members.require_arguments ?? false;
  if (typeof requireArguments !== "boolean") throw new JobError('"require_arguments" must be a boolean');
  const sealer = configured(() => {
    const options = {
      issuer: nonEmpty(members, "issuer"),
      clock: () => now,
      requireArguments,
      ...optionalInteger(members, "max_lifetime", "maxLifetime"),
      ...optionalInteger(members, "leeway", "leeway"),
      ...optionalInteger(members, "max_token_bytes", "maxTokenBytes"),
    };
    return new StateSealer(Keyring.fromJwks(members.keys), { ...options, ttl: 1 });
  });
  try {
    const state = await sealer.open(members.token, { user: nonEmpty(members, "user"), ...target(members), arguments: args });
    return { valid: true, state };
  } catch (error) {
    if (error instanceof InvalidRequestState) return { valid: false, reason: error.reason };
    throw error;
  }
}

/**
 * Run a mint job. `unsafeIntegers` are the integer literals beyond 2^53 - 1 in the job's text (paths
 * relative to the job): a state holding one is not I-JSON, which a JavaScript value cannot show.
 */
export async function mintJob(job: Json, unsafeIntegers: readonly NumberLiteral[]): Promise<string> {
  const members = checkMembers(job, MINT_MEMBERS);
  if (!Object.hasOwn(members, "state")) throw new JobError('the job has no "state"');
  if (unsafeIntegers.some((literal) => literal.path[0] === "state")) {
    throw new JobError("the state holds an integer outside the safe range +/-(2^53 - 1)");
  }
  const args = members.arguments;
  if (args !== undefined && !isObject(args)) throw new JobError('"arguments" must be a JSON object');
  const now = integer(members, "now", 0);
  const ttl = integer(members, "ttl", 1, Number.MAX_SAFE_INTEGER - now);
  const jti = jtiBytes(members.jti);
  const sealer = configured(
    () =>
      new StateSealer(new Keyring([Key.fromJwk(members.key)]), {
        issuer: nonEmpty(members, "issuer"),
        ttl,
        maxLifetime: ttl,
        clock: () => now,
        // The token id is the base64url of these bytes: the job's own, or 16 fresh random ones.
        ...(jti === undefined ? {} : { entropy: () => jti }),
      }),
  );
  try {
    return await sealer.seal(members.state, {
      user: nonEmpty(members, "user"),
      ...target(members),
      ...(args === undefined ? {} : { arguments: args }),
    });
  } catch (error) {
    if (error instanceof TypeError || error instanceof RangeError || error instanceof KeyringError) {
      throw new JobError(error.message);
    }
    throw error;
  }
}

function configured(make: () => StateSealer): StateSealer {
  try {
    return make();
  } catch (error) {
    if (error instanceof KeyringError || error instanceof TypeError || error instanceof RangeError) {
      throw new JobError(error.message);
    }
    throw error;
  }
}

function jtiBytes(jti: Json | undefined): Uint8Array | undefined {
  if (jti === undefined) return undefined;
  if (typeof jti !== "string" || !JTI.test(jti)) throw new JobError('"jti" must be 22 to 64 base64url characters');
  const bytes = new Uint8Array(Buffer.from(jti, "base64url"));
  if (Buffer.from(bytes).toString("base64url") !== jti) throw new JobError('"jti" must be canonical base64url');
  return bytes;
}

/** Whether `value` is a JSON object (not an array, not null). */
export function isObject(value: unknown): value is { [name: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkMembers(job: Json, allowed: readonly string[]): Job {
  if (!isObject(job)) throw new JobError("a job must be a JSON object");
  const unknown = Object.keys(job).filter((name) => !allowed.includes(name));
  if (unknown.length > 0) throw new JobError(`the job has members this command does not know: ${unknown.join(", ")}`);
  return job;
}

function target(job: Job): TargetOptions {
  const given = (["tool", "prompt", "resource"] as const).filter((kind) => job[kind] !== undefined);
  const [kind] = given;
  if (given.length !== 1 || kind === undefined) throw new JobError('give exactly one of "tool", "prompt", "resource"');
  return { [kind]: nonEmpty(job, kind) };
}

function nonEmpty(job: Job, name: string): string {
  const value = job[name];
  if (typeof value !== "string" || value === "") throw new JobError(`"${name}" must be a non-empty string`);
  return value;
}

function integer(job: Job, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = job[name];
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new JobError(`"${name}" must be an integer from ${min} to ${max}`);
  }
  return value;
}

function optionalInteger(job: Job, name: string, option: string): { [option: string]: number } {
  return Object.hasOwn(job, name) ? { [option]: integer(job, name, 0) } : {};
}
