/**
 * A key ring read from a file, that picks up a rotated file without a restart: the Python library's
 * `ReloadingKeyring`, for Node, Deno and Bun (through `node:fs`, which all three provide). Imported from
 * `mrtr-state/reloading`, so the core never needs a file system; on Workers, where there is no file,
 * use a secret binding with `Keyring.fromEnv`, or {@link RemoteJwks} on verify-only replicas, and
 * redeploy to rotate.
 *
 * ```ts
 * const keys = ReloadingKeyring.fromEnv(); // the file named by MRTR_STATE_KEYS_FILE
 * const sealer = new StateSealer(keys, { issuer: "https://tools.example.com" });
 * ```
 *
 * - The file holds what `MRTR_STATE_KEYS` holds (a JWKS, one JWK, or an HS256 secret in base64), read
 *   by `Keyring.fromEnv`'s own rules, so every check of a key loaded at start-up applies to a reloaded one.
 * - At most every `checkInterval` seconds (default 1), the next `seal` or `open` looks at the file's
 *   identity (device, inode, size, modification and change times) and rereads it if any changed. A
 *   token naming an unknown `kid` makes it look at once, and so does the next access after the signal
 *   {@link ReloadingKeyring.reloadOnSignal} installs (`SIGHUP` by default), which also rereads the file.
 * - A file that cannot be used (missing, empty, half written, not a key ring, a short secret, ...) is
 *   refused: the last good ring stays in use and a warning says why (the file and the rule, never key
 *   material), once per distinct bad content. Loading at start-up throws a {@link KeyringError}. A file
 *   found bad is not read again for `cooldown` seconds (default 5) unless it is replaced, `reload()` is
 *   called or the signal arrives.
 * - Only a regular file is read: it is opened with `O_NONBLOCK` and checked with `fstat`, so a FIFO, a
 *   device, a socket or a directory at the path is refused at once, never waited on. A file that anyone
 *   may write (`o+w`) is refused unless `allowWorldWritable: true`; one its group or others may read is
 *   loaded with a warning.
 */

import { closeSync, constants, fstatSync, openSync, readSync, statSync, type BigIntStats } from "node:fs";

import { KeyringError } from "../errors.js";
import { sha256 } from "../lib/sha2.js";
import { standardError } from "../lib/log.js";
import { record, type StateMetrics } from "../metrics/events.js";
import * as b64 from "../token/b64.js";
import { DEFAULT_KEYS_VARIABLE, Keyring } from "./keyring.js";
import type { KeySource, KeySourceLogger } from "./source.js";

/** The environment variable {@link ReloadingKeyring.fromEnv} reads: the key file's path. */
export const DEFAULT_KEYS_FILE_VARIABLE = "MRTR_STATE_KEYS_FILE";
/** Seconds between two looks at the file. */
export const DEFAULT_CHECK_INTERVAL = 1;
/** Seconds before a file found bad is read again (unless it was replaced, or a reread was asked for). */
export const DEFAULT_FILE_COOLDOWN = 5;
/** The largest key file read, in bytes. */
export const MAX_KEY_FILE_BYTES = 1 << 20;

const WINDOWS = process.platform === "win32";
// O_NONBLOCK: opening a FIFO that has no writer returns at once instead of waiting for one.
const FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** Options of a {@link ReloadingKeyring}; every one has a default. */
export interface ReloadingKeyringOptions {
  /** The most seconds between two looks at the file (default 1). */
  readonly checkInterval?: number;
  /** After the file is found bad, the fewest seconds before it is read again (default 5). */
  readonly cooldown?: number;
  /** Load a file that anyone may write (default false: anyone could put their own key in it). */
  readonly allowWorldWritable?: boolean;
  /** Monotonic seconds, for the schedule and the cooldown (default `performance.now() / 1000`). */
  readonly clock?: () => number;
  /** Counts every reread as a `key_refresh` event with `source` `key_file` (`spec/metrics.json`). */
  readonly metrics?: StateMetrics | undefined;
  /** Where a refused file (warn) and changed keys (info) are reported (default: standard error, never standard output). */
  readonly logger?: KeySourceLogger;
}

function identityOf(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
}

function kind(stats: BigIntStats): string {
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isDirectory()) return "a directory";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  if (stats.isSocket()) return "a socket";
  return "not a file";
}

/** A file-system error as its code (`ENOENT`, `EACCES`, ...), never its text. */
function cannotRead(error: unknown): string {
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "";
  return `it cannot be read${/^E[A-Z]+$/.test(code) ? ` (${code})` : ""}`;
}

/**
 * At most `MAX_KEY_FILE_BYTES` bytes of the key file and its permission bits: a regular file only
 * (opened without blocking, checked on the opened descriptor), and not one anyone may write unless allowed.
 */
