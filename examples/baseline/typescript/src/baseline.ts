/**
 * A baseline verifier of the mrtr-state profile (spec/profile.md, section 12.5) on a stock jose:
 * the library's own checks configured as a typical server would, plus the few checks of the
 * baseline class that jose does not make. It speaks the conformance protocol on stdin/stdout
 * (`mrtr-state conformance --help`).
 *
 * What it adds to jose: the size cap before decoding, the key looked up by `kid` with the algorithm
 * pinned to that key, `typ` compared exactly (jose ignores case and an `application/` prefix), and
 * the argument digest (RFC 8785 through `canonicalize`). jose gives the signature (or, for the
 * encrypted form, the decryption with `dir` + `A256GCM`), `iss`, `sub`, `aud` and `exp` (refused from
 * the second `exp` itself). It is NOT a strict verifier: it reads JSON
 * leniently and accepts re-encodings, `aud` arrays and extra claims, which only a key holder can make.
 */

import { createHash } from "node:crypto";
import { createInterface } from "node:readline";

import canonicalize from "canonicalize";
import { decodeProtectedHeader, errors, importJWK, jwtDecrypt, jwtVerify, type JWK } from "jose";

type Reply = { valid: true; state: unknown } | { valid: false; reason: string } | Record<string, unknown>;

const METHODS: Record<string, string> = { tool: "tools/call", prompt: "prompts/get", resource: "resources/read" };

function refuse(reason: string): Reply {
  return { valid: false, reason };
}

/** Arguments with an integer beyond 2^53 - 1 (however written) bind to no digest (profile 3.4). */
function bindable(value: unknown): boolean {
  if (typeof value === "number") return !(Number.isInteger(value) && !Number.isSafeInteger(value));
  if (Array.isArray(value)) return value.every(bindable);
  if (value !== null && typeof value === "object") return Object.values(value).every(bindable);
  return true;
}

/** Only an object binds: arguments present as null, an array or a scalar are unbindable (profile 3.4, 8.2). */
function digest(args: unknown): string | undefined {
  const object = args !== null && typeof args === "object" && !Array.isArray(args);
  const text = object && bindable(args) ? canonicalize(args) : undefined;
  return text === undefined ? undefined : createHash("sha256").update(text, "utf8").digest("base64url");
}

/** Absent arguments are {}; "arguments": null is present, and unbindable (profile 8.2). */
function argumentsOf(request: Record<string, any>): unknown {
  return "arguments" in request ? request.arguments : {};
}

async function verify(request: Record<string, any>): Promise<Reply> {
  const token: string = request.token;
  if (Buffer.byteLength(token, "utf8") > (request.max_token_bytes ?? 8192)) return refuse("too_large");
  let header;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return refuse("malformed");
  }
  if (header.typ !== "mrtr-state+jwt") return refuse("wrong_type");
  const jwk = (request.keys.keys as JWK[]).find((key) => key.kid === header.kid);
  if (jwk === undefined) return refuse("unknown_key");
  const alg = jwk.alg === "A256GCM" ? "dir" : jwk.kty === "oct" ? "HS256" : "EdDSA";
  const target = Object.keys(METHODS).find((name) => name in request) ?? "tool";
  // A Date ends at 8.64e12 s, a NumericDate of the profile at 2^53 - 1: compare `exp` as integers here.
  const now: number = request.now;
  try {
    const options = {
      issuer: request.issuer,
      subject: request.user,
      audience: `${METHODS[target]}:${request[target]}`,
      currentDate: new Date(Math.min(now, 8.64e12) * 1000),
      clockTolerance: request.leeway ?? 0,
      requiredClaims: ["exp"],
    };
    const key = await importJWK(jwk, alg === "dir" ? "A256GCM" : alg);
    const { payload } =
      alg === "dir"
        ? await jwtDecrypt(token, key, { ...options, keyManagementAlgorithms: ["dir"], contentEncryptionAlgorithms: ["A256GCM"] })
        : await jwtVerify(token, key, { ...options, algorithms: [alg] });
    if (typeof payload.exp !== "number" || now >= payload.exp + (request.leeway ?? 0)) return refuse("expired");
    const required = request.require_arguments === true && target !== "resource"; // a read has no arguments
    const bound = payload.args_sha256 !== undefined || required;
    if (bound && payload.args_sha256 !== digest(argumentsOf(request))) return refuse("wrong_request");
    return { valid: true, state: payload.state };
  } catch (error) {
    if (error instanceof errors.JWTExpired) return refuse("expired");
    if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWEDecryptionFailed) {
      return refuse("bad_signature");
    }
    if (error instanceof errors.JWTClaimValidationFailed) {
      const claim = { iss: "wrong_issuer", sub: "wrong_user", aud: "wrong_tool" }[error.claim];
      return refuse(claim ?? "malformed");
    }
    return refuse("malformed");
  }
}

async function reply(request: Record<string, any>): Promise<Reply> {
  if (request.op === "verify") return verify(request);
  if (request.op === "digest") {
    const value = digest(argumentsOf(request));
    return value === undefined ? { unbindable: true } : { digest: value };
  }
  return { unsupported: true };
}

for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  const request = JSON.parse(line) as Record<string, any>;
  process.stdout.write(JSON.stringify({ id: request.id, ...(await reply(request)) }) + "\n");
}
