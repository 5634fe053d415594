/**
 * The sealer: mint and open `requestState` tokens of the profile.
 *
 * {@link StateSealer} ties the layers together: `keys` for keys, `jws` for the compact serialization
 * and header, `claims` for the claim set, and a replay store for single use. It holds configuration
 * only. Options, defaults, reason codes and messages are those of the Python library's `StateSealer`,
 * so a Python and a TypeScript replica configured alike give every token the same verdict.
 *
 * It implements rule AGT-18 of the Agent Wranglers agents-as-users playbook:
 * https://agentwranglers.se/playbook/agents-as-users/mcp-servers/signed-request-state
 */

import { utf8Length } from "./lib/utf8.js";
import * as b64 from "./token/b64.js";
import { argumentsDigest } from "./binding/canonical.js";
import * as claims from "./token/claims.js";
import { InvalidRequestState, type Reason } from "./errors.js";
import { checkState, dumps, type Json, type ParsedJson } from "./token/json.js";
import * as jwe from "./token/jwe.js";
import * as jws from "./token/jws.js";
import { Keyring, SIGNATURE_BYTES } from "./keys/keyring.js";
import { isKeySource, type KeySource } from "./keys/source.js";
import { ReplayStoreError, replayKey, type ReplayStore } from "./replay/store.js";
import { audience, METHODS, type TargetOptions } from "./binding/target.js";
import { checkMetrics, record, type StateMetrics } from "./metrics/events.js";

/** The default lifetime of a token, in seconds (profile, section 4). */
export const DEFAULT_TTL = 600;
/** The default longest lifetime a verifier accepts, in seconds (step 13). */
export const DEFAULT_MAX_LIFETIME = 600;
/** The default clock-skew allowance, in seconds (steps 14 and 15). */
export const DEFAULT_LEEWAY = 0;
/** The largest leeway a verifier may configure, in seconds. */
export const MAX_LEEWAY = 300;
/** The default size cap of a token, in bytes of its UTF-8 encoding (step 1). */
export const DEFAULT_MAX_TOKEN_BYTES = 8192;
const MIN_TOKEN_BYTES = 512;
const JTI_BYTES = 16;

/** How a {@link StateSealer} is configured. Every option but `issuer` has the profile's default. */
export interface SealerOptions {
  /** This server's identity, written to and required in `iss`. */
  readonly issuer: string;
  /** Lifetime of minted tokens in seconds (default 600, or `maxLifetime` when that is shorter). */
  readonly ttl?: number;
  /** The longest `exp - iat` this verifier accepts (default 600; at least `ttl`). */
  readonly maxLifetime?: number;
  /** Seconds of clock skew allowed on `exp` and `iat` (default 0, at most 300). */
  readonly leeway?: number;
  /** The size cap, checked before any decoding (default 8192, at least 512). */
  readonly maxTokenBytes?: number;
  /** The current time in seconds since the epoch (default `Date.now() / 1000`). */
  readonly clock?: () => number;
  /**
   * That many random bytes, for `jti` only (default the platform CSPRNG, `crypto.getRandomValues`). The
   * encrypted form's IV never comes from here: it is always drawn from the platform CSPRNG (decision D6).
   */
  readonly entropy?: (size: number) => Uint8Array;
  /** Where `consume: true` records redeemed tokens; without one, `consume: true` is a configuration error. */
  readonly replayStore?: ReplayStore | undefined;
  /**
   * Require the argument binding (profile step 19; default false): a token for a tool or a prompt
   * without `args_sha256` is refused with `wrong_request`, and {@link StateSealer.seal} for a tool or a
   * prompt needs `arguments` (`{}` for none). A resource read has no arguments, so the requirement never
   * applies to it. {@link StateSealer.open} can override it per call.
   */
  readonly requireArguments?: boolean;
  /**
   * Where seals, opens, refusals, redemptions and store outages are counted (default none): a function
   * `(event, attributes) => void`, or `openTelemetryMetrics()` of `mrtr-state/opentelemetry`. The
   * events and attributes are those of `spec/metrics.json`; no value is ever a token, a claim, a kid or
   * a key. {@link StateSealer.open} counts; {@link StateSealer.verify}, a step of it, does not.
   */
  readonly metrics?: StateMetrics | undefined;
}