function readKeyFile(path: string, allowWorldWritable: boolean): { data: Uint8Array; mode: number } {
  const fd = openSync(path, FLAGS);
  try {
    const stats = fstatSync(fd, { bigint: true });
    if (!stats.isFile()) throw new KeyringError(`it is not a regular file (${kind(stats)}): give the path of the key file`);
    const mode = Number(stats.mode & 0o7777n);
    if (mode & 0o002 && !allowWorldWritable && !WINDOWS) {
      throw new KeyringError(
        `anyone may write it (mode ${mode.toString(8).padStart(4, "0")}): make it 0600 (chmod 600 FILE), or pass allowWorldWritable: true`,
      );
    }
    const buffer = new Uint8Array(MAX_KEY_FILE_BYTES + 1);
    let size = 0;
    while (size < buffer.length) {
      const read = readSync(fd, buffer, size, buffer.length - size, null);
      if (read === 0) break;
      size += read;
    }
    if (size > MAX_KEY_FILE_BYTES) throw new KeyringError(`it is larger than ${MAX_KEY_FILE_BYTES} bytes`);
    return { data: buffer.slice(0, size), mode };
  } finally {
    closeSync(fd);
  }
}

/** The ring in a key file's bytes, by the rules of `MRTR_STATE_KEYS`. */
function parse(data: Uint8Array): Keyring {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(data);
  } catch {
    throw new KeyringError("it is not UTF-8 text");
  }
  if (text.trim() === "") throw new KeyringError("it is empty");
  return Keyring.fromEnv(DEFAULT_KEYS_VARIABLE, { env: { [DEFAULT_KEYS_VARIABLE]: text } });
}

