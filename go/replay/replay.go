package replay

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Store is where redeemed token ids are remembered.
type Store interface {
	// Redeem records key until expiresAt (seconds since the epoch). It returns
	// true if key was not recorded before (this redemption wins), false if it was
	// (a replay), and an error if the answer cannot be known. It must be atomic:
	// of many concurrent calls with one key, exactly one returns true. The entry
	// must outlive expiresAt as the store's clock measures it.
	Redeem(ctx context.Context, key string, expiresAt int64) (bool, error)
}

// Key is the store key of a token: its jti scoped by its iss, "iss#jti". A jti
// holds base64url characters only, so the last "#" separates the two and no two
// (issuer, jti) pairs share a key.
func Key(issuer, jti string) string { return issuer + "#" + jti }

// ErrUnavailable wraps every error a store of this module returns, so that
// errors.Is(err, ErrUnavailable) tells a store failure. Messages never hold
// connection secrets.
var ErrUnavailable = errors.New("replay store unavailable")

// DefaultMaxEntries is MemoryStore's default bound.
const DefaultMaxEntries = 100_000

// MemoryStore is a bounded replay store for one process, safe for concurrent
// use. Entries are forgotten once their retention has passed by its clock (give
// it the sealer's clock). When MaxEntries unexpired entries are held, a further
// redemption fails (store_unavailable) rather than forgetting a live entry,
// which would let its token be replayed. A restart forgets every redemption and
// another replica never sees them: replicas share a Redis store instead.
type MemoryStore struct {
	mu         sync.Mutex
	clock      func() time.Time
	maxEntries int
	seen       map[string]int64
	expiries   expiryHeap
}

// NewMemoryStore makes a memory store holding at most maxEntries unexpired
// entries (DefaultMaxEntries when 0 or less), with clock (time.Now when nil).
func NewMemoryStore(maxEntries int, clock func() time.Time) *MemoryStore {
	if maxEntries <= 0 {
		maxEntries = DefaultMaxEntries
	}
	if clock == nil {
		clock = time.Now
	}
	return &MemoryStore{clock: clock, maxEntries: maxEntries, seen: map[string]int64{}}
}

// Redeem implements Store.
func (m *MemoryStore) Redeem(_ context.Context, key string, expiresAt int64) (bool, error) {
	now := m.clock().Unix()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetExpired(now)
	if _, seen := m.seen[key]; seen {
		return false, nil
	}
	if expiresAt <= now {
		return false, fmt.Errorf("%w: the redemption's retention has already ended by the store's clock; "+
			"give the store the sealer's clock", ErrUnavailable)
	}
	if len(m.seen) >= m.maxEntries {
		return false, fmt.Errorf("%w: the in-memory replay store is full (%d entries)", ErrUnavailable, m.maxEntries)
	}
	m.seen[key] = expiresAt
	heap.Push(&m.expiries, expiry{expiresAt, key})
	return true, nil
}

// Len is the number of unexpired entries.
func (m *MemoryStore) Len() int {
	now := m.clock().Unix()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetExpired(now)
	return len(m.seen)
}

func (m *MemoryStore) forgetExpired(now int64) {
	for len(m.expiries) > 0 && m.expiries[0].at <= now {
		e := heap.Pop(&m.expiries).(expiry)
		delete(m.seen, e.key)
	}
}

type expiry struct {
	at  int64
	key string
}

// expiryHeap orders entries by retention end, earliest first (container/heap).
type expiryHeap []expiry

// Len, Less, Swap, Push and Pop implement heap.Interface.

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
