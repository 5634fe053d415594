/**
 * Public keys read from a published JWKS over `fetch`: the key source of a verify-only replica, on Node,
 * Deno, Bun, Workers and edge runtimes alike (the Python library's `RemoteJWKS`, Go's and Java's
 * `RemoteJwks`).
 *
 * ```ts
 * const jwks = await RemoteJwks.load("https://tools.example.com/.well-known/mrtr-state-jwks.json");
 * const sealer = new StateSealer(jwks, { issuer: "https://tools.example.com" });
 * ```
 *
 * - It fetches once when loaded (a failure then rejects with a {@link KeyringError}: a replica should
 *   not start without keys), then again when {@link RemoteJwks.keyring} is read after `refreshInterval`
 *   seconds (default 300; in the background, the caller never waits), and for a token whose `kid` it
 *   does not hold, at most once per `cooldown` (default 30 s), so tokens with random kids cannot make it
 *   fetch more.
 * - Every fetch is bounded: `https:` only (`http:` on a loopback address), no redirects followed, no
 *   credentials in the URL, at most `maxBytes` (default 64 KiB, counted while the body streams in, so a
 *   50 MB answer is cut off at the cap) and `timeout` seconds (default 5) for the whole fetch, headers
 *   and body, through an `AbortSignal`.
 * - The JWKS goes through {@link Keyring.fromJwks}, so every rule of a local key file holds (profile
 *   7.2 and 7.3, an empty set refused), and then must hold only Ed25519 public keys: a JWKS with a
 *   private key or a secret is refused whole.
 * - A failed fetch keeps the last good keys, says so through the logger (the URL and the reason, never
 *   key material) and is retried after the cooldown.
 */

import { KeyringError } from "../errors.js";
import { record, type StateMetrics } from "../metrics/events.js";
import { standardError } from "../lib/log.js";
import { Keyring } from "./keyring.js";
import type { KeySource, KeySourceLogger } from "./source.js";

/** Seconds between scheduled fetches. */
export const DEFAULT_REFRESH_INTERVAL = 300;
/** The fewest seconds between two fetches caused by unknown kids, or before a retry after a failure. */
export const DEFAULT_COOLDOWN = 30;
/** The longest a whole fetch may take, in seconds. */
export const DEFAULT_JWKS_TIMEOUT = 5;
/** The largest JWKS accepted, in bytes. */
export const DEFAULT_JWKS_MAX_BYTES = 64 * 1024;

const ACCEPT = "application/jwk-set+json, application/json;q=0.9";

/** Options of a {@link RemoteJwks}; every one has a default. */
export interface RemoteJwksOptions {
  /** Seconds between scheduled fetches (default 300). */
  readonly refreshInterval?: number;
  /** The fewest seconds between fetches for unknown kids, and before a retry after a failure (default 30, at most `refreshInterval`). */
  readonly cooldown?: number;
  /** The longest a whole fetch may take, headers and body, in seconds (default 5, at most 60). */
  readonly timeout?: number;
  /** The largest JWKS accepted, in bytes (default 65536, at least 1024). */
  readonly maxBytes?: number;
  /** Monotonic seconds, for the schedule and the cooldown (default `performance.now() / 1000`). */
  readonly clock?: () => number;
  /** The `fetch` to use (default the platform's `globalThis.fetch`). */
  readonly fetch?: typeof globalThis.fetch;
  /** Counts every fetch as a `key_refresh` event with `source` `remote_jwks` (`spec/metrics.json`). */
  readonly metrics?: StateMetrics | undefined;
  /** Where a failed fetch (warn) and changed keys (info) are reported (default: standard error, never standard output). */
  readonly logger?: KeySourceLogger;
}

/**
 * Whether a JWKS may be fetched from `url`: `https:` anywhere, `http:` only on a loopback address
 * (`127.0.0.0/8`, `::1`, `localhost`), since keys fetched in the clear could be swapped on the way; no
 * user name or password (it would reach logs). Returns the URL.
 *
 * @throws KeyringError the URL is not allowed; the message says why and never repeats it.
 */
export function checkJwksUrl(url: unknown): URL {
  if (typeof url !== "string" && !(url instanceof URL)) throw new TypeError("a JWKS URL is a string");
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    throw new KeyringError("the JWKS URL is not a valid URL");
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new KeyringError("the JWKS URL must start with https:// (or http:// on a loopback address)");
  }
  if (parsed.username !== "" || parsed.password !== "") throw new KeyringError("the JWKS URL must not hold a user name or password");
  if (parsed.protocol === "http:" && !isLoopback(parsed.hostname)) {
    throw new KeyringError(
      "the JWKS URL must use https:// unless it is on a loopback address (127.0.0.1, ::1, localhost): " +
        "public keys fetched in the clear could be replaced on the way",
    );
  }
  return parsed;
}

