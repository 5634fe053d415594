package conformance

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/keys"
)

// vectorsDir is spec/vectors of the repository this module lives in.
var vectorsDir = filepath.Join("..", "..", "..", "spec", "vectors")

func readVectors(t *testing.T, name string, into any) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(vectorsDir, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := json.Unmarshal(text, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

type keysFile struct {
	HS256                 json.RawMessage `json:"hs256"`
	EdDSA                 json.RawMessage `json:"eddsa"`
	EdDSAPublic           json.RawMessage `json:"eddsa_public"`
	Unknown               json.RawMessage `json:"unknown"`
	A256GCM               json.RawMessage `json:"a256gcm"`
	VerifierJWKS          json.RawMessage `json:"verifier_jwks"`
	EncryptedVerifierJWKS json.RawMessage `json:"encrypted_verifier_jwks"`
}

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
		Expected    Verdict `json:"expected"`
		Keyless     *bool   `json:"keyless"`
		Reencoding  *bool   `json:"reencoding"`
		VerifyJob
	} `json:"vectors"`
}

// canonicalState compares states as RFC 8785 text, so 1.0 and 1 are one number.
func canonicalState(t *testing.T, state json.RawMessage) string {
	t.Helper()
	text, err := binding.Canonicalize(append(append([]byte(`{"s":`), state...), '}'))
	if err != nil {
		t.Fatalf("a state that cannot be canonicalized: %v", err)
	}
	return string(text)
}

func runTokenVectors(t *testing.T, file, jwks string) {
	var k keysFile
	readVectors(t, "keys.json", &k)
	var v tokenVectors
	readVectors(t, file, &v)
	source := map[string]json.RawMessage{"verifier_jwks": k.VerifierJWKS, "encrypted_verifier_jwks": k.EncryptedVerifierJWKS}[jwks]
	ring, err := keys.ParseJWKS(source)
	if err != nil {
		t.Fatalf("%s: %v", jwks, err)
	}
	if len(v.Vectors) == 0 {
		t.Fatalf("%s holds no vectors", file)
	}
	for _, vector := range v.Vectors {
		job := vector.VerifyJob
		if job.Issuer == "" {
			job.Issuer = v.Defaults.Issuer
		}
		if job.MaxLifetime == nil {
			job.MaxLifetime = &v.Defaults.MaxLifetime
		}
		if job.Leeway == nil {
			job.Leeway = &v.Defaults.Leeway
		}
		if job.MaxTokenBytes == nil {
			job.MaxTokenBytes = &v.Defaults.MaxTokenBytes
		}
		if job.RequireArguments == nil {
			job.RequireArguments = &v.Defaults.RequireArguments
		}
		got, err := job.Verify(ring)
		if err != nil {
			t.Errorf("%s: the job failed: %v", vector.ID, err)
			continue
		}
		want := vector.Expected
		if got.Valid != want.Valid || got.Reason != want.Reason {
			t.Errorf("%s (%s): got valid=%t reason=%q, want valid=%t reason=%q",
				vector.ID, vector.Description, got.Valid, got.Reason, want.Valid, want.Reason)
			continue
		}
		if want.Valid && canonicalState(t, got.State) != canonicalState(t, want.State) {
			t.Errorf("%s: state %s, want %s", vector.ID, got.State, want.State)
		}
	}
	t.Logf("%s: %d vectors", file, len(v.Vectors))
}

func TestEveryTokenVectorGetsTheExpectedVerdict(t *testing.T) {
	runTokenVectors(t, "tokens.json", "verifier_jwks")
}

func TestEveryEncryptedVectorGetsTheExpectedVerdict(t *testing.T) {
	runTokenVectors(t, "encrypted.json", "encrypted_verifier_jwks")
}

func TestEveryArgumentVectorHasTheExpectedDigestOrIsUnbindable(t *testing.T) {
	var v struct {
		Vectors []struct {
			ID         string          `json:"id"`
			Arguments  json.RawMessage `json:"arguments"`
			Canonical  string          `json:"canonical"`
			Digest     string          `json:"digest"`
			Unbindable bool            `json:"unbindable"`
		} `json:"vectors"`
	}
	readVectors(t, "arguments.json", &v)
	if len(v.Vectors) == 0 {
		t.Fatal("arguments.json holds no vectors")
	}
	for _, vector := range v.Vectors {
		canonical, err := binding.Canonicalize(vector.Arguments)
		digest, digestErr := binding.Digest(vector.Arguments)
		if vector.Unbindable {
			if err == nil || digestErr == nil {
				t.Errorf("%s: bound to %s; the vector is unbindable", vector.ID, digest)
			}
			continue
		}
		if err != nil || string(canonical) != vector.Canonical || digest != vector.Digest {
			t.Errorf("%s: canonical %s digest %s (%v), want %s %s", vector.ID, canonical, digest, err, vector.Canonical, vector.Digest)
		}
	}
}

