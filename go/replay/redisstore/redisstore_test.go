package redisstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/replay"
	"github.com/mrtr-state/mrtr-state/go/token/base64url"
)

func inCI() bool {
	switch strings.ToLower(os.Getenv("CI")) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// startRedis starts a redis-server on a free loopback port and stops it when the
// test ends. Without redis-server the test skips, or fails under CI=true.
func startRedis(t *testing.T) string {
	t.Helper()
	executable, err := exec.LookPath("redis-server")
	if err != nil {
		if inCI() {
			t.Fatal("redis-server not found on PATH (CI=true: a missing tool is a failure; scripts/ci-deps installs it)")
		}
		t.Skip("redis-server not found on PATH; scripts/ci-deps installs it")
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	_ = listener.Close()
	cmd := exec.Command(executable, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer client.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if client.Ping(context.Background()).Err() == nil {
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not answer within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newStore(t *testing.T, addr string, opts ...Option) *Store {
	t.Helper()
	s, err := NewFromURL("redis://"+addr+"/0", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

var now = time.Unix(1767225600, 0)

func TestTheFirstRedemptionWinsAndTheKeyIsThePythonStoresKey(t *testing.T) {
	addr := startRedis(t)
	s := newStore(t, addr, WithClock(func() time.Time { return now }))
	key := replay.Key("https://mcp.example.com", "AAAAAAAAAAAAAAAAAAAAAA")
	ctx := context.Background()
	if first, err := s.Redeem(ctx, key, now.Unix()+600); err != nil || !first {
		t.Fatalf("the first redemption: %v %v", first, err)
	}
	if again, err := s.Redeem(ctx, key, now.Unix()+600); err != nil || again {
		t.Fatalf("the second redemption: %v %v", again, err)
	}
	sum := sha256.Sum256([]byte("https://mcp.example.com#AAAAAAAAAAAAAAAAAAAAAA"))
	want := "mrtr-state:jti:" + base64url.Encode(sum[:])
	if s.RedisKey(key) != want {
		t.Errorf("key %s, want %s", s.RedisKey(key), want)
	}
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	if v, err := admin.Get(ctx, want).Result(); err != nil || v != "1" {
		t.Errorf("stored %q, %v", v, err)
	}
	if ttl, _ := admin.PTTL(ctx, want).Result(); ttl <= 599*time.Second || ttl > 600*time.Second {
		t.Errorf("retention %v, want 600 s from the store's clock", ttl)
	}
	if _, err := s.Redeem(ctx, "x#y", now.Unix()); !errors.Is(err, replay.ErrUnavailable) {
		t.Errorf("a retention already over: %v", err)
	}
}

func TestOfConcurrentRedemptionsExactlyOneWins(t *testing.T) {
	s := newStore(t, startRedis(t))
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			first, err := s.Redeem(context.Background(), "iss#jti-concurrent-000000", time.Now().Unix()+60)
			if err != nil {
				t.Error(err)
			}
			if first {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d redemptions won", wins.Load())
	}
}

func TestAnUnreachableRedisFailsClosedWithoutNamingTheAddress(t *testing.T) {
	listener, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := listener.Addr().String()
	_ = listener.Close()
	s := newStore(t, addr)
	_, err := s.Redeem(context.Background(), "k", time.Now().Unix()+60)
	if !errors.Is(err, replay.ErrUnavailable) || strings.Contains(err.Error(), addr) {
		t.Errorf("got %v", err)
	}
	k, _ := keys.Generate(keys.HS256, "")
	ring, _ := keys.NewKeyring(k)
	sealer, _ := mrtrstate.New(ring, "https://mcp.example.com", mrtrstate.WithReplayStore(s))
	req := mrtrstate.Request{User: "alice", Target: binding.ToolTarget("t"), Arguments: []byte(`{}`)}
	tok, _ := sealer.Seal(1, req)
	if _, err := sealer.Open(context.Background(), tok, req, mrtrstate.Consume()); !errors.Is(err, mrtrstate.ErrStoreUnavailable) {
		t.Errorf("the sealer: %v", err)
	}
}

func TestWaitingForReplicasThatAreNotThereFailsClosed(t *testing.T) {
	s := newStore(t, startRedis(t), WithWaitReplicas(1, 50*time.Millisecond))
	first, err := s.Redeem(context.Background(), "iss#waiting-0000000000000", time.Now().Unix()+60)
	if first || !errors.Is(err, replay.ErrUnavailable) || !strings.Contains(err.Error(), "0 acknowledged") {
		t.Errorf("got %v %v", first, err)
	}
	again, err := s.Redeem(context.Background(), "iss#waiting-0000000000000", time.Now().Unix()+60)
	if again || err != nil {
		t.Errorf("the retry: %v %v; the write survived, so it is a replay", again, err)
	}
}

func TestAnErrorReplyIsNamedByItsCode(t *testing.T) {
	addr := startRedis(t)
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	if err := admin.ConfigSet(context.Background(), "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, addr)
	_, err := s.Redeem(context.Background(), "iss#oom", time.Now().Unix()+60)
	if !errors.Is(err, replay.ErrUnavailable) || !strings.Contains(err.Error(), "(OOM)") {
		t.Errorf("got %v", fmt.Sprint(err))
	}
}
