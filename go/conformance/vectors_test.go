package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mrtr-state/mrtr-state/go/keys"
)

// vectorsDir is spec/vectors of the repository this module lives in.
var vectorsDir = filepath.Join("..", "..", "spec", "vectors")

func readVectors(t *testing.T, name string, into any) {
	t.Helper()
	if err := readVectorFile(vectorsDir, name, into); err != nil {
		t.Fatal(err)
	}
}

func runTokenVectors(t *testing.T, file, jwks string) {
	var k vectorKeys
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
		check, err := v.check(vector, ring)
		if err != nil {
			t.Errorf("the job failed: %v", err)
			continue
		}
		if !check.OK {
			t.Errorf("%s (%s): got %s, want %s", vector.ID, vector.Description, check.Got, check.Want)
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
	var v argumentVectors
	readVectors(t, "arguments.json", &v)
	if len(v.Vectors) == 0 {
		t.Fatal("arguments.json holds no vectors")
	}
	for _, vector := range v.Vectors {
		if check := vector.check(); !check.OK {
			t.Errorf("%s: got %s, want %s", vector.ID, check.Got, check.Want)
		}
	}
}

func TestEveryInvalidKeyIsRefusedAtLoad(t *testing.T) {
	var v invalidKeyVectors
	readVectors(t, "invalid-keys.json", &v)
	if len(v.Vectors) == 0 {
		t.Fatal("invalid-keys.json holds no vectors")
	}
	rings := 0
	for _, vector := range v.Vectors {
		if vector.JWKS != nil {
			rings++
		}
		// A ring vector is refused for its own rule (D4, one secret for two
		// uses) only: each of its keys loads alone.
		if check := vector.check(); !check.OK {
			t.Errorf("%s: got %s, want %s", vector.ID, check.Got, check.Want)
		}
	}
	if rings == 0 {
		t.Error("invalid-keys.json holds no ring vectors (D4)")
	}
}

func TestEveryValidKeyOfKeysJSONLoads(t *testing.T) {
	var k vectorKeys
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

// vectorCount is the number of vectors CheckVectors runs: every vector of the
// four vector files.
func vectorCount(t *testing.T) int {
	t.Helper()
	total := 0
	for _, name := range []string{"tokens.json", "encrypted.json", "arguments.json", "invalid-keys.json"} {
		var file struct {
			Vectors []json.RawMessage `json:"vectors"`
		}
		readVectors(t, name, &file)
		total += len(file.Vectors)
	}
	return total
}

func TestCheckVectorsPassesEveryVectorAndPrintsOneLinePerVector(t *testing.T) {
	var out bytes.Buffer
	passed, failed, err := CheckVectors(vectorsDir, &out)
	if err != nil {
		t.Fatal(err)
	}
	total := vectorCount(t)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if passed != total || failed != 0 || len(lines) != total+1 {
		t.Fatalf("%d passed, %d failed, %d lines; want %d passed and %d lines", passed, failed, len(lines), total, total+1)
	}
	if last := lines[total]; last != fmt.Sprintf("%d passed, 0 failed", total) {
		t.Errorf("last line %q", last)
	}
	for _, line := range lines[:total] {
		if !strings.HasPrefix(line, "PASS ") {
			t.Errorf("%q is not a PASS line", line)
		}
	}
}

// copyVectors copies the vector files to a temporary directory, each changed
// by edit (which may leave it as it is).
func copyVectors(t *testing.T, edit func(name string, text []byte) []byte) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"keys.json", "tokens.json", "encrypted.json", "arguments.json", "invalid-keys.json"} {
		text, err := os.ReadFile(filepath.Join(vectorsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), edit(name, text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// changeFirstVector rewrites the first vector of a vector file with change.
func changeFirstVector(t *testing.T, text []byte, change func(vector map[string]any)) []byte {
	t.Helper()
	var file map[string]any
	if err := json.Unmarshal(text, &file); err != nil {
		t.Fatal(err)
	}
	change(file["vectors"].([]any)[0].(map[string]any))
	changed, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	return changed
}

func TestCheckVectorsFailsAVectorTheModuleDisagreesWith(t *testing.T) {
	var ids []string
	dir := copyVectors(t, func(name string, text []byte) []byte {
		var change func(vector map[string]any)
		switch name {
		case "tokens.json", "encrypted.json": // a verdict the module does not give
			change = func(v map[string]any) { v["expected"] = map[string]any{"valid": false, "reason": "replayed"} }
		case "arguments.json": // another digest
			change = func(v map[string]any) { v["digest"], v["unbindable"] = "AAAA", false }
		case "invalid-keys.json": // a key that loads
			change = func(v map[string]any) {
				delete(v, "jwks")
				v["jwk"] = map[string]any{"kty": "oct", "kid": "k", "k": "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA"}
			}
		default:
			return text
		}
		return changeFirstVector(t, text, func(v map[string]any) {
			ids = append(ids, v["id"].(string))
			change(v)
		})
	})
	var out bytes.Buffer
	passed, failed, err := CheckVectors(dir, &out)
	if err != nil {
		t.Fatal(err)
	}
	if total := vectorCount(t); failed != len(ids) || passed != total-len(ids) {
		t.Fatalf("%d passed, %d failed; want %d failed (%v)", passed, failed, len(ids), ids)
	}
	for _, id := range ids {
		if !strings.Contains(out.String(), "\nFAIL "+id+": ") && !strings.HasPrefix(out.String(), "FAIL "+id+": ") {
			t.Errorf("no FAIL line for %s", id)
		}
	}
	if !strings.HasSuffix(out.String(), fmt.Sprintf("\n%d passed, %d failed\n", passed, failed)) {
		t.Errorf("no tally at the end:\n%s", out.String())
	}
}

func TestCheckVectorsFailsARingVectorRefusedForAnotherReason(t *testing.T) {
	// A ring whose keys are each refused alone (a weak secret) is refused as a
	// ring too, but not for the rule the ring vectors pin (D4): it fails.
	vector := invalidKeyVector{ID: "weak-ring", JWKS: json.RawMessage(`{"keys":[` +
		`{"kty":"oct","kid":"a","k":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},` +
		`{"kty":"oct","kid":"b","k":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}]}`)}
	if check := vector.check(); check.OK {
		t.Errorf("passed: %+v", check)
	}
	// Two keys that load alone, refused as a ring for sharing a kid: refused,
	// but not for one secret in two uses.
	sameKid := invalidKeyVector{ID: "same-kid", JWKS: json.RawMessage(`{"keys":[` +
		`{"kty":"oct","kid":"a","k":"AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA"},` +
		`{"kty":"oct","kid":"a","k":"IB8eHRwbGhkYFxYVFBMSERAPDg0MCwoJCAcGBQQDAgE"}]}`)}
	if check := sameKid.check(); check.OK || !strings.HasPrefix(check.Got, "refused: ") {
		t.Errorf("a ring refused for a shared kid passed, or was not refused: %+v", check)
	}
	both := invalidKeyVector{ID: "both", JWK: json.RawMessage(`{}`), JWKS: json.RawMessage(`{"keys":[]}`)}
	if check := both.check(); check.OK {
		t.Errorf("a vector with both jwk and jwks passed: %+v", check)
	}
}

func TestCheckVectorsSaysWhichFileItCannotRead(t *testing.T) {
	dir := copyVectors(t, func(name string, text []byte) []byte {
		if name == "arguments.json" {
			return []byte("{")
		}
		return text
	})
	var out bytes.Buffer
	if _, _, err := CheckVectors(dir, &out); err == nil || !strings.HasPrefix(err.Error(), "arguments.json: ") {
		t.Errorf("got %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q before every file was read", out.String())
	}
}

func TestVerdictsWithTheSameStateInAnotherSpellingAreTheSame(t *testing.T) {
	valid := func(state string) Verdict { return Verdict{Valid: true, State: json.RawMessage(state)} }
	if !sameVerdict(valid(`{"n":1.0,"s":"\u0041"}`), valid(`{"s":"A","n":1}`)) {
		t.Error("1.0 and 1, or an escaped letter, made two states")
	}
	if sameVerdict(valid(`{"n":1}`), valid(`{"n":2}`)) {
		t.Error("two states compared the same")
	}
	if sameVerdict(Verdict{Reason: "expired"}, Verdict{Reason: "wrong_user"}) || sameVerdict(valid(`1`), Verdict{Reason: "expired"}) {
		t.Error("two verdicts compared the same")
	}
}
