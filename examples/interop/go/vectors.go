package main

// The vectors command: every vector of spec/vectors (profile, section 12) through
// the same code paths as verify jobs, every argument vector through RFC 8785 (or
// reported unbindable), and every invalid key through the key loader, which must
// refuse it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/keys"
)

// vectorsFailed is the error when at least one vector failed (exit status 1).
type vectorsFailed struct{ failed int }

func (e vectorsFailed) Error() string { return fmt.Sprintf("%d vectors failed", e.failed) }

func checkVectors(dir string, out io.Writer) error {
	var keyFile struct {
		VerifierJWKS          json.RawMessage `json:"verifier_jwks"`
		EncryptedVerifierJWKS json.RawMessage `json:"encrypted_verifier_jwks"`
	}
	var tokens, encrypted tokenVectors
	var arguments struct {
		Vectors []struct {
			ID         string          `json:"id"`
			Arguments  json.RawMessage `json:"arguments"`
			Canonical  string          `json:"canonical"`
			Digest     string          `json:"digest"`
			Unbindable bool            `json:"unbindable"`
		} `json:"vectors"`
	}
	var invalidKeys struct {
		Vectors []struct {
			ID   string          `json:"id"`
			JWK  json.RawMessage `json:"jwk"`
			JWKS json.RawMessage `json:"jwks"`
		} `json:"vectors"`
	}
	for name, into := range map[string]any{
		"keys.json": &keyFile, "tokens.json": &tokens, "encrypted.json": &encrypted, "arguments.json": &arguments,
		"invalid-keys.json": &invalidKeys,
	} {
		text, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			err = json.Unmarshal(text, into)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	ring, err := keys.ParseJWKS(keyFile.VerifierJWKS)
	if err != nil {
		return fmt.Errorf("keys.json verifier_jwks: %w", err)
	}
	encryptedRing, err := keys.ParseJWKS(keyFile.EncryptedVerifierJWKS)
	if err != nil {
		return fmt.Errorf("keys.json encrypted_verifier_jwks: %w", err)
	}
	passed, failed := 0, 0
	report := func(ok bool, id, got, want string) {
		if ok {
			passed++
			fmt.Fprintf(out, "PASS %s: %s\n", id, got)
		} else {
			failed++
			fmt.Fprintf(out, "FAIL %s: %s, expected %s\n", id, got, want)
		}
	}
	// tokens.json against verifier_jwks; encrypted.json (the encrypted form) against
	// encrypted_verifier_jwks.
	if err := tokens.check(ring, report); err != nil {
		return err
	}
	if err := encrypted.check(encryptedRing, report); err != nil {
		return err
	}
	for _, vector := range arguments.Vectors {
		canonical, err := binding.Canonicalize(vector.Arguments)
		digest, _ := binding.Digest(vector.Arguments)
		got := fmt.Sprintf("canonical %s, digest %s", canonical, digest)
		if err != nil {
			got = "unbindable: " + err.Error()
		}
		want := fmt.Sprintf("canonical %s, digest %s", vector.Canonical, vector.Digest)
		ok := err == nil && string(canonical) == vector.Canonical && digest == vector.Digest
		if vector.Unbindable {
			want, ok = "unbindable", err != nil
		}
		report(ok, vector.ID, got, want)
	}
	// Every invalid key or ring must be refused when it is loaded: a vector
	// carrying a ring under "jwks" (D4, one secret for two uses) is loaded as a
	// ring, and must be refused for that rule, not for a misread shape.
	for _, vector := range invalidKeys.Vectors {
		if (vector.JWK == nil) == (vector.JWKS == nil) {
			report(false, vector.ID, "a vector without exactly one of jwk and jwks", "refused")
			continue
		}
		err := loadKey(vector.JWK, vector.JWKS)
		got := "loaded"
		if err != nil {
			got = "refused: " + err.Error()
		}
		ok := err != nil
		want := "refused"
		if vector.JWKS != nil {
			want = "refused: keys holding the same secret"
			ok = ok && strings.Contains(err.Error(), "same secret")
		}
		report(ok, vector.ID, got, want)
	}
	fmt.Fprintf(out, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return vectorsFailed{failed}
	}
	return nil
}

// tokenVectors is tokens.json or encrypted.json (profile, sections 12.2 and 12.5).
type tokenVectors struct {
	Defaults struct {
		Issuer           string `json:"issuer"`
		MaxLifetime      int64  `json:"max_lifetime"`
		Leeway           int64  `json:"leeway"`
		MaxTokenBytes    int64  `json:"max_token_bytes"`
		RequireArguments bool   `json:"require_arguments"`
	} `json:"defaults"`
	Vectors []struct {
		ID          string  `json:"id"`
		Description string  `json:"description"`
		Expected    verdict `json:"expected"`
		verifyRequest
	} `json:"vectors"`
}

// check verifies every vector with ring and the file's defaults, and reports each.
func (tokens *tokenVectors) check(ring *keys.Keyring, report func(ok bool, id, got, want string)) error {
	for _, vector := range tokens.Vectors {
		job := vector.verifyRequest
		if job.Issuer == "" {
			job.Issuer = tokens.Defaults.Issuer
		}
		if job.MaxLifetime == nil {
			job.MaxLifetime = &tokens.Defaults.MaxLifetime
		}
		if job.Leeway == nil {
			job.Leeway = &tokens.Defaults.Leeway
		}
		if job.MaxTokenBytes == nil {
			job.MaxTokenBytes = &tokens.Defaults.MaxTokenBytes
		}
		if job.RequireArguments == nil {
			job.RequireArguments = &tokens.Defaults.RequireArguments
		}
		got, err := job.run(ring)
		if err != nil {
			return fmt.Errorf("vector %s: %w", vector.ID, err)
		}
		report(sameVerdict(got, vector.Expected), vector.ID, describe(got), describe(vector.Expected))
	}
	return nil
}

// sameVerdict compares verdicts; states are equal when their RFC 8785 forms are
// (so 1.0 and 1 are the same number, as in every JSON reader). The module's
// canonicalizer takes an object, so each state is wrapped in one.
func sameVerdict(got, want verdict) bool {
	if got.Valid != want.Valid || got.Reason != want.Reason {
		return false
	}
	if !got.Valid {
		return true
	}
	a, errA := binding.Canonicalize(append(append([]byte(`{"s":`), got.State...), '}'))
	b, errB := binding.Canonicalize(append(append([]byte(`{"s":`), want.State...), '}'))
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

func describe(v verdict) string {
	if v.Valid {
		return "valid"
	}
	return "refused " + v.Reason
}
