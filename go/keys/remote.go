package keys

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mrtr-state/mrtr-state/go/metrics"
)

// Defaults of a RemoteJWKS.
const (
	DefaultRefreshInterval = 300 * time.Second // between scheduled fetches
	DefaultCooldown        = 30 * time.Second  // the fewest between fetches caused by unknown kids or failures
	DefaultFetchTimeout    = 5 * time.Second   // over the whole fetch: connect, headers and body
	DefaultMaxJWKSBytes    = 64 << 10
)

// RemoteJWKS is the key source of a verify-only replica: the Ed25519 public keys
// of a JWKS published at a URL (another server's /.well-known/mrtr-state-jwks.json).
//
// It fetches the JWKS once when loaded (a failure then is an error: a replica
// should not start without keys), then again in the background every refresh
// interval, and at once when a token names a kid it does not hold, at most once
// per cooldown, so tokens with random kids cannot make it fetch. Every fetch is
// bounded: https only (http on a loopback address), no redirects, no credentials
// in the URL, at most MaxBytes, and one deadline over the whole fetch, so a
// server that sends its answer slowly is cut off. The JWKS goes through
// ParseJWKS, so every key rule holds, and then must hold only Ed25519 public
// keys: a JWKS with a private key or a secret is refused whole. A failed fetch
// keeps the last good keys and logs why (the URL and the reason, never key
// material). Safe for concurrent use.
type RemoteJWKS struct {
	url      string
	client   *http.Client
	refresh  time.Duration
	cooldown time.Duration
	timeout  time.Duration
	maxBytes int64
	clock    func() time.Time
	logger   *slog.Logger
	metrics  metrics.Func

	ring        atomic.Pointer[Keyring]
	mu          sync.Mutex // guards the times and fetching
	lastGood    time.Time
	lastAttempt time.Time
	fetching    bool
}

// RemoteOption configures a RemoteJWKS.
type RemoteOption func(*RemoteJWKS)

// WithRefreshInterval sets how often the JWKS is fetched (default 300 s).
func WithRefreshInterval(d time.Duration) RemoteOption { return func(r *RemoteJWKS) { r.refresh = d } }

// WithCooldown sets the fewest time between fetches for unknown kids or after a failure (default 30 s).
func WithCooldown(d time.Duration) RemoteOption { return func(r *RemoteJWKS) { r.cooldown = d } }

// WithFetchTimeout sets the deadline over a whole fetch (default 5 s).
func WithFetchTimeout(d time.Duration) RemoteOption { return func(r *RemoteJWKS) { r.timeout = d } }

// WithMaxBytes sets the largest JWKS read (default 64 KiB).
func WithMaxBytes(n int64) RemoteOption { return func(r *RemoteJWKS) { r.maxBytes = n } }

// WithHTTPClient sets the HTTP client (its redirects are refused whatever it says).
func WithHTTPClient(c *http.Client) RemoteOption { return func(r *RemoteJWKS) { r.client = c } }

// WithRemoteClock sets the clock of the refresh schedule (default time.Now).
func WithRemoteClock(clock func() time.Time) RemoteOption {
	return func(r *RemoteJWKS) { r.clock = clock }
}

// WithLogger sets where failed fetches are logged (default slog.Default()).
func WithLogger(l *slog.Logger) RemoteOption { return func(r *RemoteJWKS) { r.logger = l } }

// WithRemoteMetrics counts every refresh after the first fetch as a
// key_refresh event (source remote_jwks; outcome updated, unchanged or failed;
// package metrics).
func WithRemoteMetrics(f metrics.Func) RemoteOption { return func(r *RemoteJWKS) { r.metrics = f } }

// CheckJWKSURL refuses a URL a JWKS must not be fetched from: not https (http
// only on a loopback address), or with credentials in it.
func CheckJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return keyringError("a JWKS URL must be an absolute https:// URL")
	}
	if u.User != nil {
		return keyringError("a JWKS URL must not hold credentials")
	}
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if u.Scheme == "http" && (host == "localhost" || (ip != nil && ip.IsLoopback())) {
		return nil
	}
	return keyringError("a JWKS URL must be https:// (http:// only on a loopback address)")
}

