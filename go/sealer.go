package mrtrstate

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/metrics"
	"github.com/mrtr-state/mrtr-state/go/refusal"
	"github.com/mrtr-state/mrtr-state/go/replay"
	"github.com/mrtr-state/mrtr-state/go/token"
	"github.com/mrtr-state/mrtr-state/go/token/base64url"
	"github.com/mrtr-state/mrtr-state/go/token/jsonstrict"
)

// Defaults and limits of the profile (sections 4 and 5).
const (
	DefaultTTL           = 600  // seconds: the lifetime of minted tokens (the 10 minutes of AGT-18)
	DefaultMaxLifetime   = 600  // seconds: the longest exp - iat accepted
	DefaultLeeway        = 0    // seconds of clock skew
	MaxLeeway            = 300  // seconds: the largest leeway allowed
	DefaultMaxTokenBytes = 8192 // bytes of the token's UTF-8 encoding
	MinTokenBytes        = 512  // the smallest size cap allowed
	jtiBytes             = 16   // 128 bits
)

// Request is what a token is bound to: the user, the target and the arguments.
type Request = binding.Request

// Sealer seals state into a requestState token and opens it on the retry. It
// holds configuration only and is safe for concurrent use.
type Sealer struct {
	source           keys.Source
	issuer           string
	ttl              int64
	maxLifetime      int64
	leeway           int64
	maxTokenBytes    int
	clock            func() time.Time
	entropy          io.Reader
	store            replay.Store
	requireArguments bool
	metrics          metrics.Func
}

// Option configures a Sealer.
type Option func(*Sealer) error

// WithTTL sets the lifetime of minted tokens (default 600 s, or the maximum
// lifetime when that is shorter); it must not exceed the maximum lifetime.
func WithTTL(d time.Duration) Option {
	return func(s *Sealer) error { s.ttl = int64(d / time.Second); return nil }
}

// WithMaxLifetime sets the longest exp - iat accepted (default 600 s, at least 1 s).
func WithMaxLifetime(d time.Duration) Option {
	return func(s *Sealer) error { s.maxLifetime = int64(d / time.Second); return nil }
}

// WithLeeway sets the clock skew allowed on iat and exp (default 0, at most 300 s).
func WithLeeway(d time.Duration) Option {
	return func(s *Sealer) error { s.leeway = int64(d / time.Second); return nil }
}

// WithMaxTokenBytes sets the size cap, checked before any decoding (default
// 8192, at least 512).
func WithMaxTokenBytes(n int) Option {
	return func(s *Sealer) error { s.maxTokenBytes = n; return nil }
}

// WithClock sets the clock (default time.Now); tests inject a fixed one.
func WithClock(clock func() time.Time) Option {
	return func(s *Sealer) error {
		if clock == nil {
			return errors.New("mrtrstate: WithClock needs a clock")
		}
		s.clock = clock
		return nil
	}
}

// WithEntropy sets the source of the jti's 16 random bytes (default
// crypto/rand). The IV of an encrypted token never comes from it: it always
// comes from the operating system's CSPRNG (decision D6).
func WithEntropy(r io.Reader) Option {
	return func(s *Sealer) error {
		if r == nil {
			return errors.New("mrtrstate: WithEntropy needs a reader")
		}
		s.entropy = r
		return nil
	}
}

// WithReplayStore sets where Consume redeems tokens (default: none, and
// Consume is a configuration error).
func WithReplayStore(store replay.Store) Option {
	return func(s *Sealer) error { s.store = store; return nil }
}

// WithMetrics counts seals, opens by outcome, refusals by reason code,
// redemptions and store outages (package metrics, spec/metrics.json): give it
// metrics.OpenTelemetry(provider) or a function of your own. Default: nothing
// is counted.
func WithMetrics(f metrics.Func) Option {
	return func(s *Sealer) error { s.metrics = f; return nil }
}

