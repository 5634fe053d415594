package conformance

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

// CheckVectors runs every vector of the vector files in dir (spec/vectors,
// profile section 12) through this module: each token of tokens.json and
// encrypted.json through VerifyJob.Verify with the file's defaults, each
// argument vector through binding.Canonicalize and binding.Digest (or found
// unbindable), and each invalid key or ring through LoadKey, which must refuse
// it. It writes one line per vector to out ("PASS id: ..." or "FAIL id: ...,
// expected ...") and then "N passed, M failed", and returns the two counts. An
// error means a file could not be read or a job could not be run, not that a
// vector failed.
func CheckVectors(dir string, out io.Writer) (passed, failed int, err error) {
	var keyFile vectorKeys
	var tokens, encrypted tokenVectors
	var arguments argumentVectors
	var invalidKeys invalidKeyVectors
	for _, file := range []struct {
		name string
		into any
	}{
		{"keys.json", &keyFile}, {"tokens.json", &tokens}, {"encrypted.json", &encrypted},
		{"arguments.json", &arguments}, {"invalid-keys.json", &invalidKeys},
	} {
		if err := readVectorFile(dir, file.name, file.into); err != nil {
			return 0, 0, err
		}
	}
	// tokens.json against verifier_jwks; encrypted.json (the encrypted form)
	// against encrypted_verifier_jwks.
	var checks []vectorCheck
	for _, file := range []struct {
		tokens *tokenVectors
		ring   json.RawMessage
		name   string
	}{
		{&tokens, keyFile.VerifierJWKS, "verifier_jwks"},
		{&encrypted, keyFile.EncryptedVerifierJWKS, "encrypted_verifier_jwks"},
	} {
		ring, err := keys.ParseJWKS(file.ring)
		if err != nil {
			return 0, 0, fmt.Errorf("keys.json %s: %w", file.name, err)
		}
		for _, vector := range file.tokens.Vectors {
			check, err := file.tokens.check(vector, ring)
			if err != nil {
				return 0, 0, err
			}
			checks = append(checks, check)
		}
	}
	for _, vector := range arguments.Vectors {
		checks = append(checks, vector.check())
	}
	for _, vector := range invalidKeys.Vectors {
		checks = append(checks, vector.check())
	}
	for _, check := range checks {
		if check.OK {
			passed++
			fmt.Fprintf(out, "PASS %s: %s\n", check.ID, check.Got)
		} else {
			failed++
			fmt.Fprintf(out, "FAIL %s: %s, expected %s\n", check.ID, check.Got, check.Want)
		}
	}
	fmt.Fprintf(out, "%d passed, %d failed\n", passed, failed)
	return passed, failed, nil
}

// vectorCheck is the outcome of one vector: what the module gave, what the
// vector expects, and whether they agree.
type vectorCheck struct {
	ID, Got, Want string
	OK            bool
}

