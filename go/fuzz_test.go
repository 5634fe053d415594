package mrtrstate_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/token"
)

// vectorTokens reads the tokens of both vector files and the ring that opens both forms.
func vectorTokens(f *testing.F) ([]string, *keys.Keyring) {
	dir := filepath.Join("..", "spec", "vectors")
	var k struct {
		EncryptedVerifierJWKS json.RawMessage `json:"encrypted_verifier_jwks"`
	}
	text, err := os.ReadFile(filepath.Join(dir, "keys.json"))
	if err == nil {
		err = json.Unmarshal(text, &k)
	}
	if err != nil {
		f.Fatal(err)
	}
	ring, err := keys.ParseJWKS(k.EncryptedVerifierJWKS)
	if err != nil {
		f.Fatal(err)
	}
	var tokens []string
	for _, name := range []string{"tokens.json", "encrypted.json"} {
		var v struct {
			Vectors []struct {
				Token json.RawMessage `json:"token"`
			} `json:"vectors"`
		}
		text, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			err = json.Unmarshal(text, &v)
		}
		if err != nil {
			f.Fatal(err)
		}
		for _, vector := range v.Vectors {
			var s string
			if json.Unmarshal(vector.Token, &s) == nil {
				tokens = append(tokens, s)
			}
		}
	}
	return tokens, ring
}

// FuzzOpen feeds the open path (steps 1 to 12) mutations of every vector token.
// Whatever the input, the answer is a claim set or a refusal with a reason code,
// never a panic or another error; and a token that decodes is one the vectors'
// key holder minted: no change to a token's text keeps it valid (a forgery, or a
// second encoding of one token, would be found here).
//
// A few refused vectors are a minted token with a segment added (".AAAA", a
// second signature): the fuzzer finds the minted token again by dropping it, so
// the first three (signed) or five (encrypted) segments of every vector token
// count as minted when they decode.
func FuzzOpen(f *testing.F) {
	tokens, ring := vectorTokens(f)
	decodable := map[string]bool{}
	for _, tok := range tokens {
		f.Add(tok)
		segments := strings.Split(tok, ".")
		for _, minted := range []string{tok, strings.Join(segments[:min(3, len(segments))], "."),
			strings.Join(segments[:min(5, len(segments))], ".")} {
			if _, err := token.Decode(minted, token.DefaultMaxTokenBytes, ring); err == nil {
				decodable[minted] = true
			}
		}
	}
	if len(decodable) == 0 {
		f.Fatal("no vector token decodes: the seeds are wrong")
	}
	f.Fuzz(func(t *testing.T, tok string) {
		claims, err := token.Decode(tok, token.DefaultMaxTokenBytes, ring)
		if err != nil {
			var refused *mrtrstate.InvalidRequestState
			if !errors.As(err, &refused) || !refused.Reason.Valid() {
				t.Fatalf("not a refusal: %T %v", err, err)
			}
			return
		}
		if !decodable[tok] {
			t.Fatalf("a token the vectors' key holder did not mint decoded: %q", tok)
		}
		if !json.Valid(claims.State) {
			t.Fatalf("the state is not JSON: %q", claims.State)
		}
	})
}