/** The user, target and arguments a token is sealed for. Exactly one of `tool`, `prompt`, `resource`. */
export interface SealOptions extends TargetOptions {
  readonly user: string;
  /** The request's arguments object: the token then binds their digest. */
  readonly arguments?: unknown;
}

/** The retry a token is opened for; with `consume: true` it is also redeemed in the replay store. */
export interface OpenOptions extends SealOptions {
  readonly consume?: boolean;
  /** Overrides the sealer's `requireArguments` for this call (absent keeps it). */
  readonly requireArguments?: boolean | undefined;
}

function integer(name: string, value: unknown, low: number, high?: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value)) throw new TypeError(`${name} must be an integer`);
  if (value < low || (high !== undefined && value > high)) {
    throw new RangeError(`${name} must be ${high === undefined ? `at least ${low}` : `from ${low} to ${high}`}, got ${value}`);
  }
  return value;
}

function nonEmpty(name: string, value: unknown): string {
  if (typeof value !== "string") throw new TypeError(`${name} must be a string, not ${typeof value}`);
  if (value === "") throw new RangeError(`${name} must not be empty`);
  return value;
}

/** Profile 5 steps 2 to 11 (5.1 for the encrypted form) under one ring: the claims as parsed JSON. */
async function decode(token: string, ring: Keyring, maxBytes: number): Promise<ParsedJson & { value: jws.JsonObject }> {
  if (jws.isEncryptedForm(token)) return jwe.openEncrypted(token, ring); // Profile 5.1, steps 2 to 11
  const [header, payload, signature] = jws.split(token, maxBytes); // Profile 5, steps 2 and 3
  // Profile 5, step 4 (the header is a strict JSON object), then steps 5 to 9.
  const key = jws.keyForHeader(jws.decodeObject(header, "header").value, ring);
  await jws.verifySignature(key, token, signature); // Profile 5, step 10
  // Profile 5, step 11: the claims are a strict JSON object.
  return jws.decodeObject(payload, "payload");
}

/** The MCP method of the one target in `options` (already checked by `audience`). */
function method(options: TargetOptions): string {
  if (options.tool !== undefined) return METHODS.tool;
  return options.prompt !== undefined ? METHODS.prompt : METHODS.resource;
}

/**
 * Seal state into a `requestState` token, and open it on the retry.
 *
 * ```ts
 * const sealer = new StateSealer(Keyring.fromEnv(), { issuer: "https://files.example.com" });
 * const token = await sealer.seal({ step: "confirm" }, { user: "alice", tool: "deploy", arguments: { env: "prod" } });
 * const state = await sealer.open(token, { user: "alice", tool: "deploy", arguments: { env: "prod" } });
 * ```
 *
 * A sealer holds no mutable state; one can serve every request of a server.
 */
export class StateSealer {
  /** The issuer this sealer writes and requires. */
  readonly issuer: string;
  /** The lifetime of minted tokens, in seconds. */
  readonly ttl: number;
  /** The longest lifetime accepted, in seconds. */
  readonly maxLifetime: number;
  /** The clock-skew allowance, in seconds. */
  readonly leeway: number;
  /** The size cap, in bytes. */
  readonly maxTokenBytes: number;
  /** Whether a token must carry `args_sha256`. */
  readonly requireArguments: boolean;
  /** The store `consume: true` redeems in, or `undefined`. */
  readonly replayStore: ReplayStore | undefined;
  readonly #clock: () => number;
  readonly #entropy: (size: number) => Uint8Array;
  readonly #metrics: StateMetrics | undefined;
  readonly #keys: Keyring | KeySource;