// WithRequireArguments requires the argument binding (profile, section 5, step
// 19): a token for a tool or prompt without args_sha256 is refused with
// wrong_request, and Seal for a tool or prompt needs arguments ("{}" for none).
// A resource read has no arguments, so it never applies there. Default false;
// Open can override it per call.
func WithRequireArguments(require bool) Option {
	return func(s *Sealer) error { s.requireArguments = require; return nil }
}

// ErrConfig wraps every configuration mistake New and Open report.
var ErrConfig = errors.New("mrtrstate: configuration")

// New makes a sealer for the keys of source (a *keys.Keyring, or a source whose
// keys change) and this server's issuer identity, written to and required in iss.
func New(source keys.Source, issuer string, opts ...Option) (*Sealer, error) {
	s := &Sealer{
		source: source, issuer: issuer, ttl: -1, maxLifetime: DefaultMaxLifetime, leeway: DefaultLeeway,
		maxTokenBytes: DefaultMaxTokenBytes, clock: time.Now, entropy: rand.Reader,
	}
	for _, opt := range opts {
		if err := opt(s); err != nil {
			return nil, err
		}
	}
	if s.ttl == -1 {
		s.ttl = min(DefaultTTL, s.maxLifetime)
	}
	switch {
	case source == nil || source.Keyring() == nil:
		return nil, fmt.Errorf("%w: a sealer needs keys", ErrConfig)
	case issuer == "":
		return nil, fmt.Errorf("%w: the issuer must not be empty", ErrConfig)
	case s.maxLifetime < 1:
		return nil, fmt.Errorf("%w: the maximum lifetime must be at least 1 s", ErrConfig)
	case s.ttl < 1 || s.ttl > s.maxLifetime:
		return nil, fmt.Errorf("%w: the ttl must be from 1 s to the maximum lifetime (%d s)", ErrConfig, s.maxLifetime)
	case s.leeway < 0 || s.leeway > MaxLeeway:
		return nil, fmt.Errorf("%w: the leeway must be from 0 to %d s", ErrConfig, MaxLeeway)
	case s.maxTokenBytes < MinTokenBytes:
		return nil, fmt.Errorf("%w: the size cap must be at least %d bytes", ErrConfig, MinTokenBytes)
	}
	return s, nil
}

// Issuer is the issuer this sealer writes and requires.
func (s *Sealer) Issuer() string { return s.issuer }

// TTL is the lifetime of minted tokens.
func (s *Sealer) TTL() time.Duration { return time.Duration(s.ttl) * time.Second }

// Keys returns the key source.
func (s *Sealer) Keys() keys.Source { return s.source }

// RequireArguments tells whether tokens for tools and prompts must carry the argument binding.
func (s *Sealer) RequireArguments() bool { return s.requireArguments }

// ReplayStore is the store Consume redeems in, or nil.
func (s *Sealer) ReplayStore() replay.Store { return s.store }

// Now is the sealer's clock in whole seconds (rounded down).
func (s *Sealer) Now() int64 { return s.clock().Unix() }

