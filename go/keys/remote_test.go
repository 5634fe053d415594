package keys

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// publisher serves a JWKS it can change, and counts the fetches.
type publisher struct {
	mu      sync.Mutex
	body    []byte
	status  int
	fetches atomic.Int32
	delay   time.Duration
}

func (p *publisher) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	p.fetches.Add(1)
	p.mu.Lock()
	body, status, delay := p.body, p.status, p.delay
	p.mu.Unlock()
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	if delay > 0 { // headers at once, then the body slowly
		w.(http.Flusher).Flush()
		time.Sleep(delay)
	}
	_, _ = w.Write(body)
}

func (p *publisher) set(body []byte, status int, delay time.Duration) {
	p.mu.Lock()
	p.body, p.status, p.delay = body, status, delay
	p.mu.Unlock()
}

func publicRing(t *testing.T, names ...string) []byte {
	t.Helper()
	var ks []*Key
	for _, name := range names {
		k, err := Generate(EdDSA, name)
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, k)
	}
	r, _ := NewKeyring(ks...)
	return r.PublicJWKS()
}

// servePublisher serves a publisher of the public keys named names on
// loopback, until the test ends.
func servePublisher(t *testing.T, names ...string) (*publisher, *httptest.Server) {
	t.Helper()
	p := &publisher{}
	p.set(publicRing(t, names...), 0, 0)
	server := httptest.NewServer(p)
	t.Cleanup(server.Close)
	return p, server
}

// testClock is a clock the test moves by hand; a refresh in the background
// reads it too, hence the lock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

// Now is the clock's time, for WithRemoteClock.
func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestARemoteJWKSLoadsRefreshesOnAnUnknownKidWithACooldownAndKeepsTheLastGoodKeys(t *testing.T) {
	p, server := servePublisher(t, "one")
	clock := &testClock{now: time.Unix(1000, 0)}
	r, err := LoadRemoteJWKS(context.Background(), server.URL, WithRemoteClock(clock.Now), WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	if r.Keyring().Get("one") == nil || p.fetches.Load() != 1 {
		t.Fatal("the first fetch did not load the keys")
	}
	p.set(publicRing(t, "two", "one"), 0, 0)
	if r.RefreshForUnknownKey(context.Background()) {
		t.Error("a fetch within the cooldown of the first")
	}
	clock.Advance(DefaultCooldown)
	if !r.RefreshForUnknownKey(context.Background()) || r.Keyring().Get("two") == nil {
		t.Error("an unknown kid after the cooldown did not fetch the new keys")
	}
	if r.RefreshForUnknownKey(context.Background()) || p.fetches.Load() != 2 {
		t.Errorf("random kids made it fetch again: %d fetches", p.fetches.Load())
	}
	p.set([]byte("not json"), 0, 0)
	clock.Advance(DefaultCooldown)
	if r.RefreshForUnknownKey(context.Background()) || r.Keyring().Get("two") == nil {
		t.Error("a bad JWKS replaced the last good keys")
	}
	p.set(nil, http.StatusInternalServerError, 0)
	clock.Advance(DefaultCooldown)
	if r.RefreshForUnknownKey(context.Background()) || r.Keyring().Get("two") == nil {
		t.Error("a failing server replaced the last good keys")
	}
}

func TestTheDeadlineCoversTheWholeFetch(t *testing.T) {
	p := &publisher{}
	p.set(publicRing(t, "one"), 0, 300*time.Millisecond)
	server := httptest.NewServer(p)
	defer server.Close()
	start := time.Now()
	_, err := LoadRemoteJWKS(context.Background(), server.URL, WithFetchTimeout(100*time.Millisecond), WithLogger(quiet))
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a slow body was accepted: %v", err)
	}
	if time.Since(start) > 290*time.Millisecond {
		t.Errorf("the caller waited %v, beyond the deadline", time.Since(start))
	}
}

func TestARemoteJWKSHoldsOnlyEd25519PublicKeys(t *testing.T) {
	hs, _ := Generate(HS256, "")
	ed, _ := Generate(EdDSA, "")
	for name, ring := range map[string][]*Key{"a secret": {hs}, "a private key": {ed}} {
		r, _ := NewKeyring(ring...)
		p := &publisher{}
		p.set(r.PrivateJWKS(), 0, 0)
		server := httptest.NewServer(p)
		if _, err := LoadRemoteJWKS(context.Background(), server.URL, WithLogger(quiet)); err == nil {
			t.Errorf("%s was loaded from a published JWKS", name)
		}
		server.Close()
	}
	p := &publisher{}
	p.set([]byte(`{"keys":[`+strings.Repeat(" ", 70000)+`]}`), 0, 0)
	server := httptest.NewServer(p)
	defer server.Close()
	if _, err := LoadRemoteJWKS(context.Background(), server.URL, WithLogger(quiet)); err == nil {
		t.Error("a JWKS beyond the size limit was read")
	}
}

func TestOnlyHTTPSOrLoopbackURLsWithoutCredentialsOrRedirects(t *testing.T) {
	for _, u := range []string{"http://example.com/jwks", "ftp://127.0.0.1/x", "https://user:pw@example.com/jwks", "/jwks"} {
		if CheckJWKSURL(u) == nil {
			t.Errorf("%s allowed", u)
		}
	}
	for _, u := range []string{"https://example.com/jwks", "http://127.0.0.1:8000/jwks", "http://[::1]/jwks", "http://localhost/x"} {
		if err := CheckJWKSURL(u); err != nil {
			t.Errorf("%s refused: %v", u, err)
		}
	}
	_, good := servePublisher(t, "one")
	redirect := httptest.NewServer(http.RedirectHandler(good.URL, http.StatusFound))
	defer redirect.Close()
	if _, err := LoadRemoteJWKS(context.Background(), redirect.URL, WithLogger(quiet)); err == nil {
		t.Error("a redirect was followed")
	}
}

func TestTheScheduledRefreshRunsInTheBackground(t *testing.T) {
	p, server := servePublisher(t, "one")
	clock := &testClock{now: time.Unix(1000, 0)}
	r, err := LoadRemoteJWKS(context.Background(), server.URL, WithRemoteClock(clock.Now), WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	p.set(publicRing(t, "two"), 0, 0)
	clock.Advance(DefaultRefreshInterval)
	_ = r.Keyring() // starts the refresh; returns the old keys at once
	for deadline := time.Now().Add(5 * time.Second); r.Keyring().Get("two") == nil; {
		if time.Now().After(deadline) {
			t.Fatal("the scheduled refresh never loaded the new keys")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
