/**
 * Single use: remember redeemed tokens so a `requestState` opens at most once (profile 9.5, step 20).
 *
 * The store's key is the token's `jti` scoped by its issuer ({@link replayKey}), never the token text,
 * so two encodings of one token are one redemption. A store that cannot answer throws
 * {@link ReplayStoreError}; the sealer then refuses with `store_unavailable` (fail closed). A store
 * shared by replicas, in any language, lives in `mrtr-state/redis`.
 */

/**
 * A replay store could not record a redemption (unreachable, full, erroring). Its message says what
 * failed and never holds connection secrets: the sealer copies it into the refusal's `detail`.
 */
export class ReplayStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReplayStoreError";
  }
}

/** Where redeemed token ids are remembered until their tokens expire. */
export interface ReplayStore {
  /**
   * Record `key` until `expiresAt` (seconds since the epoch). Answer `true` if `key` was not recorded
   * before (this redemption wins), `false` if it was (a replay); throw {@link ReplayStoreError} if the
   * answer cannot be known. Atomic: of many concurrent calls with one key, exactly one answers `true`.
   */
  redeem(key: string, options: { readonly expiresAt: number }): boolean | Promise<boolean>;
}

/**
 * The store key of a token: its `jti` scoped by its `iss` (`iss + "#" + jti`, profile 9.5). `jti` holds
 * base64url characters only, so the last `#` separates the two and no two pairs share a key.
 */
export function replayKey(issuer: string, jti: string): string {
  return `${issuer}#${jti}`;
}

/** The default bound of {@link MemoryReplayStore}: 166 redemptions a second over a 600-second lifetime. */
export const DEFAULT_MAX_ENTRIES = 100_000;

/**
 * A bounded replay store for one process.
 *
 * Entries are forgotten once their retention has passed by `clock` (give it the sealer's clock, in
 * seconds). When `maxEntries` unexpired entries are held, a further redemption throws
 * {@link ReplayStoreError} (refused as `store_unavailable`) rather than forgetting a live entry, which
 * would let its token be replayed. A restart forgets every redemption, and another replica never sees
 * them: for several replicas use `RedisReplayStore` from `mrtr-state/redis`.
 */
export class MemoryReplayStore implements ReplayStore {
  readonly #seen = new Map<string, number>();
  /** (expiresAt, key), smallest first: forgetting is one pop per expired entry. */
  readonly #expiries: [number, string][] = [];
  readonly #maxEntries: number;
  readonly #clock: () => number;

  constructor(options: { readonly maxEntries?: number; readonly clock?: () => number } = {}) {
    const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) throw new RangeError("maxEntries must be an integer of at least 1");
    const clock = options.clock ?? (() => Date.now() / 1000);
    if (typeof clock !== "function") throw new TypeError("clock must be a function returning seconds since the epoch");
    this.#maxEntries = maxEntries;
    this.#clock = clock;
  }

  /** The most unexpired entries the store holds before it refuses. */
  get maxEntries(): number {
    return this.#maxEntries;
  }

  /** The number of unexpired entries. */
  get size(): number {
    this.#forgetExpired(this.#clock());
    return this.#seen.size;
  }

  /** Record `key` until `expiresAt`; `true` the first time, `false` after. */
  redeem(key: string, options: { readonly expiresAt: number }): boolean {
    const now = this.#clock();
    this.#forgetExpired(now);
    if (this.#seen.has(key)) return false;
    if (options.expiresAt <= now) {
      throw new ReplayStoreError(
        "the redemption's retention has already ended by the store's clock; give the store the sealer's clock",
      );
    }
    if (this.#seen.size >= this.#maxEntries) {
      throw new ReplayStoreError(`the in-memory replay store is full (${this.#maxEntries} entries)`);
    }
    this.#seen.set(key, options.expiresAt);
    push(this.#expiries, [options.expiresAt, key]);
    return true;
  }

  #forgetExpired(now: number): void {
    const expiries = this.#expiries;
    while (expiries.length > 0 && (expiries[0] as [number, string])[0] <= now) {
      const [, key] = pop(expiries);
      this.#seen.delete(key);
    }
  }

  toString(): string {
    return `MemoryReplayStore(entries=${this.#seen.size}, maxEntries=${this.#maxEntries})`;
  }
}

/** Push onto a binary min-heap ordered by the first element. */
function push(heap: [number, string][], item: [number, string]): void {
  heap.push(item);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if ((heap[parent] as [number, string])[0] <= item[0]) break;
    heap[i] = heap[parent] as [number, string];
    i = parent;
  }
  heap[i] = item;
}

/** Pop the smallest item of a non-empty binary min-heap. */
function pop(heap: [number, string][]): [number, string] {
  const top = heap[0] as [number, string];
  const last = heap.pop() as [number, string];
  if (heap.length === 0) return top;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= heap.length) break;
    const right = left + 1;
    const child = right < heap.length && (heap[right] as [number, string])[0] < (heap[left] as [number, string])[0] ? right : left;
    if ((heap[child] as [number, string])[0] >= last[0]) break;
    heap[i] = heap[child] as [number, string];
    i = child;
  }
  heap[i] = last;
  return top;
}