// Seal mints a token for state (any value encoding/json writes), bound to
// req's user and target and, when req.Arguments is not nil, to the arguments'
// digest. A json.RawMessage is taken as JSON text.
//
// With a signing key first in the ring the token is signed and the client can
// read the state: never put a secret in it. With an A256GCM key first it is
// encrypted (profile, section 3.6).
//
// Errors (never a refusal): the state is not JSON the profile can carry
// exactly (I-JSON, at most 32 levels), the token would exceed the size cap,
// the arguments are unbindable (pass 64-bit ids as strings), the binding is
// required and req.Arguments is nil for a tool or prompt, or the ring cannot sign.
func (s *Sealer) Seal(state any, req Request) (string, error) {
	k, claims, err := s.prepare(req)
	if err != nil {
		return "", err
	}
	// The state is written once, after the other claims, and checked as it is written.
	payload := token.AppendClaimsBeforeState(make([]byte, 0, 512), claims)
	start := len(payload)
	if text, ok := state.(json.RawMessage); ok {
		payload = append(payload, text...)
		_, err = jsonstrict.Parse(payload[start:], jsonstrict.Options{MaxDepth: token.MaxStateDepth, CheckOnly: true})
	} else {
		// Written as json.Marshal writes it (< > & as \u003c \u003e \u0026: the same JSON values).
		payload, err = jsonstrict.AppendMarshal(payload, state, token.MaxStateDepth)
	}
	// Profile 4, point 1: nothing is minted that a verifier would refuse.
	var refused *jsonstrict.Error
	switch {
	case errors.As(err, &refused):
		return "", fmt.Errorf("mrtrstate: the state cannot be carried exactly: %w", err)
	case err != nil:
		return "", fmt.Errorf("mrtrstate: the state is not JSON: %w", err)
	}
	tok, err := s.finish(k, append(payload, '}'))
	if err == nil {
		metrics.Record(s.metrics, metrics.Seal, "method", req.Target.Kind.Method())
	}
	return tok, err
}

// prepare checks the request and makes every claim but the state.
func (s *Sealer) prepare(req Request) (*keys.Key, *token.Claims, error) {
	if err := req.Check(); err != nil {
		return nil, nil, fmt.Errorf("mrtrstate: %w", err)
	}
	if req.Arguments == nil && s.requireArguments && req.Target.Kind != binding.Resource {
		return nil, nil, errors.New("mrtrstate: this sealer requires the argument binding: pass the request's " +
			`arguments to Seal ("{}" when it has none)`)
	}
	digest, err := req.Digest()
	if err != nil {
		return nil, nil, err
	}
	k, err := s.source.Keyring().SigningKey()
	if err != nil {
		return nil, nil, err
	}
	random := make([]byte, jtiBytes)
	if _, err := io.ReadFull(s.entropy, random); err != nil {
		return nil, nil, fmt.Errorf("mrtrstate: no randomness for the jti: %w", err)
	}
	iat := s.clock().Unix()
	return k, &token.Claims{
		Issuer: s.issuer, Subject: req.User, Audience: req.Aud(), IssuedAt: iat, ExpiresAt: iat + s.ttl,
		ID: base64url.Encode(random), ArgsSHA256: digest,
	}, nil
}

// finish signs or encrypts the claims text, within the size cap.
func (s *Sealer) finish(k *keys.Key, payload []byte) (string, error) {
	size := token.SignedSize(k, len(payload))
	if k.IsEncryption() {
		size = token.EncryptedSize(k, len(payload))
	}
	if size > s.maxTokenBytes {
		return "", fmt.Errorf("mrtrstate: the sealed state would be %d bytes, over the cap of %d; "+
			"keep less in requestState", size, s.maxTokenBytes)
	}
	if k.IsEncryption() {
		return token.Encrypt(k, payload)
	}
	return token.Sign(k, payload)
}

// unknownKeyRefresher is a key source that can look for keys it does not hold
// yet (keys.RemoteJWKS).
type unknownKeyRefresher interface {
	RefreshForUnknownKey(ctx context.Context) bool
}

// OpenOption changes one Open call.
type OpenOption func(*openSettings)

type openSettings struct {
	consume          bool
	requireArguments *bool
}

// Consume redeems the token in the sealer's replay store after every other
// check (step 20), so it opens at most once: replayed the second time,
// store_unavailable when the store cannot answer.
func Consume() OpenOption { return func(o *openSettings) { o.consume = true } }

// RequireArgumentsThisCall overrides the sealer's WithRequireArguments for one call.
func RequireArgumentsThisCall(require bool) OpenOption {
	return func(o *openSettings) { o.requireArguments = &require }
}