func TestEveryInvalidKeyIsRefusedAtLoad(t *testing.T) {
	var v struct {
		Vectors []struct {
			ID   string          `json:"id"`
			JWK  json.RawMessage `json:"jwk"`
			JWKS json.RawMessage `json:"jwks"`
		} `json:"vectors"`
	}
	readVectors(t, "invalid-keys.json", &v)
	if len(v.Vectors) == 0 {
		t.Fatal("invalid-keys.json holds no vectors")
	}
	rings := 0
	for _, vector := range v.Vectors {
		if (vector.JWK == nil) == (vector.JWKS == nil) {
			t.Errorf("%s: a vector carries exactly one of jwk and jwks", vector.ID)
			continue
		}
		if vector.JWKS == nil {
			if k, err := keys.ParseJWK(vector.JWK); err == nil {
				t.Errorf("%s: loaded as %v; the key must be refused", vector.ID, k)
			}
			continue
		}
		rings++
		// A ring vector: each key loads alone, and only the ring's own rule
		// (D4, one secret for two uses) refuses it, so a refusal for any
		// other reason (a JWKS misread as one JWK) does not count.
		var ring struct {
			Keys []json.RawMessage `json:"keys"`
		}
		if err := json.Unmarshal(vector.JWKS, &ring); err != nil || len(ring.Keys) < 2 {
			t.Errorf("%s: not a ring of two keys or more: %v", vector.ID, err)
			continue
		}
		for i, jwk := range ring.Keys {
			if _, err := keys.ParseJWK(jwk); err != nil {
				t.Errorf("%s: key %d is refused alone (%v); the vector is about the ring", vector.ID, i, err)
			}
		}
		r, err := keys.ParseJWKS(vector.JWKS)
		if err == nil {
			t.Errorf("%s: loaded as %v; the ring must be refused", vector.ID, r)
		} else if !strings.Contains(err.Error(), "same secret") {
			t.Errorf("%s: refused for another reason: %v", vector.ID, err)
		}
		if LoadKey(nil, vector.JWKS) == nil {
			t.Errorf("%s: load_key loaded the ring", vector.ID)
		}
	}
	if rings == 0 {
		t.Error("invalid-keys.json holds no ring vectors (D4)")
	}
}

func TestEveryValidKeyOfKeysJSONLoads(t *testing.T) {
	var k keysFile
	readVectors(t, "keys.json", &k)
	for name, jwk := range map[string]json.RawMessage{"hs256": k.HS256, "eddsa": k.EdDSA, "eddsa_public": k.EdDSAPublic, "unknown": k.Unknown, "a256gcm": k.A256GCM} {
		if _, err := keys.ParseJWK(jwk); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, jwks := range map[string]json.RawMessage{"verifier_jwks": k.VerifierJWKS, "encrypted_verifier_jwks": k.EncryptedVerifierJWKS} {
		if _, err := keys.ParseJWKS(jwks); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := LoadKey(nil, jwks); err != nil {
			t.Errorf("load_key %s: %v", name, err)
		}
	}
}

func TestTheServerAnswersEachOperationWithTheRequestID(t *testing.T) {
	var k keysFile
	readVectors(t, "keys.json", &k)
	var jwk bytes.Buffer
	if err := json.Compact(&jwk, k.HS256); err != nil {
		t.Fatal(err)
	}
	var ring bytes.Buffer
	if err := json.Compact(&ring, k.VerifierJWKS); err != nil {
		t.Fatal(err)
	}
	shared := `{"keys":[{"kty":"oct","alg":"A256GCM","kid":"e","k":"AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA"},` +
		`{"kty":"oct","kid":"s","k":"AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA"}]}`
	in := `{"id":"a","op":"digest","arguments":{}}` + "\n" +
		`{"id":"b","op":"digest","arguments":[1]}` + "\n" +
		`{"id":"c","op":"load_key","jwk":` + jwk.String() + `}` + "\n" +
		`{"id":"d","op":"sign"}` + "\n" + "not json\n" +
		`{"id":"e","op":"digest"}` + "\n" +
		`{"id":"f","op":"digest","arguments":null}` + "\n" +
		`{"id":"g","op":"load_key","jwks":` + ring.String() + `}` + "\n" +
		`{"id":"h","op":"load_key","jwks":` + shared + `}` + "\n" +
		`{"id":"i","op":"verify","keys":` + shared + `,"token":"x","issuer":"i","user":"u","tool":"t","now":1}` + "\n"
	var out bytes.Buffer
	var s Server
	if err := s.Serve(bytes.NewReader([]byte(in)), &out); err != nil {
		t.Fatal(err)
	}
	want := `{"digest":"RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o","id":"a"}` + "\n" +
		`{"id":"b","unbindable":true}` + "\n" +
		`{"id":"c","loaded":true}` + "\n" +
		`{"id":"d","unsupported":true}` + "\n" +
		`{"error":"a request must be one JSON object per line","id":null}` + "\n" +
		`{"digest":"RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o","id":"e"}` + "\n" +
		`{"id":"f","unbindable":true}` + "\n" +
		`{"id":"g","loaded":true}` + "\n" +
		`{"id":"h","loaded":false}` + "\n"
	prefix := `{"error":"the verifier's ring does not load: `
	got, last, _ := strings.Cut(out.String(), "\n"+prefix)
	if got+"\n" != want || !strings.HasSuffix(last, `","id":"i"}`+"\n") {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