  /**
   * @param keys a {@link Keyring}, or a {@link KeySource} whose keys can change while the sealer runs
   *   (a `RemoteJwks`, a reloading key file): its current ring is read on every seal and open, and a
   *   token whose `kid` it does not hold makes it look for new keys once (within its cooldown).
   */
  constructor(keys: Keyring | KeySource, options: SealerOptions) {
    if (!(keys instanceof Keyring) && !isKeySource(keys)) throw new TypeError("keys must be a Keyring or a key source (a RemoteJwks, ...)");
    if (typeof options !== "object" || options === null) throw new TypeError("options must be an object with an issuer");
    const maxLifetime = integer("maxLifetime", options.maxLifetime ?? DEFAULT_MAX_LIFETIME, 1);
    const ttl = integer("ttl", options.ttl ?? Math.min(DEFAULT_TTL, maxLifetime), 1);
    if (ttl > maxLifetime) throw new RangeError(`ttl (${ttl} s) must not exceed maxLifetime (${maxLifetime} s)`);
    const clock = options.clock ?? (() => Date.now() / 1000);
    const entropy = options.entropy ?? ((size: number) => crypto.getRandomValues(new Uint8Array(size)));
    if (typeof clock !== "function" || typeof entropy !== "function") throw new TypeError("clock and entropy must be functions");
    const store = options.replayStore;
    if (store !== undefined && (typeof store !== "object" || store === null || typeof store.redeem !== "function")) {
      throw new TypeError("replayStore must have a redeem(key, { expiresAt }) method");
    }
    const requireArguments = options.requireArguments ?? false;
    if (typeof requireArguments !== "boolean") throw new TypeError("requireArguments must be a boolean");
    this.#keys = keys;
    this.issuer = nonEmpty("issuer", options.issuer);
    this.ttl = ttl;
    this.maxLifetime = maxLifetime;
    this.leeway = integer("leeway", options.leeway ?? DEFAULT_LEEWAY, 0, MAX_LEEWAY);
    this.maxTokenBytes = integer("maxTokenBytes", options.maxTokenBytes ?? DEFAULT_MAX_TOKEN_BYTES, MIN_TOKEN_BYTES);
    this.requireArguments = requireArguments;
    this.replayStore = store;
    this.#clock = clock;
    this.#entropy = entropy;
    this.#metrics = checkMetrics(options.metrics);
    Object.freeze(this);
  }

  /** The current key ring (a key source's last good keys): the first key signs, every key verifies. */
  get ring(): Keyring {
    return this.#keys instanceof Keyring ? this.#keys : this.#keys.keyring;
  }

