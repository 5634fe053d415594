package main

// The verify and mint jobs of tests/interop/harness.py, each one call of the
// mrtr-state Go module: a verify job is the module's conformance.VerifyJob (a
// mrtrstate.New(ring, issuer, options).Open), a mint job is Seal with the job's
// key, clock, lifetime and jti.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/conformance"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/token/base64url"
)

// verifyJob opens a verify job's token: conformance.VerifyJob.Verify with the
// job's keys as the ring.
func verifyJob(raw json.RawMessage) (conformance.Verdict, error) {
	var job struct {
		Keys json.RawMessage `json:"keys"`
		conformance.VerifyJob
	}
	if err := strictUnmarshal(bytes.NewReader(raw), &job); err != nil {
		return conformance.Verdict{}, err
	}
	ring, err := keys.ParseJWKS(job.Keys)
	if err != nil {
		// No verifier holds such a ring: an error, not a verdict (docs/conformance.md).
		return conformance.Verdict{}, fmt.Errorf("the verifier's ring does not load: %w", err)
	}
	return job.VerifyJob.Verify(ring)
}

// mintJob seals a mint job's state with its key, clock, lifetime and jti.
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
		conformance.TargetMembers
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
	t, err := job.Target()
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