function isLoopback(host: string): boolean {
  const name = host.toLowerCase();
  if (name === "localhost" || name === "[::1]") return true;
  const octets = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(name);
  return octets !== null && octets[1] === "127" && octets.slice(2).every((octet) => Number(octet) <= 255);
}

function seconds(name: string, value: unknown, high: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || !(value > 0) || value > high) {
    throw new RangeError(`${name} must be a number of seconds, more than 0 and at most ${high}`);
  }
  return value;
}

/** A fetch that failed, with a reason safe to log. */
class FetchFailure extends Error {}

/**
 * A {@link KeySource} that reads a published JWKS of Ed25519 public keys from a URL. Make one with
 * {@link RemoteJwks.load}, and give it to a `StateSealer` in place of a ring: it can only verify.
 */
export class RemoteJwks implements KeySource {
  /** Where the JWKS is read from. */
  readonly url: string;
  readonly #refreshInterval: number;
  readonly #cooldown: number;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #clock: () => number;
  readonly #fetch: typeof globalThis.fetch;
  readonly #metrics: StateMetrics | undefined;
  readonly #logger: KeySourceLogger;
  #ring: Keyring | undefined;
  #fetchedAt: number | undefined;
  #lastAttempt = -Infinity;
  #nextDue = -Infinity;
  #inflight: Promise<boolean> | undefined;
  #closed = false;
  #lastError: string | undefined;

  /** A source that has fetched nothing yet; {@link load} makes one and fetches. */
  constructor(url: string | URL, options: RemoteJwksOptions = {}) {
    this.url = checkJwksUrl(url).href;
    this.#refreshInterval = seconds("refreshInterval", options.refreshInterval ?? DEFAULT_REFRESH_INTERVAL, 365 * 86400);
    this.#cooldown = Math.min(seconds("cooldown", options.cooldown ?? DEFAULT_COOLDOWN, 365 * 86400), this.#refreshInterval);
    this.#timeoutMs = seconds("timeout", options.timeout ?? DEFAULT_JWKS_TIMEOUT, 60) * 1000;
    const maxBytes = options.maxBytes ?? DEFAULT_JWKS_MAX_BYTES;
    if (typeof maxBytes !== "number" || !Number.isSafeInteger(maxBytes) || maxBytes < 1024) {
      throw new RangeError("maxBytes must be an integer of at least 1024");
    }
    this.#maxBytes = maxBytes;
    const clock = options.clock ?? (() => performance.now() / 1000);
    const fetcher = options.fetch ?? globalThis.fetch;
    if (typeof clock !== "function" || typeof fetcher !== "function") throw new TypeError("clock and fetch must be functions");
    this.#clock = clock;
    this.#fetch = fetcher;
    this.#metrics = options.metrics;
    this.#logger = options.logger ?? standardError;
  }

  /**
   * A {@link RemoteJwks} (the constructor's options) that has fetched the JWKS once.
   *
   * @throws KeyringError the URL is not allowed, or the first fetch failed or its JWKS is refused.
   */
  static async load(url: string | URL, options: RemoteJwksOptions = {}): Promise<RemoteJwks> {
    const source = new RemoteJwks(url, options);
    await source.refresh();
    return source;
  }

