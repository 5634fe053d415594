/**
 * Single use across replicas: a replay store kept in Redis, shared with the Python library's store.
 *
 * One redemption is one atomic command, exactly the Python `RedisReplayStore`'s:
 *
 *     SET <prefix><base64url(sha256(iss "#" jti))> 1 NX PX <retention in ms>
 *
 * so a Python replica and a TypeScript replica on one Redis see each other's redemptions: the same key
 * for the same token (default prefix `mrtr-state:jti:`, the SHA-256 of the UTF-8 of the issuer-scoped id,
 * unpadded base64url), and the same retention. `NX` makes the first writer win; `PX` makes Redis forget
 * the key once no verifier accepts the token any more. The retention is sent as a duration computed from
 * the store's clock (give it the sealer's), never as an absolute time that Redis's clock would measure.
 *
 * Failures: any error of the client (unreachable, timeout, authentication, a read-only replica, out of
 * memory) throws {@link ReplayStoreError}, which the sealer refuses as `store_unavailable`; never an
 * acceptance. Messages name the failure's class (and Redis's error code), never the URL, host or password.
 *
 * Needs the `redis` package (node-redis 5 or 6, an optional peer dependency) for {@link RedisReplayStore.fromUrl};
 * the constructor takes any client with node-redis's `sendCommand(args)`.
 */

import { checkTimeout, DEFAULT_PREFIX, retentionMs, storeKey } from "./shared.js";
import { ReplayStoreError, type ReplayStore } from "./store.js";

export { DEFAULT_PREFIX };
/** The default connect and command timeout of {@link RedisReplayStore.fromUrl} clients, in seconds. */
export const DEFAULT_TIMEOUT = 1.0;

const ERROR_CODE = /^[A-Z][A-Z_]{1,31}$/;
/** The first reconnection delay of a {@link RedisReplayStore.fromUrl} client after its Redis went away, in ms. */
const RECONNECT_BASE_MS = 50;
/** The longest delay between two reconnection attempts, in ms: a restarted Redis is found within it. */
const RECONNECT_MAX_MS = 1000;

/** What the store needs of a Redis client: node-redis's `sendCommand` (a `RedisClientType` has it). */
export interface RedisCommandClient {
  sendCommand(args: string[]): Promise<unknown>;
}

/** Options of a {@link RedisReplayStore}. */
export interface RedisReplayStoreOptions {
  /** Put before every key (default `mrtr-state:jti:`); give each application sharing one Redis its own. */
  readonly prefix?: string;
  /** The current time in seconds since the epoch; give it the sealer's clock. */
  readonly clock?: () => number;
  /** Seconds to wait for Redis's answer before the redemption is refused (default 1, at most 60). */
  readonly timeout?: number;
}

/** The Redis key under which the redemption of `key` is recorded: the Python store's `_hashed`. */
export const redisKey = storeKey;

export { retentionMs };

/** A message naming what failed: the error's class and Redis's error code, never the error's own text. */
function failure(error: unknown): ReplayStoreError {
  if (error instanceof ReplayStoreError) return error;
  const name = error instanceof Error ? error.constructor.name || error.name : typeof error;
  if (error instanceof Error && /ErrorReply$/.test(name)) {
    const code = error.message.split(" ", 1)[0] ?? "";
    return new ReplayStoreError(`Redis refused the redemption (${name}${ERROR_CODE.test(code) ? ` ${code}` : ""})`);
  }
  return new ReplayStoreError(`Redis could not record the redemption (${name})`);
}

/**
 * A {@link ReplayStore} shared by every replica, in any language, kept in Redis.
 *
 * ```ts
 * const store = await RedisReplayStore.fromUrl(process.env.REDIS_URL!, { clock });
 * const sealer = new StateSealer(ring, { issuer, clock, replayStore: store });
 * ```
 */
export class RedisReplayStore implements ReplayStore {
  /** The prefix of every key this store writes. */
  readonly prefix: string;
  readonly #client: RedisCommandClient;
  readonly #clock: () => number;
  readonly #timeoutMs: number;
  readonly #close: (() => Promise<void>) | undefined;

  /**
   * A store on a client you made and connected (node-redis `createClient()`), which stays yours to close.
   * Give the client timeouts; without them a stalled Redis stalls the request until `timeout`.
   */
  constructor(client: RedisCommandClient, options: RedisReplayStoreOptions = {}, close?: () => Promise<void>) {
    if (typeof client !== "object" || client === null || typeof client.sendCommand !== "function") {
      throw new TypeError("client must be a Redis client with sendCommand(args), such as node-redis createClient()");
    }
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    if (typeof prefix !== "string") throw new TypeError("prefix must be a string");
    const clock = options.clock ?? (() => Date.now() / 1000);
    if (typeof clock !== "function") throw new TypeError("clock must be a function returning seconds since the epoch");
    this.prefix = prefix;
    this.#client = client;
    this.#clock = clock;
    this.#timeoutMs = checkTimeout(options.timeout ?? DEFAULT_TIMEOUT) * 1000;
    this.#close = close;
  }

