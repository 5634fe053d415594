package dev.mrtrstate.replay;

import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * A thread-safe, bounded replay store for one process. Entries are forgotten once their retention has passed by
 * the store's clock (give it the sealer's clock). When {@code maxEntries} unexpired entries are held, a further
 * redemption fails with {@link ReplayStoreException} (refused as {@code store_unavailable}) rather than
 * forgetting a live entry, which would let its token be replayed. A restart forgets every redemption and another
 * replica never sees them: for several replicas use a shared store such as the Redis one.
 */
public final class MemoryReplayStore implements ReplayStore {
    /** The default bound: 100,000 entries. */
    public static final int DEFAULT_MAX_ENTRIES = 100_000;

    private record Entry(long expiresAt, String key) {}

    private final int maxEntries;
    private final Clock clock;
    private final Map<String, Long> seen = new HashMap<>();
    private final PriorityQueue<Entry> expiries = new PriorityQueue<>((a, b) -> Long.compare(a.expiresAt, b.expiresAt));

    /** A store of {@link #DEFAULT_MAX_ENTRIES} on the system clock. */
    public MemoryReplayStore() {
        this(DEFAULT_MAX_ENTRIES, Clock.systemUTC());
    }

    /**
     * A store.
     *
     * @param maxEntries the most unexpired entries held (at least 1)
     * @param clock the clock that decides expiry: the sealer's
     */
    public MemoryReplayStore(int maxEntries, Clock clock) {
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be at least 1");
        }
        this.maxEntries = maxEntries;
        this.clock = java.util.Objects.requireNonNull(clock, "clock");
    }

    @Override
    public synchronized boolean redeem(String key, long expiresAt) throws ReplayStoreException {
        long now = clock.instant().getEpochSecond();
        while (!expiries.isEmpty() && expiries.peek().expiresAt() <= now) {
            Entry old = expiries.poll();
            seen.remove(old.key(), old.expiresAt());
        }
        if (seen.containsKey(key)) {
            return false;
        }
        if (expiresAt <= now) {
            throw new ReplayStoreException("the redemption's retention has already ended by the store's clock;"
                    + " give the store the sealer's clock");
        }
        if (seen.size() >= maxEntries) {
            throw new ReplayStoreException("the in-memory replay store is full (" + maxEntries + " entries)");
        }
        seen.put(key, expiresAt);
        expiries.add(new Entry(expiresAt, key));
        return true;
    }

    /** {@return the number of entries held (some may have expired since the last redemption)} */
    public synchronized int size() {
        return seen.size();
    }

    @Override
    public String toString() {
        return "MemoryReplayStore(maxEntries=" + maxEntries + ")";
    }
}
