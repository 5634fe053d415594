package replay

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestTheMemoryStoreForgetsExpiredEntriesAndRefusesWhenFull(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	m := NewMemoryStore(2, clock)
	ctx := context.Background()
	for _, key := range []string{"a", "b"} {
		if first, err := m.Redeem(ctx, key, 1010); err != nil || !first {
			t.Fatalf("%s: %v %v", key, first, err)
		}
	}
	if again, err := m.Redeem(ctx, "a", 1010); again || err != nil {
		t.Errorf("a replay: %v %v", again, err)
	}
	if _, err := m.Redeem(ctx, "c", 1010); !errors.Is(err, ErrUnavailable) {
		t.Errorf("a full store forgot a live entry: %v", err)
	}
	if _, err := m.Redeem(ctx, "d", 1000); !errors.Is(err, ErrUnavailable) {
		t.Errorf("a retention already over: %v", err)
	}
	now = time.Unix(1010, 0)
	if m.Len() != 0 {
		t.Errorf("%d entries after their retention", m.Len())
	}
	if first, err := m.Redeem(ctx, "c", 1020); err != nil || !first {
		t.Errorf("after expiry: %v %v", first, err)
	}
	if Key("https://a", "jti") != "https://a#jti" {
		t.Error("the store key is not iss#jti")
	}
}