  /**
   * Mint a `requestState` token for `state`, bound to `user` and one target. With `arguments` (the
   * request's arguments object), the token also binds their digest. The state is readable by the
   * client: never put a secret in it.
   *
   * @throws TypeError the state or the arguments hold a value that is not JSON (or a bad option).
   * @throws TypeError also when the sealer requires the argument binding and `arguments` is missing for
   *   a tool or a prompt.
   * @throws RangeError the state is JSON the profile cannot carry exactly, the arguments cannot be bound
   *   (`UnbindableArguments`: a number whose double has magnitude 2^53 or more, however written, so pass
   *   such ids as strings; or arguments that are JSON but not an object, `null` included), or
   *   the token would exceed the size cap.
   * @throws KeyringError the ring cannot sign (its first key is a public key).
   */
  async seal(state: unknown, options: SealOptions): Promise<string> {
    const aud = audience(options);
    const user = nonEmpty("user", options.user);
    checkState(state);
    if (options.arguments === undefined && this.requireArguments && options.resource === undefined) {
      throw new TypeError(
        "this sealer requires the argument binding (requireArguments: true): pass the request's arguments " +
          "to seal (an empty object when it has none)",
      );
    }
    const digest = options.arguments === undefined ? undefined : argumentsDigest(options.arguments);
    const key = this.ring.signingKey;
    const jti = b64.encode(this.#entropy(JTI_BYTES));
    const payload = dumps(
      claims.build({ issuer: this.issuer, user, aud, iat: Math.floor(this.#clock()), ttl: this.ttl, jti, state, argsSha256: digest }),
    );
    const bytes = Math.ceil((utf8Length(payload) * 4) / 3);
    // The token's size, known before any cryptography: header, payload (or ciphertext, as long as the
    // payload) and signature (or IV and tag) segments and their dots.
    const size =
      key.alg === "A256GCM"
        ? jwe.headerSegment(key).length + 4 + 16 + bytes + 22
        : jws.headerSegment(key).length + 2 + bytes + Math.ceil((SIGNATURE_BYTES[key.alg] * 4) / 3);
    if (size > this.maxTokenBytes) {
      throw new RangeError(`the sealed state would be ${size} bytes, over the cap of ${this.maxTokenBytes}; keep less in requestState`);
    }
    const token = await (key.alg === "A256GCM" ? jwe.encrypt(key, payload) : jws.sign(key, payload));
    record(this.#metrics, "seal", { method: method(options) });
    return token;
  }

  /**
   * Verify a `requestState` token and return the state it carries.
   *
   * `user`, the target and `arguments` are those of the retry being served. With `consume: true` the
   * token is also redeemed in the replay store, after every other check, so it opens at most once
   * (`replayed` the second time, `store_unavailable` if the store cannot answer). Every failure rejects
   * with an {@link InvalidRequestState}; nothing else is thrown for any token.
   *
   * @throws TypeError `consume: true` on a sealer without a replay store, or a bad user or target.
   */
  async open(token: unknown, options: OpenOptions): Promise<Json> {
    if (options.consume === true && this.replayStore === undefined) {
      throw new TypeError("consume: true needs a StateSealer made with a replayStore");
    }
    let valid: claims.ValidClaims;
    try {
      valid = await this.verify(token, options);
      if (options.consume === true && this.replayStore !== undefined) {
        await this.#redeem(this.replayStore, valid);
      }
    } catch (error) {
      if (error instanceof InvalidRequestState) this.#countRefusal(method(options), error.reason);
      throw error;
    }
    const target = method(options);
    record(this.#metrics, "open", { method: target, outcome: "accepted" });
    if (options.consume === true) record(this.#metrics, "redemption", { method: target });
    return valid.state;
  }

  /** A refusal as counters: the target method and the reason code, never a value. */
  #countRefusal(target: string, reason: Reason): void {
    if (this.#metrics === undefined) return;
    record(this.#metrics, "open", { method: target, outcome: "refused" });
    record(this.#metrics, "refusal", { method: target, reason });
    if (reason === "store_unavailable") record(this.#metrics, "store_outage", { method: target });
  }

  /** Steps 1 to 19 (no redemption): the validated claims, or an {@link InvalidRequestState}. */
  async verify(token: unknown, options: OpenOptions): Promise<claims.ValidClaims> {
    const aud = audience(options);
    const user = nonEmpty("user", options.user);
    jws.checkSize(token, this.maxTokenBytes); // Profile 5, step 1 (both forms)
    const ring = this.ring;
    let parsed;
    try {
      parsed = await decode(token, ring, this.maxTokenBytes);
    } catch (error) {
      // Step 8 refuses before anything has an effect, so a second attempt with new keys is safe; the
      // source's cooldown bounds how often a token with an unknown kid makes it look.
      const source = this.#keys;
      if (!(error instanceof InvalidRequestState && error.reason === "unknown_key") || source instanceof Keyring) throw error;
      const changed = source.refreshForUnknownKey === undefined ? false : await source.refreshForUnknownKey().catch(() => false);
      const current = this.ring;
      if (!changed && current === ring) throw error;
      parsed = await decode(token, current, this.maxTokenBytes);
    }
    // Profile 5, steps 12 to 19.
    return claims.validate(parsed, {
      now: Math.floor(this.#clock()),
      leeway: this.leeway,
      maxLifetime: this.maxLifetime,
      issuer: this.issuer,
      user,
      aud,
      arguments: options.arguments,
      requireArguments: (options.requireArguments ?? this.requireArguments) && options.resource === undefined,
    });
  }

  /**
   * Step 20. The key is the issuer-scoped `jti`; the retention runs to `exp` plus twice the leeway (a
   * replica accepts the token until its own clock reads `exp + leeway`, and the leeway also bounds how
   * far that clock may lag), as the Python library computes it.
   */
  async #redeem(store: ReplayStore, valid: claims.ValidClaims): Promise<void> {
    let first: unknown;
    try {
      // Profile 5, step 20: redeem the issuer-scoped jti once.
      first = await store.redeem(replayKey(valid.iss, valid.jti), { expiresAt: valid.exp + 2 * this.leeway });
    } catch (error) {
      if (error instanceof ReplayStoreError) throw new InvalidRequestState("store_unavailable", error.message);
      const name = error instanceof Error ? error.name : typeof error;
      throw new InvalidRequestState("store_unavailable", `the replay store raised ${name}`);
    }
    if (first === true) return;
    if (first === false) throw new InvalidRequestState("replayed", "this token has already been redeemed");
    throw new InvalidRequestState("store_unavailable", `the replay store answered ${typeof first}, not a boolean`);
  }

  /** The sealer's settings, never a key. */
  toString(): string {
    return (
      `StateSealer(issuer=${JSON.stringify(this.issuer)}, ttl=${this.ttl}, maxLifetime=${this.maxLifetime}, ` +
      `leeway=${this.leeway}, maxTokenBytes=${this.maxTokenBytes}, ring=${this.ring})`
    );
  }
}
