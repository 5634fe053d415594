// A baseline verifier of the mrtr-state profile (spec/profile.md, section 12.5) on a stock
// golang-jwt: the library's own checks configured as a typical server would, plus the few checks of
// the baseline class it does not make. It speaks the conformance protocol on stdin/stdout
// (`mrtr-state conformance --help`).
//
// What it adds to golang-jwt: the size cap before decoding, the key looked up by `kid` with the
// algorithm pinned to that key, `typ` compared exactly, and the argument digest (RFC 8785 through
// gowebpki/jcs). golang-jwt gives the signature, `iss`, `sub`, `aud` and `exp` (refused from the
// second `exp` itself). It is NOT a strict verifier: it reads JSON leniently and accepts
// re-encodings, `aud` arrays and extra claims, which only a key holder can make.
package main

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"os"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gowebpki/jcs"
)

type request struct {
	ID               string                          `json:"id"`
	Op               string                          `json:"op"`
	Keys             struct{ Keys []map[string]any } `json:"keys"`
	Token            string                          `json:"token"`
	Issuer           string                          `json:"issuer"`
	User             string                          `json:"user"`
	Tool             *string                         `json:"tool"`
	Prompt           *string                         `json:"prompt"`
	Resource         *string                         `json:"resource"`
	Arguments        json.RawMessage                 `json:"arguments"`
	Now              int64                           `json:"now"`
	Leeway           int64                           `json:"leeway"`
	MaxTokenBytes    *int                            `json:"max_token_bytes"`
	RequireArguments bool                            `json:"require_arguments"`
}

func refuse(reason string) map[string]any { return map[string]any{"valid": false, "reason": reason} }

// bindable: arguments with an integer beyond 2^53 - 1, however written, bind to no digest (profile 3.4).
func bindable(value any) bool {
	switch v := value.(type) {
	case json.Number:
		f, err := v.Float64()
		return err == nil && !(f == math.Trunc(f) && math.Abs(f) > 1<<53-1)
	case []any:
		for _, item := range v {
			if !bindable(item) {
				return false
			}
		}
	case map[string]any:
		for _, item := range v {
			if !bindable(item) {
				return false
			}
		}
	}
	return true
}

// digest is args_sha256 of the arguments: absent arguments are {}; arguments that are present but not an
// object ("arguments": null included) are unbindable (profile 3.4 and 8.2).
func digest(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	var value any
	if decoder.Decode(&value) != nil || !bindable(value) {
		return "", false
	}
	if _, object := value.(map[string]any); !object {
		return "", false
	}
	text, err := jcs.Transform(raw)
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256(text)
	return base64.RawURLEncoding.EncodeToString(sum[:]), true
}

func verify(r request) map[string]any {
	limit := 8192
	if r.MaxTokenBytes != nil {
		limit = *r.MaxTokenBytes
	}
	if len(r.Token) > limit {
		return refuse("too_large")
	}
	aud := "tools/call:"
	switch {
	case r.Tool != nil:
		aud += *r.Tool
	case r.Prompt != nil:
		aud = "prompts/get:" + *r.Prompt
	case r.Resource != nil:
		aud = "resources/read:" + *r.Resource
	}
	keyFor := func(token *jwt.Token) (any, error) {
		if token.Header["typ"] != "mrtr-state+jwt" {
			return nil, errors.New("wrong_type")
		}
		for _, jwk := range r.Keys.Keys {
			if jwk["kid"] != token.Header["kid"] {
				continue
			}
			if jwk["kty"] == "oct" && token.Method.Alg() == "HS256" {
				k, _ := jwk["k"].(string)
				return base64.RawURLEncoding.DecodeString(k)
			}
			if jwk["kty"] == "OKP" && token.Method.Alg() == "EdDSA" {
				x, _ := jwk["x"].(string)
				raw, err := base64.RawURLEncoding.DecodeString(x)
				return ed25519.PublicKey(raw), err
			}
			return nil, errors.New("algorithm_mismatch")
		}
		return nil, errors.New("unknown_key")
	}
	claims := jwt.MapClaims{}
	_, err := jwt.NewParser(
		jwt.WithValidMethods([]string{"HS256", "EdDSA"}),
		jwt.WithIssuer(r.Issuer),
		jwt.WithSubject(r.User),
		jwt.WithAudience(aud),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(time.Duration(r.Leeway)*time.Second),
		jwt.WithTimeFunc(func() time.Time { return time.Unix(r.Now, 0) }),
		jwt.WithJSONNumber(),
	).ParseWithClaims(r.Token, claims, keyFor)
	switch {
	case err == nil:
	case errors.Is(err, jwt.ErrTokenExpired):
		return refuse("expired")
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return refuse("bad_signature")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return refuse("wrong_issuer")
	case errors.Is(err, jwt.ErrTokenInvalidSubject):
		return refuse("wrong_user")
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return refuse("wrong_tool")
	default:
		return refuse("malformed")
	}
	required := r.RequireArguments && r.Resource == nil // a resource read has no arguments
	if bound, ok := claims["args_sha256"]; ok || required {
		if want, ok := digest(r.Arguments); !ok || bound != want {
			return refuse("wrong_request")
		}
	}
	return map[string]any{"valid": true, "state": claims["state"]}
}

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	for scanner.Scan() {
		var r request
		reply := map[string]any{"unsupported": true}
		if json.Unmarshal(scanner.Bytes(), &r) == nil {
			switch r.Op {
			case "verify":
				reply = verify(r)
			case "digest":
				if value, ok := digest(r.Arguments); ok {
					reply = map[string]any{"digest": value}
				} else {
					reply = map[string]any{"unbindable": true}
				}
			}
		}
		reply["id"] = r.ID
		_ = out.Encode(reply)
	}
}
