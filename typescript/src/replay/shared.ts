/**
 * What every shared replay store names and keeps alike (`RedisReplayStore`, `DurableObjectReplayStore`),
 * so that they and the Python `RedisReplayStore` record one token under one name for one retention.
 */

import { sha256 } from "../lib/sha2.js";
import { encodeUtf8 } from "../lib/utf8.js";
import * as b64 from "../token/b64.js";
import { ReplayStoreError } from "./store.js";

/** The default prefix of a shared store's keys: the Python store's. */
export const DEFAULT_PREFIX = "mrtr-state:jti:";

/**
 * The name under which the redemption of `key` (the issuer-scoped `jti`) is recorded:
 * `prefix + base64url(SHA-256(key))`, the Python store's `_hashed`.
 */
export function storeKey(prefix: string, key: string): string {
  return prefix + b64.encode(sha256(encodeUtf8(key)));
}

/** The time left until `expiresAt`, in whole milliseconds, rounded up (the Python store's `_retention_ms`). */
export function retentionMs(expiresAt: number, now: number): number {
  const ms = Math.ceil((expiresAt - now) * 1000);
  if (!(ms >= 1)) {
    throw new ReplayStoreError(
      "the redemption's retention has already ended by the store's clock; give the store the sealer's clock",
    );
  }
  return ms;
}

/** A store's `timeout` option: seconds, more than 0 and at most 60. */
export function checkTimeout(timeout: unknown, name = "timeout"): number {
  if (typeof timeout !== "number" || !Number.isFinite(timeout)) throw new TypeError(`${name} must be a number of seconds`);
  if (!(timeout > 0 && timeout <= 60)) throw new RangeError(`${name} must be more than 0 and at most 60 seconds, got ${timeout}`);
  return timeout;
}
