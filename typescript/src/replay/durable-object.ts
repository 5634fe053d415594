/**
 * Single use on Cloudflare Workers: a replay store kept in Durable Objects (`mrtr-state/durable-object`).
 *
 * A Worker has no process that lives between requests and no Redis client that runs without TCP
 * sockets, and Workers KV is eventually consistent (two locations can both read "not redeemed" and both
 * accept the token), so it cannot keep single use. A Durable Object can: each object runs in one place,
 * handles its requests one at a time, and its storage is strongly consistent; while a storage operation
 * runs, no other event reaches the object (its input gate), and its answer leaves only once the write is
 * durable (its output gate). So the check and the write of one redemption cannot interleave with another's.
 *
 * Two halves, both here so that the protocol between them has one owner:
 *
 * - {@link ReplayStoreObject}, the Durable Object class: the Worker exports it, and its configuration
 *   binds it (`[[durable_objects.bindings]] name = "REPLAY", class_name = "ReplayStoreObject"`, with a
 *   migration that creates the class).
 * - {@link DurableObjectReplayStore}, the {@link ReplayStore} a `StateSealer` is given, over that binding.
 *
 * The names and retention are the Redis store's: the token's issuer-scoped `jti` is recorded as
 * `prefix + base64url(SHA-256(iss "#" jti))` for the milliseconds until `exp` plus twice the leeway, as a
 * duration from the store's clock. The key space is spread over 64 objects by the first character of the
 * hashed name, so one token is always checked by the same object. Verdicts are the Redis store's: `true`
 * the first time, `false` after, and a {@link ReplayStoreError} (refused as `store_unavailable`) whenever
 * the object cannot be asked or does not answer in time, never an acceptance.
 *
 * Only standard APIs and the Durable Object interfaces below (structural: no Workers types needed).
 */

import { checkTimeout, DEFAULT_PREFIX, retentionMs, storeKey } from "./shared.js";
import { ReplayStoreError, type ReplayStore } from "./store.js";

export { DEFAULT_PREFIX };

/** The default time to wait for the object's answer, in seconds (a cold object may need a moment). */
export const DEFAULT_TIMEOUT = 2.0;

/** What the store needs of a Durable Object stub: `fetch`. */
export interface DurableObjectStubLike {
  fetch(request: Request): Promise<Response>;
}

/** What the store needs of a Durable Object namespace binding (`env.REPLAY`). */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: never): DurableObjectStubLike;
}

/** What {@link ReplayStoreObject} needs of its storage (`state.storage` of a Durable Object). */
export interface DurableObjectStorageLike {
  get(key: string): Promise<unknown>;
  put(key: string, value: number): Promise<void>;
  delete(keys: string[]): Promise<number>;
  list(options: { readonly prefix?: string; readonly limit?: number }): Promise<Map<string, unknown>>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
}

/** What {@link ReplayStoreObject} needs of its state (the first argument of a Durable Object's constructor). */
export interface DurableObjectStateLike {
  readonly storage: DurableObjectStorageLike;
}

/** Options of a {@link DurableObjectReplayStore}. */
export interface DurableObjectReplayStoreOptions {
  /** Put before every name (default `mrtr-state:jti:`); give each application sharing one namespace its own. */
  readonly prefix?: string;
  /** The current time in seconds since the epoch; give it the sealer's clock. */
  readonly clock?: () => number;
  /** Seconds to wait for the object's answer before the redemption is refused (default 2, at most 60). */
  readonly timeout?: number;
}

/** The request path of a redemption; the body is `{"key": name, "ms": retention}`. */
const REDEEM_URL = "https://mrtr-state.invalid/redeem";
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** Entries removed by one alarm at most; the alarm comes back at once while more have expired. */
const SWEEP_BATCH = 1000;
/** The longest retention an object accepts, in ms: a day, far beyond any profile lifetime plus leeway. */
const MAX_RETENTION_MS = 86_400_000;
const MAX_NAME_LENGTH = 1024;

/**
 * A {@link ReplayStore} kept in Durable Objects, for Cloudflare Workers.
 *
 * ```ts
 * export { ReplayStoreObject } from "mrtr-state/durable-object";
 * const sealer = new StateSealer(ring, { issuer, replayStore: new DurableObjectReplayStore(env.REPLAY) });
 * ```
 */
export class DurableObjectReplayStore implements ReplayStore {
  /** The prefix of every name this store records. */
  readonly prefix: string;
  readonly #namespace: DurableObjectNamespaceLike;
  readonly #clock: () => number;
  readonly #timeoutMs: number;

  constructor(namespace: DurableObjectNamespaceLike, options: DurableObjectReplayStoreOptions = {}) {
    if (typeof namespace !== "object" || namespace === null || typeof namespace.idFromName !== "function" || typeof namespace.get !== "function") {
      throw new TypeError("namespace must be a Durable Object namespace binding (env.REPLAY), bound to ReplayStoreObject");
    }
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    if (typeof prefix !== "string") throw new TypeError("prefix must be a string");
    const clock = options.clock ?? (() => Date.now() / 1000);
    if (typeof clock !== "function") throw new TypeError("clock must be a function returning seconds since the epoch");
    this.prefix = prefix;
    this.#namespace = namespace;
    this.#clock = clock;
    this.#timeoutMs = checkTimeout(options.timeout ?? DEFAULT_TIMEOUT) * 1000;
  }

