package main

// The verify and mint jobs of tests/interop/harness.py, each one call of the
// mrtr-state Go module: a verify job is mrtrstate.New(ring, issuer, options).Open,
// a mint job is Seal with the job's key, clock, lifetime and jti.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/token/base64url"
)

// target names what a request addresses; exactly one member is set.
type target struct {
	Tool     *string `json:"tool"`
	Prompt   *string `json:"prompt"`
	Resource *string `json:"resource"`
}

func (t target) target() (binding.Target, error) {
	var found []binding.Target
	for _, c := range []struct {
		kind binding.Kind
		name *string
	}{{binding.Tool, t.Tool}, {binding.Prompt, t.Prompt}, {binding.Resource, t.Resource}} {
		if c.name != nil {
			found = append(found, binding.Target{Kind: c.kind, Name: *c.name})
		}
	}
	if len(found) != 1 || found[0].Name == "" {
		return binding.Target{}, errors.New(`give exactly one non-empty "tool", "prompt" or "resource"`)
	}
	return found[0], nil
}

// verifyRequest is a verify job without its keys (the vectors share one key set).
type verifyRequest struct {
	Token            json.RawMessage `json:"token"`
	Issuer           string          `json:"issuer"`
	User             string          `json:"user"`
	Arguments        json.RawMessage `json:"arguments"`
	Now              *int64          `json:"now"`
	MaxLifetime      *int64          `json:"max_lifetime"`
	Leeway           *int64          `json:"leeway"`
	MaxTokenBytes    *int64          `json:"max_token_bytes"`
	RequireArguments *bool           `json:"require_arguments"`
	target
}

type verdict struct {
	Valid  bool            `json:"valid"`
	State  json.RawMessage `json:"state,omitempty"`
	Reason string          `json:"reason,omitempty"`
}

func verifyJob(raw json.RawMessage) (verdict, error) {
	var job struct {
		Keys json.RawMessage `json:"keys"`
		verifyRequest
	}
	if err := strictUnmarshal(bytes.NewReader(raw), &job); err != nil {
		return verdict{}, err
	}
	ring, err := keys.ParseJWKS(job.Keys)
	if err != nil {
		// No verifier holds such a ring: an error, not a verdict (docs/conformance.md).
		return verdict{}, fmt.Errorf("the verifier's ring does not load: %w", err)
	}
	return job.verifyRequest.run(ring)
}

// run opens the request's token with a sealer made of its settings (the
// profile's defaults where it has none).
func (job verifyRequest) run(ring *keys.Keyring) (verdict, error) {
	t, err := job.target.target()
	if err != nil {
		return verdict{}, err
	}
	if job.Token == nil || job.User == "" || job.Now == nil {
		return verdict{}, errors.New(`"token", "user" (non-empty) and "now" are required`)
	}
	now := time.Unix(*job.Now, 0)
	opts := []mrtrstate.Option{mrtrstate.WithClock(func() time.Time { return now })}
	if job.MaxLifetime != nil {
		opts = append(opts, mrtrstate.WithMaxLifetime(time.Duration(*job.MaxLifetime)*time.Second))
	}
	if job.Leeway != nil {
		opts = append(opts, mrtrstate.WithLeeway(time.Duration(*job.Leeway)*time.Second))
	}
	if job.MaxTokenBytes != nil {
		opts = append(opts, mrtrstate.WithMaxTokenBytes(int(*job.MaxTokenBytes)))
	}
	if job.RequireArguments != nil {
		opts = append(opts, mrtrstate.WithRequireArguments(*job.RequireArguments))
	}
	sealer, err := mrtrstate.New(ring, job.Issuer, opts...)
	if err != nil {
		return verdict{}, err
	}
	arguments := job.Arguments
	if arguments == nil {
		arguments = json.RawMessage("{}") // absent arguments are {}; present null stays unbindable (profile 3.4)
	}
	var tok string
	if job.Token[0] != '"' || json.Unmarshal(job.Token, &tok) != nil {
		return verdict{Reason: string(mrtrstate.Malformed)}, nil // step 1: a token that is not a string
	}
	state, err := sealer.Open(context.Background(), tok, mrtrstate.Request{User: job.User, Target: t, Arguments: arguments})
	var refused *mrtrstate.InvalidRequestState
	if errors.As(err, &refused) {
		return verdict{Reason: string(refused.Reason)}, nil
	}
	if err != nil {
		return verdict{}, err
	}
	return verdict{Valid: true, State: state}, nil
}

func mintJob(raw json.RawMessage) (map[string]string, error) {
	var job struct {
		Key       json.RawMessage `json:"key"`
		Issuer    string          `json:"issuer"`
		User      string          `json:"user"`
		Arguments json.RawMessage `json:"arguments"`
		Now       *int64          `json:"now"`
		TTL       *int64          `json:"ttl"`
		State     json.RawMessage `json:"state"`
		JTI       *string         `json:"jti"`
		target
	}
	if err := strictUnmarshal(bytes.NewReader(raw), &job); err != nil {
		return nil, err
	}
	k, err := keys.ParseJWK(job.Key)
	if err != nil {
		return nil, err
	}
	ring, err := keys.NewKeyring(k)
	if err != nil {
		return nil, err
	}
	t, err := job.target.target()
	if err != nil {
		return nil, err
	}
	if job.Now == nil || *job.Now < 0 || job.TTL == nil || *job.TTL < 1 || job.State == nil {
		return nil, errors.New(`"issuer", "user" (non-empty), "now" (>= 0), "ttl" (>= 1) and "state" are required`)
	}
	now := time.Unix(*job.Now, 0)
	ttl := time.Duration(*job.TTL) * time.Second
	opts := []mrtrstate.Option{
		mrtrstate.WithClock(func() time.Time { return now }),
		mrtrstate.WithTTL(ttl), mrtrstate.WithMaxLifetime(max(ttl, mrtrstate.DefaultMaxLifetime*time.Second)),
	}
	if job.JTI != nil {
		// The sealer writes its 16 random bytes as the jti: a fixed jti is those bytes.
		random, err := base64url.Decode(*job.JTI)
		if err != nil || len(random) != 16 {
			return nil, errors.New(`"jti" must be 22 base64url characters (16 bytes), canonical`)
		}
		opts = append(opts, mrtrstate.WithEntropy(bytes.NewReader(random)))
	}
	sealer, err := mrtrstate.New(ring, job.Issuer, opts...)
	if err != nil {
		return nil, err
	}
	token, err := sealer.Seal(job.State, mrtrstate.Request{User: job.User, Target: t, Arguments: job.Arguments})
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return map[string]string{"token": token}, nil
}