function seconds(name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a number of seconds, not negative`);
  return value;
}

/**
 * A {@link KeySource} that reads a key file, and reads it again when it changes. Make one with
 * {@link ReloadingKeyring.fromFile} or {@link ReloadingKeyring.fromEnv}; both load the file at once and
 * throw a {@link KeyringError} if it cannot be used.
 */
export class ReloadingKeyring implements KeySource {
  /** The key file. */
  readonly path: string;
  readonly #checkInterval: number;
  readonly #cooldown: number;
  readonly #allowWorldWritable: boolean;
  readonly #clock: () => number;
  readonly #metrics: StateMetrics | undefined;
  readonly #logger: KeySourceLogger;
  #ring: Keyring;
  #identity: string;
  #digest: string;
  #nextCheck: number;
  #poked = false;
  // The last failure: its content's digest (or its reason), the file it was found in, why, and when the
  // file may be read again.
  #failed: string | undefined;
  #failedIdentity: string | undefined;
  #failedReason = "";
  #retryAt = -Infinity;
  #signal: { readonly name: NodeJS.Signals; readonly listener: () => void } | undefined;

  private constructor(path: string, options: ReloadingKeyringOptions) {
    if (typeof path !== "string" || path === "") throw new TypeError("path must be the key file's path");
    this.path = path;
    this.#checkInterval = seconds("checkInterval", options.checkInterval ?? DEFAULT_CHECK_INTERVAL);
    this.#cooldown = seconds("cooldown", options.cooldown ?? DEFAULT_FILE_COOLDOWN);
    const allow = options.allowWorldWritable ?? false;
    if (typeof allow !== "boolean") throw new TypeError("allowWorldWritable must be a boolean");
    this.#allowWorldWritable = allow;
    const clock = options.clock ?? (() => performance.now() / 1000);
    if (typeof clock !== "function") throw new TypeError("clock must be a function returning monotonic seconds");
    this.#clock = clock;
    this.#metrics = options.metrics;
    this.#logger = options.logger ?? standardError;
    let data: Uint8Array;
    let mode: number;
    try {
      this.#identity = identityOf(statSync(path, { bigint: true }));
      ({ data, mode } = readKeyFile(path, allow));
      this.#ring = parse(data);
    } catch (error) {
      const reason = error instanceof KeyringError ? error.message : cannotRead(error);
      throw new KeyringError(`${this.#describe()} cannot be used: ${reason}`);
    }
    this.#warnIfReadableByOthers(mode);
    this.#digest = b64.encode(sha256(data));
    this.#nextCheck = clock() + this.#checkInterval;
  }

  /** Load the key file at `path` (a {@link KeyringError} if it cannot be used) and follow it. */
  static fromFile(path: string, options: ReloadingKeyringOptions = {}): ReloadingKeyring {
    return new ReloadingKeyring(path, options);
  }

  /** Load and follow the key file whose path is in `name` (default `MRTR_STATE_KEYS_FILE`) of `env` (default `process.env`). */
  static fromEnv(
    name: string = DEFAULT_KEYS_FILE_VARIABLE,
    options: ReloadingKeyringOptions & { readonly env?: Readonly<Record<string, string | undefined>> } = {},
  ): ReloadingKeyring {
    const path = ((options.env ?? process.env)[name] ?? "").trim();
    if (path === "") {
      throw new KeyringError(
        `the environment variable ${name} is not set: set it to the path of a key file (what ${DEFAULT_KEYS_VARIABLE} would hold)`,
      );
    }
    return new ReloadingKeyring(path, options);
  }

  /** The current keys; looks at the file first when a look is due (a `stat`, and a read only if it changed). */
  get keyring(): Keyring {
    if (this.#poked || this.#clock() >= this.#nextCheck) this.#check(this.#poked, true);
    return this.#ring;
  }

  /**
   * Read the file now; `true` if the keys changed.
   *
   * @throws KeyringError the file cannot be used; the last good ring stays.
   */
  reload(): boolean {
    return this.#check(true, false);
  }

  /** Look at the file now (a `stat`; a read only if it changed); `true` if the keys changed. Never rejects. */
  async refreshForUnknownKey(): Promise<boolean> {
    return this.#check(false, true);
  }

  /**
   * Reread the file on the next access after `signal` (default `SIGHUP`) arrives. The listener only sets
   * a flag; {@link close} removes it. One signal per source: a second call replaces the first.
   */
  reloadOnSignal(signal: NodeJS.Signals = "SIGHUP"): void {
    this.close();
    const listener = (): void => {
      this.#poked = true;
    };
    process.on(signal, listener);
    this.#signal = { name: signal, listener };
  }

  /** Remove the signal listener of {@link reloadOnSignal}, if any. */
  close(): void {
    if (this.#signal !== undefined) process.off(this.#signal.name, this.#signal.listener);
    this.#signal = undefined;
  }

  /** The path and the number of keys, never a key. */
  toString(): string {
    return `ReloadingKeyring(path=${JSON.stringify(this.path)}, keys=${this.#ring.size})`;
  }

  #describe(): string {
    return `the key file ${JSON.stringify(this.path)} (read as ${DEFAULT_KEYS_VARIABLE} is)`;
  }

  #warnIfReadableByOthers(mode: number): void {
    if (mode & 0o077 && !WINDOWS) {
      this.#logger.warn(
        `mrtr-state: the key file ${JSON.stringify(this.path)} may be read by its group or others ` +
          `(mode ${mode.toString(8).padStart(4, "0")}): make it 0600 (chmod 600 FILE)`,
      );
    }
  }

  /** Look at the file; read it if it changed or `reread`; `true` if the keys changed. */
  #check(reread: boolean, quiet: boolean): boolean {
    this.#poked = false;
    const now = this.#clock();
    this.#nextCheck = now + this.#checkInterval;
    let identity: string;
    try {
      identity = identityOf(statSync(this.path, { bigint: true }));
    } catch (error) {
      return this.#refuse(cannotRead(error), undefined, undefined, quiet);
    }
    if (!reread) {
      if (this.#failed === undefined && identity === this.#identity) return false;
      if (this.#failed !== undefined && identity === this.#failedIdentity && now < this.#retryAt) return false; // still cooling down
    }
    let data: Uint8Array;
    let mode: number;
    try {
      ({ data, mode } = readKeyFile(this.path, this.#allowWorldWritable));
    } catch (error) {
      return this.#refuse(error instanceof KeyringError ? error.message : cannotRead(error), undefined, identity, quiet);
    }
    const digest = b64.encode(sha256(data));
    if (digest === this.#digest) {
      this.#identity = identity;
      this.#failed = undefined;
      record(this.#metrics, "key_refresh", { source: "key_file", outcome: "unchanged" });
      return false;
    }
    if (digest === this.#failed) return this.#refuse(this.#failedReason, digest, identity, quiet); // known bad: not parsed again
    let ring: Keyring;
    try {
      ring = parse(data);
    } catch (error) {
      return this.#refuse(error instanceof KeyringError ? error.message : `unexpected ${String(error)}`, digest, identity, quiet);
    }
    this.#warnIfReadableByOthers(mode);
    this.#ring = ring;
    this.#identity = identity;
    this.#digest = digest;
    this.#failed = undefined;
    this.#logger.info(`mrtr-state: the key file ${JSON.stringify(this.path)} changed: ${ring.size} keys, kid ${JSON.stringify(ring.keys[0]?.kid)} signs`);
    record(this.#metrics, "key_refresh", { source: "key_file", outcome: "updated" });
    return true;
  }

  #refuse(reason: string, digest: string | undefined, identity: string | undefined, quiet: boolean): boolean {
    const message = `${this.#describe()} cannot be used: ${reason}`;
    const failure = digest ?? `reason:${reason}`;
    if (failure !== this.#failed) {
      // Once per distinct bad content, not at every look.
      this.#logger.warn(`mrtr-state: ${message}; keeping the ${this.#ring.size} keys read before`);
      record(this.#metrics, "key_refresh", { source: "key_file", outcome: "failed" });
    }
    // The same file is not read again until the cooldown has passed; then it is, even if its identity
    // has not changed (a write finished within one timestamp tick).
    this.#failed = failure;
    this.#failedIdentity = identity;
    this.#failedReason = reason;
    this.#retryAt = this.#clock() + this.#cooldown;
    if (!quiet) throw new KeyringError(message);
    return false;
  }
}
