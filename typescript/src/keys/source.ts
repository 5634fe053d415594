/**
 * Key sources: where a {@link StateSealer} reads its keys when they can change while it runs (a remote
 * JWKS, a key file that is reread), the Python library's `KeySource`.
 */

import { Keyring } from "./keyring.js";

/**
 * Keys that can change: a sealer reads {@link keyring} on every seal and open, so it must be cheap and
 * never wait (a source may start a background refresh from it). A source that can look for a key on
 * demand has {@link refreshForUnknownKey}: a sealer calls it once for a token whose `kid` it does not
 * hold, and opens the token again if the keys changed.
 */
export interface KeySource {
  /** The current keys (the last good ones), signing key first. */
  readonly keyring: Keyring;
  /** Look for new keys now unless a cooldown forbids it; `true` if they changed. Never rejects. */
  refreshForUnknownKey?(): Promise<boolean>;
}

/** Whether `value` is a {@link KeySource} (a `keyring` property; a {@link Keyring} itself is not one). */
export function isKeySource(value: unknown): value is KeySource {
  return typeof value === "object" && value !== null && !(value instanceof Keyring) && "keyring" in value;
}

/** What logs a key source's news: the last good keys kept, the keys changed. Default `console`. */
export interface KeySourceLogger {
  warn(message: string): void;
  info(message: string): void;
}
