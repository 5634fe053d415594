package main

// Minting (profile, section 4) with golang-jwt's signing API. The claims are a
// jwt.MapClaims rather than jwt.RegisteredClaims: RegisteredClaims writes aud as an
// array by default (jwt.MarshalSingleStringAsArray), which this profile refuses.

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// defaultMaxTokenBytes is the verifiers' default size cap; a minter stays within it.
const defaultMaxTokenBytes = 8192

// minting is one token to mint, as read from a mint job.
type minting struct {
	key       *key
	issuer    string
	user      string
	aud       string
	arguments []byte // nil: no argument binding (no args_sha256 claim)
	now       int64
	ttl       int64
	state     json.RawMessage
	jti       string // "" for a fresh random one
}

// mint returns the compact JWS of m: header {alg, typ, kid}; claims iss, sub, aud,
// iat, exp, jti, args_sha256 (with arguments), state.
func mint(m minting) (string, error) {
	if m.key.sign == nil {
		return "", errors.New("the key is a public key and cannot sign")
	}
	// Step 1 of section 4: the state is I-JSON (no integer literal beyond 2^53 - 1,
	// no escaped lone surrogate, ...) within the nesting limit: the verifier's own
	// strict JSON check, so that nothing is minted that a verifier would refuse.
	if err := checkJSON(m.state, maxStateDepth); err != nil {
		return "", fmt.Errorf("the state cannot be carried exactly: %w", err)
	}
	jti := m.jti
	if jti == "" {
		random := make([]byte, 16) // 128 bits from the system's secure source
		if _, err := rand.Read(random); err != nil {
			return "", err
		}
		jti = b64.EncodeToString(random)
	} else if !jtiPattern.MatchString(jti) {
		return "", errors.New("jti must be 22 to 64 base64url characters")
	}
	claims := jwt.MapClaims{
		"iss":   m.issuer,
		"sub":   m.user,
		"aud":   m.aud,
		"iat":   m.now,
		"exp":   m.now + m.ttl,
		"jti":   jti,
		"state": m.state,
	}
	if m.arguments != nil {
		if _, err := canonicalArguments(m.arguments); err != nil {
			return "", fmt.Errorf("the arguments are unbindable (pass such ids as strings): %w", err)
		}
		claims["args_sha256"] = argumentsDigest(m.arguments)
	}
	token := jwt.NewWithClaims(m.key.method, claims)
	token.Header = map[string]any{"alg": m.key.alg, "typ": typ, "kid": m.key.kid}
	signed, err := token.SignedString(m.key.sign)
	if err != nil {
		return "", err
	}
	if len(signed) > defaultMaxTokenBytes {
		return "", fmt.Errorf("the token would be %d bytes, over the cap of %d; keep less in the state", len(signed), defaultMaxTokenBytes)
	}
	return signed, nil
}