  /**
   * A store with its own node-redis client for `url` (`redis://`, `rediss://` or `unix:///path`), which
   * connects within `timeout` seconds. If Redis goes away later (a restart, a failover behind one
   * address), every redemption is refused at once while it is away (`store_unavailable`: no command is
   * queued) and the client reconnects in the background (after 50 ms, backing off to one attempt a
   * second), so redemptions succeed again once Redis is back. {@link close} closes it.
   *
   * @throws ReplayStoreError Redis cannot be reached (the message never holds the URL).
   */
  static async fromUrl(url: string, options: RedisReplayStoreOptions = {}): Promise<RedisReplayStore> {
    if (typeof url !== "string") throw new TypeError("url must be a string");
    if (!/^(rediss?|unix):\/\//.test(url)) throw new RangeError("the Redis URL must start with redis://, rediss:// or unix://");
    const timeout = checkTimeout(options.timeout ?? DEFAULT_TIMEOUT);
    let redis: typeof import("redis");
    try {
      redis = await import("redis");
    } catch {
      throw new TypeError("RedisReplayStore.fromUrl needs the Redis client: npm install redis");
    }
    // Before the first connection, a failure is final (fromUrl rejects); after it, the client keeps
    // reconnecting in the background, backing off to RECONNECT_MAX_MS, so a restarted Redis is found again.
    // Meanwhile no command is queued (disableOfflineQueue): a redemption Redis cannot answer is refused at
    // once (fail closed).
    let connectedOnce = false;
    const reconnectStrategy = (retries: number): number | Error =>
      connectedOnce ? Math.min(RECONNECT_BASE_MS * 2 ** Math.min(retries, 16), RECONNECT_MAX_MS) : new ReplayStoreError("Redis cannot be reached");
    const socket = { connectTimeout: timeout * 1000, reconnectStrategy };
    let client: ReturnType<typeof redis.createClient>;
    try {
      client = url.startsWith("unix://")
        ? redis.createClient({ socket: { ...socket, path: decodeURIComponent(url.slice("unix://".length)) }, disableOfflineQueue: true })
        : redis.createClient({ url, socket, disableOfflineQueue: true });
    } catch {
      throw new RangeError("the Redis URL is not valid (its text is not shown: it may hold a password)");
    }
    client.on("error", () => {
      // Every failure reaches the redemption that meets it, as a ReplayStoreError; an unhandled
      // "error" event would end the process instead.
    });
    try {
      await client.connect();
    } catch (error) {
      throw failure(error);
    }
    connectedOnce = true;
    return new RedisReplayStore(client as unknown as RedisCommandClient, options, async () => {
      // A ready client quits cleanly; one that is reconnecting is stopped where it is.
      if (client.isReady) await client.close();
      else if (client.isOpen) client.destroy();
    });
  }

  /** The Redis key under which the redemption of `key` is recorded. */
  redisKey(key: string): string {
    return redisKey(this.prefix, key);
  }

  /**
   * `SET NX PX`: `true` if this call recorded `key`, `false` if it was there.
   *
   * @throws ReplayStoreError Redis did not answer in time, answered with an error, or the retention has
   *   already ended by the store's clock. A redemption that timed out may still have been recorded: the
   *   token then counts as redeemed, which fails closed.
   */
  async redeem(key: string, options: { readonly expiresAt: number }): Promise<boolean> {
    const ms = retentionMs(options.expiresAt, this.#clock());
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ReplayStoreError("Redis did not answer the redemption in time")), this.#timeoutMs);
    });
    let reply: unknown;
    try {
      reply = await Promise.race([this.#client.sendCommand(["SET", this.redisKey(key), "1", "NX", "PX", String(ms)]), timedOut]);
    } catch (error) {
      throw failure(error);
    } finally {
      clearTimeout(timer);
    }
    if (reply === "OK") return true;
    if (reply === null) return false;
    throw new ReplayStoreError(`Redis answered SET NX with an unexpected ${typeof reply}`);
  }

  /** Close the client if {@link fromUrl} made it; a client passed in stays open. */
  async close(): Promise<void> {
    await this.#close?.();
  }

  /** Never the client: its options name the host and may hold the password. */
  toString(): string {
    return `RedisReplayStore(prefix=${JSON.stringify(this.prefix)})`;
  }
}