  /** The name under which the redemption of `key` is recorded (the Redis store's key for it). */
  storeKey(key: string): string {
    return storeKey(this.prefix, key);
  }

  /**
   * Record `key` until `expiresAt` in its object: `true` if this call recorded it, `false` if it was there.
   *
   * @throws ReplayStoreError the object could not be asked, did not answer in time or answered otherwise,
   *   or the retention has already ended by the store's clock. A redemption that timed out may still have
   *   been recorded: the token then counts as redeemed, which fails closed.
   */
  async redeem(key: string, options: { readonly expiresAt: number }): Promise<boolean> {
    const ms = retentionMs(options.expiresAt, this.#clock());
    const name = this.storeKey(key);
    const shard = ALPHABET.indexOf(name.charAt(this.prefix.length));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ReplayStoreError("the replay Durable Object did not answer the redemption in time")), this.#timeoutMs);
    });
    let answer: unknown;
    try {
      const stub = this.#namespace.get(this.#namespace.idFromName(`${this.prefix}shard-${shard}`) as never);
      const ask = async () => {
        const response = await stub.fetch(new Request(REDEEM_URL, { method: "POST", body: JSON.stringify({ key: name, ms }) }));
        if (response.status !== 200) throw new ReplayStoreError(`the replay Durable Object answered HTTP ${response.status}`);
        return (await response.json()) as unknown;
      };
      answer = await Promise.race([ask(), timedOut]);
    } catch (error) {
      if (error instanceof ReplayStoreError) throw error;
      throw new ReplayStoreError(`the replay Durable Object could not be asked (${error instanceof Error ? error.name : typeof error})`);
    } finally {
      clearTimeout(timer);
    }
    const first = typeof answer === "object" && answer !== null ? (answer as { first?: unknown }).first : undefined;
    if (typeof first !== "boolean") throw new ReplayStoreError("the replay Durable Object answered something other than a verdict");
    return first;
  }

  /** The store's settings, never a binding's internals. */
  toString(): string {
    return `DurableObjectReplayStore(prefix=${JSON.stringify(this.prefix)})`;
  }
}

/**
 * The Durable Object class that keeps redemptions: export it from the Worker and bind it. Each object
 * holds the names of one shard with their expiry (ms since the epoch, by the object's clock); an alarm
 * deletes the expired ones.
 */
export class ReplayStoreObject {
  readonly #storage: DurableObjectStorageLike;

  constructor(state: DurableObjectStateLike, _env?: unknown) {
    this.#storage = state.storage;
  }

  /** `POST /redeem {"key", "ms"}`: `{"first": true}` if the name was not recorded (now it is), `{"first": false}` if it was. */
  async fetch(request: Request): Promise<Response> {
    if (request.method !== "POST" || new URL(request.url).pathname !== "/redeem") return new Response("not found", { status: 404 });
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return new Response("bad request", { status: 400 });
    }
    const { key, ms } = (typeof body === "object" && body !== null ? body : {}) as { key?: unknown; ms?: unknown };
    if (typeof key !== "string" || key === "" || key.length > MAX_NAME_LENGTH || !Number.isSafeInteger(ms) || (ms as number) < 1 || (ms as number) > MAX_RETENTION_MS) {
      return new Response("bad request", { status: 400 });
    }
    // Profile 9.5, step 20: check and record in one turn of the object (no other event runs between the
    // read and the write: the input gate), answered only once the write is durable (the output gate).
    const now = Date.now();
    const recorded = await this.#storage.get(key);
    if (typeof recorded === "number" && recorded > now) return Response.json({ first: false });
    const expires = now + (ms as number);
    await this.#storage.put(key, expires);
    const alarm = await this.#storage.getAlarm();
    if (alarm === null || alarm > expires) await this.#storage.setAlarm(expires);
    return Response.json({ first: true });
  }

  /** Delete the expired names, and come back for the next one to expire. */
  async alarm(): Promise<void> {
    const now = Date.now();
    const entries = await this.#storage.list({ limit: SWEEP_BATCH * 10 });
    const expired: string[] = [];
    let next: number | undefined;
    for (const [name, expires] of entries) {
      if (typeof expires !== "number" || expires <= now) {
        if (expired.length < SWEEP_BATCH) expired.push(name);
      } else if (next === undefined || expires < next) {
        next = expires;
      }
    }
    if (expired.length > 0) await this.#storage.delete(expired);
    if (expired.length === SWEEP_BATCH || entries.size === SWEEP_BATCH * 10) await this.#storage.setAlarm(now + 1000);
    else if (next !== undefined) await this.#storage.setAlarm(next);
  }
}