// Open verifies token for req (the retry being served) and returns the state
// it carries as JSON text. Every refusal is an *InvalidRequestState with a
// reason code; a configuration mistake (Consume without a store) wraps ErrConfig.
func (s *Sealer) Open(ctx context.Context, tok string, req Request, opts ...OpenOption) (json.RawMessage, error) {
	claims, err := s.OpenClaims(ctx, tok, req, opts...)
	if err != nil {
		return nil, err
	}
	return claims.State, nil
}

// OpenClaims is Open returning every validated claim.
func (s *Sealer) OpenClaims(ctx context.Context, tok string, req Request, opts ...OpenOption) (*token.Claims, error) {
	claims, consumed, err := s.openClaims(ctx, tok, req, opts...)
	if s.metrics != nil {
		method := req.Target.Kind.Method()
		var refused *refusal.InvalidRequestState
		switch {
		case err == nil:
			metrics.Record(s.metrics, metrics.Open, "method", method, "outcome", "accepted")
			if consumed {
				metrics.Record(s.metrics, metrics.Redemption, "method", method)
			}
		case errors.As(err, &refused):
			metrics.Record(s.metrics, metrics.Open, "method", method, "outcome", "refused")
			metrics.Record(s.metrics, metrics.Refusal, "method", method, "reason", string(refused.Reason))
			if refused.Reason == refusal.StoreUnavailable {
				metrics.Record(s.metrics, metrics.StoreOutage, "method", method)
			}
		}
	}
	return claims, err
}

func (s *Sealer) openClaims(ctx context.Context, tok string, req Request, opts ...OpenOption) (*token.Claims, bool, error) {
	var o openSettings
	for _, opt := range opts {
		opt(&o)
	}
	if o.consume && s.store == nil {
		return nil, false, fmt.Errorf("%w: Consume needs a sealer made WithReplayStore", ErrConfig)
	}
	required := s.requireArguments
	if o.requireArguments != nil {
		required = *o.requireArguments
	}
	// Profile 5, steps 1 to 12 (5.1 for the encrypted form):
	claims, err := token.Decode(tok, s.maxTokenBytes, s.source.Keyring())
	if errors.Is(err, refusal.ErrUnknownKey) {
		// A source whose keys change (a remote JWKS) may not hold a key another
		// replica has just started to sign with: it looks once (rate-limited by
		// the source), and the token is decoded again with what it holds then.
		if refresher, ok := s.source.(unknownKeyRefresher); ok && refresher.RefreshForUnknownKey(ctx) {
			claims, err = token.Decode(tok, s.maxTokenBytes, s.source.Keyring())
		}
	}
	if err != nil {
		return nil, false, err
	}
	// Profile 5, steps 13 to 19:
	err = claims.Validate(token.Expect{
		Now: s.clock().Unix(), Leeway: s.leeway, MaxLifetime: s.maxLifetime, Issuer: s.issuer,
		Request: req, RequireArguments: required,
	})
	if err != nil {
		return nil, false, err
	}
	// Profile 5, step 20: single use, last, so a token that fails any other step never
	// costs a store write. The retention runs to exp plus twice the leeway.
	if o.consume {
		first, err := s.store.Redeem(ctx, replay.Key(claims.Issuer, claims.ID), claims.ExpiresAt+2*s.leeway)
		if err != nil {
			return nil, false, refusal.New(refusal.StoreUnavailable, "the replay store gave no answer: "+err.Error())
		}
		if !first {
			return nil, false, refusal.New(refusal.Replayed, "this token has already been redeemed")
		}
	}
	return claims, o.consume, nil
}

// String shows the settings and the keys' ids, never key material.
func (s *Sealer) String() string {
	return fmt.Sprintf("Sealer(issuer=%q, ttl=%d, max_lifetime=%d, leeway=%d, max_token_bytes=%d, require_arguments=%t, keys=%v)",
		s.issuer, s.ttl, s.maxLifetime, s.leeway, s.maxTokenBytes, s.requireArguments, s.source)
}

// GoString is String, so that %#v shows no key material either.
func (s *Sealer) GoString() string { return s.String() }