// readVectorFile reads the vector file name of dir into into.
func readVectorFile(dir, name string, into any) error {
	text, err := os.ReadFile(filepath.Join(dir, name))
	if err == nil {
		err = json.Unmarshal(text, into)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// vectorKeys is keys.json: the vectors' keys and the verifiers' rings.
type vectorKeys struct {
	HS256                 json.RawMessage `json:"hs256"`
	EdDSA                 json.RawMessage `json:"eddsa"`
	EdDSAPublic           json.RawMessage `json:"eddsa_public"`
	Unknown               json.RawMessage `json:"unknown"`
	A256GCM               json.RawMessage `json:"a256gcm"`
	VerifierJWKS          json.RawMessage `json:"verifier_jwks"`
	EncryptedVerifierJWKS json.RawMessage `json:"encrypted_verifier_jwks"`
}

// tokenVectors is tokens.json or encrypted.json (profile, sections 12.2 and
// 12.5): verify jobs, and the settings a job takes when it sets none.
type tokenVectors struct {
	Defaults struct {
		Issuer           string `json:"issuer"`
		MaxLifetime      int64  `json:"max_lifetime"`
		Leeway           int64  `json:"leeway"`
		MaxTokenBytes    int64  `json:"max_token_bytes"`
		RequireArguments bool   `json:"require_arguments"`
	} `json:"defaults"`
	Vectors []tokenVector `json:"vectors"`
}

// tokenVector is one token vector: its verify job and the verdict it expects.
type tokenVector struct {
	ID          string  `json:"id"`
	Description string  `json:"description"`
	Expected    Verdict `json:"expected"`
	VerifyJob
}

// job is the vector's verify job with the file's defaults where it sets none.
func (f *tokenVectors) job(vector tokenVector) VerifyJob {
	job := vector.VerifyJob
	if job.Issuer == "" {
		job.Issuer = f.Defaults.Issuer
	}
	if job.MaxLifetime == nil {
		job.MaxLifetime = &f.Defaults.MaxLifetime
	}
	if job.Leeway == nil {
		job.Leeway = &f.Defaults.Leeway
	}
	if job.MaxTokenBytes == nil {
		job.MaxTokenBytes = &f.Defaults.MaxTokenBytes
	}
	if job.RequireArguments == nil {
		job.RequireArguments = &f.Defaults.RequireArguments
	}
	return job
}

// check verifies the vector's token with ring; an error means its job could
// not be run.
func (f *tokenVectors) check(vector tokenVector, ring *keys.Keyring) (vectorCheck, error) {
	job := f.job(vector)
	got, err := job.Verify(ring)
	if err != nil {
		return vectorCheck{}, fmt.Errorf("vector %s: %w", vector.ID, err)
	}
	return vectorCheck{ID: vector.ID, Got: got.describe(), Want: vector.Expected.describe(), OK: sameVerdict(got, vector.Expected)}, nil
}

// sameVerdict compares verdicts; states are equal when their RFC 8785 forms
// are (so 1.0 and 1 are the same number, as in every JSON reader). The
// module's canonicalizer takes an object, so each state is wrapped in one.
func sameVerdict(got, want Verdict) bool {
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

// describe is the verdict in a few words: "valid" or "refused <reason>".
func (v Verdict) describe() string {
	if v.Valid {
		return "valid"
	}
	return "refused " + v.Reason
}

// argumentVectors is arguments.json (profile, section 12.3).
type argumentVectors struct {
	Vectors []argumentVector `json:"vectors"`
}

// argumentVector is one arguments value, its RFC 8785 form and digest, or the
// mark that no digest binds it.
type argumentVector struct {
	ID         string          `json:"id"`
	Arguments  json.RawMessage `json:"arguments"`
	Canonical  string          `json:"canonical"`
	Digest     string          `json:"digest"`
	Unbindable bool            `json:"unbindable"`
	// ArgumentsText, when present, is the arguments as a request's JSON text
	// (a member name repeated, which no JSON value writes): it is what is
	// read, and the last member of a name wins (profile 3.4 and 12.3).
	ArgumentsText *string `json:"arguments_text"`
}

// check canonicalizes and digests the vector's arguments: both must agree
// with the vector, or both must fail when it is unbindable.
func (vector argumentVector) check() vectorCheck {
	arguments := vector.Arguments
	if vector.ArgumentsText != nil {
		arguments = json.RawMessage(*vector.ArgumentsText)
	}
	canonical, err := binding.Canonicalize(arguments)
	digest, digestErr := binding.Digest(arguments)
	got := fmt.Sprintf("canonical %s, digest %s", canonical, digest)
	if err != nil {
		got = "unbindable: " + err.Error()
	} else if digestErr != nil {
		got = "unbindable: " + digestErr.Error()
	}
	if vector.Unbindable {
		return vectorCheck{ID: vector.ID, Got: got, Want: "unbindable", OK: err != nil && digestErr != nil}
	}
	want := fmt.Sprintf("canonical %s, digest %s", vector.Canonical, vector.Digest)
	ok := err == nil && digestErr == nil && string(canonical) == vector.Canonical && digest == vector.Digest
	return vectorCheck{ID: vector.ID, Got: got, Want: want, OK: ok}
}

// invalidKeyVectors is invalid-keys.json (profile, section 7).
type invalidKeyVectors struct {
	Vectors []invalidKeyVector `json:"vectors"`
}

// invalidKeyVector is one key (jwk) or one ring (jwks) that must be refused
// when it is loaded.
type invalidKeyVector struct {
	ID   string          `json:"id"`
	JWK  json.RawMessage `json:"jwk"`
	JWKS json.RawMessage `json:"jwks"`
}

// check loads the vector's key or ring, which must be refused. A ring vector
// (D4, one secret for two uses) must be refused for that rule and not for a
// misread shape: each of its keys loads alone, and the ring is refused for
// keys holding the same secret.
func (vector invalidKeyVector) check() vectorCheck {
	if (vector.JWK == nil) == (vector.JWKS == nil) {
		return vectorCheck{ID: vector.ID, Got: "a vector without exactly one of jwk and jwks", Want: "refused"}
	}
	err := LoadKey(vector.JWK, vector.JWKS)
	got := "loaded"
	if err != nil {
		got = "refused: " + err.Error()
	}
	if vector.JWK != nil {
		return vectorCheck{ID: vector.ID, Got: got, Want: "refused", OK: err != nil}
	}
	var ring struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if jsonErr := json.Unmarshal(vector.JWKS, &ring); jsonErr == nil && ring.Keys != nil && len(ring.Keys) == 0 {
		// Profile 7.3 (issue 32, D1): a ring holds at least one key.
		want := "refused: a ring with no key"
		return vectorCheck{ID: vector.ID, Got: got, Want: want, OK: err != nil && strings.Contains(err.Error(), "at least one key")}
	}
	want := "refused: keys holding the same secret"
	if jsonErr := json.Unmarshal(vector.JWKS, &ring); jsonErr != nil || len(ring.Keys) < 2 {
		return vectorCheck{ID: vector.ID, Got: "not a ring of two keys or more", Want: want}
	}
	for i, jwk := range ring.Keys {
		if _, keyErr := keys.ParseJWK(jwk); keyErr != nil {
			got = fmt.Sprintf("key %d refused alone (%v); the vector is about the ring", i, keyErr)
			return vectorCheck{ID: vector.ID, Got: got, Want: want}
		}
	}
	return vectorCheck{ID: vector.ID, Got: got, Want: want, OK: err != nil && strings.Contains(err.Error(), "same secret")}
}