  /** The keys of the last good fetch; starts a background fetch when one is due, never waits for it. */
  get keyring(): Keyring {
    if (!this.#closed && this.#clock() >= this.#nextDue) {
      this.#start(false).catch(() => {
        // Logged and counted where it failed; the last good keys stay.
      });
    }
    const ring = this.#ring;
    if (ring === undefined) throw new KeyringError(`no JWKS has been fetched from ${this.url} yet; use RemoteJwks.load()`);
    return ring;
  }

  /** Why the last fetch failed, or `undefined` if it succeeded. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** Stop scheduled fetches (a fetch under way finishes on its own; unknown kids still fetch). */
  close(): void {
    this.#closed = true;
  }

  /**
   * Fetch the JWKS now, whatever the schedule; `true` if the keys changed.
   *
   * @throws KeyringError the fetch failed or its JWKS is refused; the last good keys stay in use.
   */
  refresh(): Promise<boolean> {
    return this.#start(true);
  }

  /** Fetch now for a token whose `kid` is not held, unless the cooldown forbids it; `true` if the keys changed. Never rejects. */
  async refreshForUnknownKey(): Promise<boolean> {
    if (this.#inflight === undefined && this.#clock() - this.#lastAttempt < this.#cooldown) return false;
    try {
      return await this.#start(true);
    } catch {
      return false;
    }
  }

  /** The fetch under way, or a new one (a scheduled one only when due). */
  #start(force: boolean): Promise<boolean> {
    if (this.#inflight !== undefined) return this.#inflight;
    const now = this.#clock();
    if (!force && now < this.#nextDue) return Promise.resolve(false);
    this.#lastAttempt = now;
    this.#nextDue = now + this.#refreshInterval; // until this fetch ends, no scheduled one starts
    const fetching = this.#fetchOnce().finally(() => {
      this.#inflight = undefined;
    });
    this.#inflight = fetching;
    return fetching;
  }

  async #fetchOnce(): Promise<boolean> {
    let ring: Keyring;
    try {
      ring = parse(await this.#download());
    } catch (error) {
      const reason = error instanceof FetchFailure || error instanceof KeyringError ? error.message : `unexpected ${errorName(error)}`;
      throw this.#failed(reason);
    }
    const old = this.#ring;
    const changed = old === undefined || JSON.stringify(old.publicJwks()) !== JSON.stringify(ring.publicJwks());
    if (changed) this.#ring = ring;
    this.#fetchedAt = this.#clock();
    this.#nextDue = this.#fetchedAt + this.#refreshInterval;
    this.#lastError = undefined;
    if (changed) {
      this.#logger.info(`mrtr-state: the JWKS from ${this.url} ${old === undefined ? "loaded" : "changed"}: ${ring.size} keys`);
    }
    record(this.#metrics, "key_refresh", { source: "remote_jwks", outcome: changed ? "updated" : "unchanged" });
    return changed;
  }

  #failed(reason: string): KeyringError {
    const message = `could not fetch the JWKS from ${this.url}: ${reason}`;
    this.#lastError = message;
    this.#nextDue = this.#clock() + this.#cooldown; // retry after the cooldown, not a whole interval later
    const ring = this.#ring;
    const fetchedAt = this.#fetchedAt;
    this.#logger.warn(
      ring !== undefined && fetchedAt !== undefined
        ? `mrtr-state: ${message}; keeping the ${ring.size} keys fetched ${Math.round(this.#clock() - fetchedAt)} s ago`
        : `mrtr-state: ${message}`,
    );
    record(this.#metrics, "key_refresh", { source: "remote_jwks", outcome: "failed" });
    return new KeyringError(message);
  }

  /** The body, read under one deadline (headers and body) and the size cap. */
  async #download(): Promise<Uint8Array> {
    const controller = new AbortController();
    const seconds = this.#timeoutMs / 1000;
    const deadline = setTimeout(() => controller.abort(), this.#timeoutMs);
    try {
      let response: Response;
      try {
        response = await this.#fetch(this.url, {
          signal: controller.signal,
          // No credentials option: server runtimes hold no cookies, and Workers' fetch has long refused the field.
          redirect: "manual",
          headers: { accept: ACCEPT },
        });
      } catch (error) {
        throw new FetchFailure(controller.signal.aborted ? `no answer within ${seconds} s` : `cannot connect (${errorName(error)})`);
      }
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => {});
        const redirect = response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400);
        throw new FetchFailure(
          `the server answered HTTP ${response.status}${redirect ? " (redirects are not followed: configure the final URL)" : ""}`,
        );
      }
      const declared = Number(response.headers.get("content-length") ?? "0");
      if (declared > this.#maxBytes) {
        await response.body?.cancel().catch(() => {});
        throw new FetchFailure(`the answer is larger than ${this.#maxBytes} bytes`);
      }
      return await this.#readCapped(response, controller, seconds);
    } finally {
      clearTimeout(deadline);
    }
  }

  async #readCapped(response: Response, controller: AbortController, seconds: number): Promise<Uint8Array> {
    if (response.body === null) return new Uint8Array(0);
    const reader = response.body.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        total += value.byteLength;
        if (total > this.#maxBytes) {
          controller.abort();
          throw new FetchFailure(`the answer is larger than ${this.#maxBytes} bytes`);
        }
        chunks.push(value);
      }
    } catch (error) {
      if (error instanceof FetchFailure) throw error;
      throw new FetchFailure(controller.signal.aborted ? `no answer within ${seconds} s` : `the connection failed (${errorName(error)})`);
    } finally {
      reader.releaseLock();
    }
    const body = new Uint8Array(total);
    let offset = 0;
    for (const chunk of chunks) {
      body.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return body;
  }

  /** The URL and the number of keys, never a key. */
  toString(): string {
    return `RemoteJwks(url=${JSON.stringify(this.url)}, keys=${this.#ring?.size ?? 0})`;
  }
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

/** The keys of a fetched JWKS: only Ed25519 public keys, every local rule applied. */
function parse(body: Uint8Array): Keyring {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch {
    throw new KeyringError("the answer is not UTF-8 text");
  }
  if (!text.trimStart().startsWith("{")) throw new KeyringError("the answer is not a JSON object");
  const ring = Keyring.fromJwks(text);
  for (const key of ring) {
    if (key.alg !== "EdDSA") {
      throw new KeyringError(
        `the JWKS holds a secret key (alg ${key.alg}): a published JWKS must hold Ed25519 public keys only (replace the secret, it is no longer one)`,
      );
    }
    if (key.canSign) {
      throw new KeyringError(
        "the JWKS holds an Ed25519 private key ('d'): a published JWKS must hold public keys only (replace the key, it is no longer private)",
      );
    }
  }
  return ring;
}