// LoadRemoteJWKS fetches the JWKS at jwksURL once and returns the source; an
// error when the URL is not allowed or the first fetch fails.
func LoadRemoteJWKS(ctx context.Context, jwksURL string, opts ...RemoteOption) (*RemoteJWKS, error) {
	if err := CheckJWKSURL(jwksURL); err != nil {
		return nil, err
	}
	r := &RemoteJWKS{url: jwksURL, refresh: DefaultRefreshInterval, cooldown: DefaultCooldown,
		timeout: DefaultFetchTimeout, maxBytes: DefaultMaxJWKSBytes, clock: time.Now, logger: slog.Default()}
	for _, opt := range opts {
		opt(r)
	}
	base := http.DefaultClient
	if r.client != nil {
		base = r.client
	}
	client := *base
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return errors.New("redirects are not followed") }
	r.client = &client
	ring, err := r.fetch(ctx)
	if err != nil {
		return nil, err
	}
	r.ring.Store(ring)
	r.lastGood, r.lastAttempt = r.clock(), r.clock()
	return r, nil
}

// Keyring returns the last good keys; when the refresh interval has passed it
// starts a fetch in the background (the caller never waits for it).
func (r *RemoteJWKS) Keyring() *Keyring {
	r.mu.Lock()
	due := !r.fetching && r.clock().Sub(r.lastGood) >= r.refresh && r.clock().Sub(r.lastAttempt) >= r.cooldown
	if due {
		r.fetching = true
		r.lastAttempt = r.clock()
	}
	r.mu.Unlock()
	if due {
		go func() { _ = r.update(context.Background()) }()
	}
	return r.ring.Load()
}

// RefreshForUnknownKey fetches now, for a token whose kid the keys do not hold,
// unless a fetch ran within the cooldown or is running; it waits at most the
// fetch deadline and tells whether new keys were loaded.
func (r *RemoteJWKS) RefreshForUnknownKey(ctx context.Context) bool {
	r.mu.Lock()
	if r.fetching || r.clock().Sub(r.lastAttempt) < r.cooldown {
		r.mu.Unlock()
		return false
	}
	r.fetching = true
	r.lastAttempt = r.clock()
	r.mu.Unlock()
	return r.update(ctx) == nil
}

// update fetches and, on success, replaces the keys; a failure keeps them.
func (r *RemoteJWKS) update(ctx context.Context) error {
	ring, err := r.fetch(ctx)
	r.mu.Lock()
	r.fetching = false
	if err == nil {
		r.lastGood = r.clock()
	}
	r.mu.Unlock()
	if err != nil {
		r.logger.Warn("keys: the remote JWKS could not be refreshed; the last good keys stay in use",
			"url", r.url, "reason", err.Error())
		metrics.Record(r.metrics, metrics.KeyRefresh, "source", "remote_jwks", "outcome", "failed")
		return err
	}
	old := r.ring.Swap(ring)
	outcome := "updated"
	if old != nil && bytes.Equal(old.PublicJWKS(), ring.PublicJWKS()) {
		outcome = "unchanged"
	}
	metrics.Record(r.metrics, metrics.KeyRefresh, "source", "remote_jwks", "outcome", outcome)
	return nil
}

// fetch reads and checks the JWKS, within one deadline over the whole fetch.
func (r *RemoteJWKS) fetch(ctx context.Context) (*Keyring, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, keyringError("the JWKS URL cannot be requested")
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, keyringErrorf("fetching the JWKS took longer than %s", r.timeout)
		}
		return nil, keyringError("the JWKS could not be fetched (unreachable, or a redirect)")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, keyringErrorf("the JWKS server answered HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, r.maxBytes+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return nil, keyringErrorf("fetching the JWKS took longer than %s", r.timeout)
		}
		return nil, keyringError("the JWKS answer could not be read")
	}
	if int64(len(body)) > r.maxBytes {
		return nil, keyringErrorf("the JWKS is larger than %d bytes", r.maxBytes)
	}
	ring, err := ParseJWKS(body)
	if err != nil {
		return nil, err
	}
	for _, k := range ring.keys {
		if k.alg != EdDSA || k.private != nil {
			return nil, keyringError("a published JWKS must hold only Ed25519 public keys; " +
				"this one holds a private key or a secret and is refused whole")
		}
	}
	return ring, nil
}

// String names the URL only.
func (r *RemoteJWKS) String() string { return fmt.Sprintf("RemoteJWKS(%s)", r.url) }
