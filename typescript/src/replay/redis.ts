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
 * Deployments: one Redis ({@link RedisReplayStore.fromUrl}), a primary with replicas behind Sentinel
 * ({@link RedisReplayStore.fromSentinel}, on node-redis's `createSentinel`) or a Redis Cluster
 * ({@link RedisReplayStore.fromCluster}, on node-redis's `createCluster`), each with the same keys. Each
 * builder connects before it returns (or rejects saying why), within `connectTimeout`, separate from the
 * command `timeout`. A SET NX whose answer did not arrive is never sent again: it is `store_unavailable`
 * (the cluster client follows only MOVED and ASK, answers that say the SET was not run; the Sentinel
 * client's re-sending after a lost connection is turned off). The durability option (`waitReplicas: N`)
 * sends `WAIT N <ms>` on the same connection right after the SET and accepts only when N replicas
 * acknowledged it, as the Python store does; otherwise `store_unavailable` (fail closed).
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
import { standardError } from "../lib/log.js";

export { DEFAULT_PREFIX };
/** The default command timeout, in seconds: a redemption Redis has not answered by then is refused. */
export const DEFAULT_TIMEOUT = 1.0;
/** The default connect timeout of the builders' clients, in seconds (a cold start may need more than a command). */
export const DEFAULT_CONNECT_TIMEOUT = 5.0;
/** How long, by default, `WAIT` waits for replicas with the durability option, in seconds. */
export const DEFAULT_WAIT_TIMEOUT = 0.5;

const ERROR_CODE = /^[A-Z][A-Z_]{1,31}$/;
/** The first reconnection delay of a {@link RedisReplayStore.fromUrl} client after its Redis went away, in ms. */
const RECONNECT_BASE_MS = 50;
/** The longest delay between two reconnection attempts, in ms: a restarted Redis is found within it. */
const RECONNECT_MAX_MS = 1000;

/** What the store needs of a Redis client: node-redis's `sendCommand` (a `RedisClientType` has it). */
export interface RedisCommandClient {
  sendCommand(args: string[]): Promise<unknown>;
}

/** Where a store says it connected, and why an outage began (once per outage, never a token). Default: standard error (never standard output, where a stdio server speaks). */
export interface RedisStoreLogger {
  warn(message: string): void;
  info(message: string): void;
}

/** A Sentinel's address for {@link RedisReplayStore.fromSentinel}. */
export interface SentinelAddress {
  readonly host: string;
  readonly port: number;
}

/** Options of a {@link RedisReplayStore}. */
export interface RedisReplayStoreOptions {
  /** Put before every key (default `mrtr-state:jti:`); give each application sharing one Redis its own. */
  readonly prefix?: string;
  /** The current time in seconds since the epoch; give it the sealer's clock. */
  readonly clock?: () => number;
  /** Seconds to wait for Redis's answer before the redemption is refused (default 1, at most 60). */
  readonly timeout?: number;
  /** Seconds the builders wait for a connection, at start and at each reconnection (default 5, at most 60). */
  readonly connectTimeout?: number;
  /**
   * Accept a redemption only once this many replicas acknowledged it (`WAIT`; default 0, off; at most
   * 100). Fewer in time is `store_unavailable`. Python's `wait_replicas`.
   */
  readonly waitReplicas?: number;
  /** How long `WAIT` waits for the replicas, in seconds (default 0.5; less than `timeout`). */
  readonly waitTimeout?: number;
  /** Where the store says it connected, and why an outage began (once per outage); default: standard error, never standard output. */
  readonly logger?: RedisStoreLogger;
  /** For the builders: a password (never shown in any message); the URL's own password for `fromUrl`. */
  readonly password?: string;
  /** For the builders: an ACL user name. */
  readonly username?: string;
}

/** Sends the store's commands, in order, on one connection to the node that holds `key`. */
type Pipeline = (key: string, commands: readonly string[][]) => Promise<unknown[]>;

/** The Redis key under which the redemption of `key` is recorded: the Python store's `_hashed`. */
export const redisKey = storeKey;

export { retentionMs };

/** A message naming what failed: the error's class and Redis's error code, never the error's own text. */
function failure(error: unknown, context = "Redis could not record the redemption"): ReplayStoreError {
  if (error instanceof ReplayStoreError) return error;
  const name = error instanceof Error ? error.constructor.name || error.name : typeof error;
  if (error instanceof Error && /ErrorReply$/.test(name)) {
    const code = error.message.split(" ", 1)[0] ?? "";
    return new ReplayStoreError(`Redis refused the redemption (${name}${ERROR_CODE.test(code) ? ` ${code}` : ""})`);
  }
  return new ReplayStoreError(`${context} (${name})`);
}

/**
 * A {@link ReplayStore} shared by every replica, in any language, kept in Redis.
 *
 * ```ts
 * const store = await RedisReplayStore.fromUrl(process.env.REDIS_URL!, { clock });
 * const sealer = new StateSealer(ring, { issuer, clock, replayStore: store });
 * ```
 */
/** The one construction path of every store; the public constructor and the builders pass through it. */
const INTERNAL = Symbol("RedisReplayStore");

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
  /** Replicas that must acknowledge a redemption (0: no `WAIT`). */
  readonly waitReplicas: number;
  readonly #send: Pipeline;
  readonly #clock: () => number;
  readonly #timeoutMs: number;
  readonly #waitMs: number;
  readonly #close: (() => Promise<void>) | undefined;
  readonly #logger: RedisStoreLogger;
  readonly #kind: string;
  #down = false;

  /**
   * A store on a client you made and connected (node-redis `createClient()`), which stays yours to close.
   * Give the client timeouts; without them a stalled Redis stalls the request until `timeout`.
   */
  constructor(client: RedisCommandClient, options?: RedisReplayStoreOptions, close?: () => Promise<void>);
  /** @internal The builders' path. */
  constructor(client: typeof INTERNAL, options: RedisReplayStoreOptions, close: () => Promise<void>, send: Pipeline, kind: string);
  constructor(
    client: RedisCommandClient | typeof INTERNAL,
    options: RedisReplayStoreOptions = {},
    close?: () => Promise<void>,
    send?: Pipeline,
    kind = "Redis",
  ) {
    if (client !== INTERNAL && (typeof client !== "object" || client === null || typeof client.sendCommand !== "function")) {
      throw new TypeError("client must be a Redis client with sendCommand(args), such as node-redis createClient()");
    }
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    if (typeof prefix !== "string") throw new TypeError("prefix must be a string");
    const clock = options.clock ?? (() => Date.now() / 1000);
    if (typeof clock !== "function") throw new TypeError("clock must be a function returning seconds since the epoch");
    const timeout = checkTimeout(options.timeout ?? DEFAULT_TIMEOUT);
    const { replicas, waitMs } = checkDurability(options, timeout);
    this.prefix = prefix;
    this.waitReplicas = replicas;
    // One client, one connection: the commands go out in order on it (node-redis pipelines them).
    this.#send = client === INTERNAL ? (send as Pipeline) : (_key, commands) => Promise.all(commands.map((args) => client.sendCommand(args)));
    this.#clock = clock;
    this.#timeoutMs = timeout * 1000;
    this.#waitMs = waitMs;
    this.#close = close;
    this.#logger = options.logger ?? standardError;
    this.#kind = kind;
  }

  /**
   * A store with its own node-redis client for `url` (`redis://`, `rediss://` or `unix:///path`), which
   * connects within `connectTimeout` seconds before it returns. If Redis goes away later (a restart, a
   * failover behind one address), every redemption is refused at once while it is away
   * (`store_unavailable`: no command is queued) and the client reconnects in the background (after 50
   * ms, backing off to one attempt a second), so redemptions succeed again once Redis is back.
   * {@link close} closes it.
   *
   * @throws ReplayStoreError Redis cannot be reached (the message never holds the URL).
   */
  static async fromUrl(url: string, options: RedisReplayStoreOptions = {}): Promise<RedisReplayStore> {
    if (typeof url !== "string") throw new TypeError("url must be a string");
    if (!/^(rediss?|unix):\/\//.test(url)) throw new RangeError("the Redis URL must start with redis://, rediss:// or unix://");
    const connectTimeout = checkTimeout(options.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT, "connectTimeout");
    checkDurability(options, checkTimeout(options.timeout ?? DEFAULT_TIMEOUT));
    const redis = await loadRedis("fromUrl");
    // Before the first connection, a failure is final (fromUrl rejects); after it, the client keeps
    // reconnecting in the background, backing off to RECONNECT_MAX_MS, so a restarted Redis is found again.
    // Meanwhile no command is queued (disableOfflineQueue): a redemption Redis cannot answer is refused at
    // once (fail closed).
    let connectedOnce = false;
    const reconnectStrategy = (retries: number): number | Error =>
      connectedOnce ? backoff(retries) : new ReplayStoreError("Redis cannot be reached");
    const socket = { connectTimeout: connectTimeout * 1000, reconnectStrategy };
    const auth = credentials(options);
    let client: ReturnType<typeof redis.createClient>;
    try {
      client = url.startsWith("unix://")
        ? redis.createClient({ ...auth, socket: { ...socket, path: decodeURIComponent(url.slice("unix://".length)) }, disableOfflineQueue: true })
        : redis.createClient({ ...auth, url, socket, disableOfflineQueue: true });
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
    const store = new RedisReplayStore(
      INTERNAL,
      options,
      async () => {
        // A ready client quits cleanly; one that is reconnecting is stopped where it is.
        if (client.isReady) await client.close();
        else if (client.isOpen) client.destroy();
      },
      (_key, commands) => Promise.all(commands.map((args) => client.sendCommand(args))),
      "Redis",
    );
    store.#logger.info("mrtr-state: the Redis replay store is connected");
    return store;
  }

  /**
   * A store on a Redis Cluster, through node-redis's `createCluster`: `urls` name one or more nodes
   * (`redis://host:port` or `rediss://`, the same scheme for all), from which the client learns the
   * slot map; it reads the map again on MOVED and when a node it uses reconnects, so it follows a
   * failover once the replica is promoted. A redemption goes to the primary of its key's slot; with
   * `waitReplicas`, `WAIT` goes on that node's connection right after it. A command is re-sent only on
   * MOVED or ASK (the node said it did not run it), never after a lost answer.
   *
   * @throws ReplayStoreError no node can be reached, or the cluster is not serving every slot.
   */
  static async fromCluster(urls: string | readonly string[], options: RedisReplayStoreOptions = {}): Promise<RedisReplayStore> {
    const list = typeof urls === "string" ? [urls] : [...urls];
    if (list.length === 0 || !list.every((url) => typeof url === "string" && /^rediss?:\/\//.test(url))) {
      throw new RangeError("give the Redis Cluster nodes as redis:// or rediss:// URLs");
    }
    const connectTimeout = checkTimeout(options.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT, "connectTimeout");
    checkDurability(options, checkTimeout(options.timeout ?? DEFAULT_TIMEOUT));
    const redis = await loadRedis("fromCluster");
    let cluster: ReturnType<typeof redis.createCluster>;
    try {
      cluster = redis.createCluster({
        rootNodes: list.map((url) => ({ url })),
        // Relearn the slot map as soon as a node it uses starts reconnecting (node-redis waits 5 s by default):
        // a killed primary's slots then reach the promoted replica about 3 s after the kill, not 6.
        topologyRefreshOnReconnectionAttemptStrategy: 1,
        defaults: {
          ...credentials(options),
          socket: { connectTimeout: connectTimeout * 1000, reconnectStrategy: backoff },
          disableOfflineQueue: true,
        },
      });
    } catch {
      throw new RangeError("a Redis Cluster URL is not valid (its text is not shown: it may hold a password)");
    }
    cluster.on("error", () => {
      // As for fromUrl: failures reach the redemption that meets them.
    });
    try {
      await withDeadline(cluster.connect(), connectTimeout * 2, "the Redis Cluster did not answer in time");
    } catch (error) {
      await Promise.resolve()
        .then(() => cluster.destroy())
        .catch(() => {});
      throw failure(error, "could not reach the Redis Cluster");
    }
    const store = new RedisReplayStore(
      INTERNAL,
      options,
      async () => {
        await Promise.resolve()
          .then(() => cluster.close())
          .catch(() => cluster.destroy());
      },
      (key, commands) => clusterSend(cluster, key, commands),
      "Redis Cluster",
    );
    store.#logger.info("mrtr-state: the Redis Cluster replay store is connected");
    return store;
  }

  /**
   * A store on the primary that Sentinel names `serviceName`, through node-redis's `createSentinel`: it
   * asks the `sentinels` for the primary, connects to it before it returns, and follows a failover when
   * Sentinel announces the new primary. Its re-sending of a command whose connection was lost is turned
   * off, so a SET NX whose answer did not arrive is `store_unavailable`, never sent twice.
   *
   * @throws ReplayStoreError no Sentinel answers or the primary cannot be reached (nothing names a host).
   */
  static async fromSentinel(
    sentinels: readonly SentinelAddress[],
    serviceName: string,
    options: RedisReplayStoreOptions = {},
  ): Promise<RedisReplayStore> {
    if (typeof serviceName !== "string" || serviceName === "") throw new TypeError("serviceName must be the name the Sentinels monitor");
    if (
      !Array.isArray(sentinels) ||
      sentinels.length === 0 ||
      !sentinels.every((node) => typeof node?.host === "string" && Number.isInteger(node?.port) && node.port > 0 && node.port < 65536)
    ) {
      throw new TypeError("sentinels must be a non-empty array of { host, port }");
    }
    const connectTimeout = checkTimeout(options.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT, "connectTimeout");
    checkDurability(options, checkTimeout(options.timeout ?? DEFAULT_TIMEOUT));
    const redis = await loadRedis("fromSentinel");
    const socket = { connectTimeout: connectTimeout * 1000, reconnectStrategy: backoff };
    const sentinel = redis.createSentinel({
      name: serviceName,
      sentinelRootNodes: sentinels.map(({ host, port }) => ({ host, port })),
      nodeClientOptions: { ...credentials(options), socket, disableOfflineQueue: true },
      sentinelClientOptions: { socket },
      // One connection to the primary, so WAIT follows its SET on it; and no re-sending after a lost
      // answer (node-redis would send the command again once it found the primary).
      masterPoolSize: 1,
      maxCommandRediscovers: 0,
    });
    sentinel.on("error", () => {
      // As for fromUrl: failures reach the redemption that meets them.
    });
    try {
      await withDeadline(sentinel.connect(), connectTimeout * 2, "Sentinel did not name a reachable primary in time");
    } catch (error) {
      await Promise.resolve()
        .then(() => sentinel.destroy())
        .catch(() => {});
      throw failure(error, "could not reach the primary through Sentinel");
    }
    const store = new RedisReplayStore(
      INTERNAL,
      options,
      async () => {
        await Promise.resolve()
          .then(() => sentinel.close())
          .catch(() => sentinel.destroy());
      },
      (_key, commands) => Promise.all(commands.map((args) => sentinel.sendCommand(false, args))),
      "Redis (Sentinel)",
    );
    store.#logger.info(`mrtr-state: the Redis replay store is connected to the primary of ${JSON.stringify(serviceName)} through Sentinel`);
    return store;
  }

  /** The Redis key under which the redemption of `key` is recorded. */
  redisKey(key: string): string {
    return redisKey(this.prefix, key);
  }

  /**
   * `SET NX PX` (and `WAIT` with `waitReplicas`): `true` if this call recorded `key`, `false` if it was there.
   *
   * @throws ReplayStoreError Redis did not answer in time, answered with an error, fewer replicas than
   *   `waitReplicas` acknowledged the write, or the retention has already ended by the store's clock. A
   *   redemption that failed may still have been recorded: the token then counts as redeemed, which
   *   fails closed.
   */
  async redeem(key: string, options: { readonly expiresAt: number }): Promise<boolean> {
    const ms = retentionMs(options.expiresAt, this.#clock());
    const name = this.redisKey(key);
    const commands = [["SET", name, "1", "NX", "PX", String(ms)]];
    if (this.waitReplicas > 0) commands.push(["WAIT", String(this.waitReplicas), String(this.#waitMs)]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ReplayStoreError(`${this.#kind} did not answer the redemption in time`)), this.#timeoutMs);
    });
    let replies: unknown[];
    try {
      replies = await Promise.race([this.#send(name, commands), timedOut]);
    } catch (error) {
      throw this.#outage(failure(error));
    } finally {
      clearTimeout(timer);
    }
    let verdict: boolean;
    try {
      verdict = this.#verdict(replies);
    } catch (error) {
      throw this.#outage(failure(error));
    }
    if (this.#down) {
      this.#down = false;
      this.#logger.info(`mrtr-state: the ${this.#kind} replay store answers again`);
    }
    return verdict;
  }

  #verdict(replies: readonly unknown[]): boolean {
    const [set, acknowledged] = replies;
    if (set === null) return false; // a replay is a replay whatever WAIT answered: it accepts nothing
    if (set !== "OK") throw new ReplayStoreError(`Redis answered SET NX with an unexpected ${typeof set}`);
    if (this.waitReplicas === 0) return true;
    if (typeof acknowledged !== "number") throw new ReplayStoreError(`Redis answered WAIT with an unexpected ${typeof acknowledged}`);
    if (acknowledged < this.waitReplicas) {
      throw new ReplayStoreError(
        `Redis did not confirm the redemption on ${this.waitReplicas} replica(s) in time (${acknowledged} acknowledged)`,
      );
    }
    return true;
  }

  /** The first failure of an outage is logged with its cause (never a key or a token); the rest are not. */
  #outage(error: ReplayStoreError): ReplayStoreError {
    if (!this.#down) {
      this.#down = true;
      this.#logger.warn(`mrtr-state: the ${this.#kind} replay store is unavailable, redemptions are refused until it answers: ${error.message}`);
    }
    return error;
  }

  /** Close the client if a builder made it; a client passed in stays open. */
  async close(): Promise<void> {
    await this.#close?.();
  }

  /** Never the client: its options name the host and may hold the password. */
  toString(): string {
    return `RedisReplayStore(prefix=${JSON.stringify(this.prefix)}${this.waitReplicas > 0 ? `, waitReplicas=${this.waitReplicas}` : ""})`;
  }
}

function checkDurability(options: RedisReplayStoreOptions, timeout: number): { replicas: number; waitMs: number } {
  const replicas = options.waitReplicas ?? 0;
  if (typeof replicas !== "number" || !Number.isInteger(replicas) || replicas < 0 || replicas > 100) {
    throw new RangeError("waitReplicas must be an integer from 0 to 100");
  }
  const wait = checkTimeout(options.waitTimeout ?? DEFAULT_WAIT_TIMEOUT, "waitTimeout");
  if (replicas > 0 && wait >= timeout) {
    throw new RangeError(`waitTimeout must be less than timeout (${timeout} s): WAIT's own answer has to arrive before the store gives up`);
  }
  // WAIT 0 would mean "wait forever": never less than one millisecond.
  return { replicas, waitMs: Math.max(1, Math.round(wait * 1000)) };
}

function credentials(options: RedisReplayStoreOptions): { password?: string; username?: string } {
  const out: { password?: string; username?: string } = {};
  if (options.password !== undefined) out.password = options.password;
  if (options.username !== undefined) out.username = options.username;
  return out;
}

/** What {@link clusterSend} needs of node-redis's cluster client. */
interface ClusterCommands {
  sendCommand(firstKey: string, isReadonly: boolean, args: string[]): Promise<unknown>;
  getNodeClientForKey?(key: string, isReadonly?: boolean): Promise<{ sendCommand(args: string[]): Promise<unknown> }>;
}

/**
 * A redemption's commands on a Cluster. `SET` alone goes through the cluster client, which follows MOVED and ASK (the
 * node did not run it). `SET` then `WAIT` go down the connection of the key's primary, in that order: WAIT counts the
 * replicas that have that connection's writes. Through the cluster client WAIT would not: from node-redis 6.2 its
 * command table sends WAIT to every primary and keeps the smallest count, so one primary without a replica (a
 * promoted one) refused every redemption of every slot, and a dead one made them all fail. A MOVED or ASK on this path
 * refuses the redemption (the SET did not run) after the cluster client has relearned the map, so the next one goes to
 * the right node. A client without `getNodeClientForKey` (node-redis 5 to 6.0, which route a command by the key given)
 * keeps the cluster client's routing.
 */
async function clusterSend(cluster: ClusterCommands, key: string, commands: readonly string[][]): Promise<unknown[]> {
  if (commands.length === 1 || typeof cluster.getNodeClientForKey !== "function") {
    return Promise.all(commands.map((args) => cluster.sendCommand(key, false, args)));
  }
  const node = await cluster.getNodeClientForKey(key, false);
  try {
    return await Promise.all(commands.map((args) => node.sendCommand(args)));
  } catch (error) {
    if (error instanceof Error && /^(MOVED|ASK) /.test(error.message)) {
      // A read the cluster client routes itself: on MOVED it relearns the slot map. Its answer does not matter.
      await cluster.sendCommand(key, true, ["EXISTS", key]).catch(() => undefined);
    }
    throw error;
  }
}

/** The reconnection delay after `retries` failed attempts, in ms: from 50 ms, doubling, to 1 s. */
function backoff(retries: number): number {
  return Math.min(RECONNECT_BASE_MS * 2 ** Math.min(retries, 16), RECONNECT_MAX_MS);
}

async function loadRedis(builder: string): Promise<typeof import("redis")> {
  try {
    return await import("redis");
  } catch {
    throw new TypeError(`RedisReplayStore.${builder} needs the Redis client: npm install redis`);
  }
}

/** `promise`, or a {@link ReplayStoreError} after `seconds`. */
async function withDeadline<T>(promise: Promise<T>, seconds: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new ReplayStoreError(message)), seconds * 1000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
