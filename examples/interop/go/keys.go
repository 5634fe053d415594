package main

// Keys (profile, section 7). golang-jwt has no JWK support, so this file loads the
// two key types of the profile from JWKs itself and derives each key's id as the
// RFC 7638 thumbprint when the JWK has no "kid". Key material never appears in an
// error message.

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/golang-jwt/jwt/v5"
)

// key is one key of a ring, with the golang-jwt signing method it is pinned to.
type key struct {
	kid    string
	alg    string            // "HS256", "EdDSA" or "A256GCM": the algorithm is the key's, never the token's
	method jwt.SigningMethod // jwt.SigningMethodHS256 or jwt.SigningMethodEdDSA; nil for A256GCM
	verify any               // []byte (HS256 secret) or ed25519.PublicKey
	sign   any               // []byte or ed25519.PrivateKey; nil for a public key
	secret []byte            // the secret of an "oct" key (HS256 or A256GCM); nil for Ed25519
}

// maxRefusedPeriod is the longest repeated pattern refused in an "oct" secret (profile 7.1).
const maxRefusedPeriod = 8

// repeatPeriod is the period (1 to 8) of a secret that is one byte or a short
// pattern repeated, or 0: one rule for every "oct" secret, HS256 and A256GCM alike.
func repeatPeriod(secret []byte) int {
	for period := 1; period <= maxRefusedPeriod && period < len(secret); period++ {
		if bytes.Equal(secret[period:], secret[:len(secret)-period]) {
			return period
		}
	}
	return 0
}

// ring is a verifier's key ring: every key verifies, looked up by kid.
type ring map[string]*key

const minSecretBytes = 32

var kidPattern = regexp.MustCompile(`^[\x21-\x7e]{1,128}$`)

// maxJWKSDepth bounds key JSON: {"keys": [{...}]} nests three levels, x5c and key_ops add one.
const maxJWKSDepth = 8

// parseJWK loads one JWK: {"kty": "oct", "k"} for HS256 or {"kty": "OKP", "crv":
// "Ed25519", "x", "d" (optional)} for EdDSA, with optional "alg", "use" and "kid";
// or {"kty": "oct", "alg": "A256GCM", "k"} for the encrypted form (jwe.go).
func parseJWK(raw json.RawMessage) (*key, error) {
	var jwk map[string]any
	if err := checkJSON(raw, maxJWKSDepth); err != nil {
		return nil, fmt.Errorf("a JWK is not strict JSON: %w", err)
	}
	if err := json.Unmarshal(raw, &jwk); err != nil || jwk == nil {
		return nil, errors.New("a JWK must be a JSON object")
	}
	text := func(name, fallback string) (string, error) {
		value, present := jwk[name]
		if !present {
			return fallback, nil
		}
		s, ok := value.(string)
		if !ok {
			return "", fmt.Errorf("a JWK's %q member must be a string", name)
		}
		return s, nil
	}
	member := func(name string) ([]byte, string, error) {
		s, err := text(name, "")
		if err != nil || s == "" {
			return nil, "", fmt.Errorf("a JWK's %q member must be a base64url string", name)
		}
		b, err := decodeCanonical(s)
		if err != nil {
			return nil, "", fmt.Errorf("a JWK's %q member is not canonical unpadded base64url", name)
		}
		return b, s, nil
	}
	kty, err := text("kty", "")
	if err != nil {
		return nil, err
	}
	alg, err := text("alg", "")
	if err != nil {
		return nil, err
	}
	wantUse := "sig"
	if kty == "oct" && alg == encryptionAlg {
		wantUse = "enc" // an encryption key (jwe.go)
	}
	if use, err := text("use", wantUse); err != nil || use != wantUse {
		return nil, fmt.Errorf("this JWK must have use %q (or no \"use\" member)", wantUse)
	}
	kid, err := text("kid", "")
	if err != nil {
		return nil, err
	}
	if _, present := jwk["kid"]; present && !kidPattern.MatchString(kid) {
		return nil, errors.New("a kid must be 1 to 128 printable ASCII characters without spaces")
	}
	var k *key
	var thumbprintInput string // RFC 7638: the required members, sorted, no white space
	switch kty {
	case "oct":
		if alg != "" && alg != "HS256" && alg != encryptionAlg {
			return nil, errors.New("an \"oct\" JWK must be for alg HS256 or A256GCM")
		}
		secret, k64, err := member("k")
		if err != nil {
			return nil, err
		}
		thumbprintInput = `{"k":"` + k64 + `","kty":"oct"}`
		if period := repeatPeriod(secret); period > 0 {
			return nil, fmt.Errorf("an \"oct\" secret that is a pattern of %d bytes repeated is not random (profile 7.1)", period)
		}
		if alg == encryptionAlg {
			if k, err = encryptionKey(secret); err != nil {
				return nil, err
			}
			break
		}
		if len(secret) < minSecretBytes {
			return nil, fmt.Errorf("an HS256 secret must be at least %d bytes", minSecretBytes)
		}
		k = &key{alg: "HS256", method: jwt.SigningMethodHS256, verify: secret, sign: secret, secret: secret}
	case "OKP":
		if crv, err := text("crv", ""); err != nil || crv != "Ed25519" {
			return nil, errors.New("an \"OKP\" JWK must be on curve Ed25519")
		}
		if alg != "" && alg != "EdDSA" && alg != "Ed25519" {
			return nil, errors.New("an Ed25519 JWK must be for alg EdDSA")
		}
		x, x64, err := member("x")
		if err != nil {
			return nil, err
		}
		if len(x) != ed25519.PublicKeySize {
			return nil, errors.New("an Ed25519 JWK's \"x\" must be 32 bytes")
		}
		if err := checkEd25519Point(x); err != nil {
			return nil, err
		}
		k = &key{alg: "EdDSA", method: jwt.SigningMethodEdDSA, verify: ed25519.PublicKey(x)}
		if _, private := jwk["d"]; private {
			d, _, err := member("d")
			if err != nil {
				return nil, err
			}
			if len(d) != ed25519.SeedSize {
				return nil, errors.New("an Ed25519 JWK's \"d\" must be 32 bytes")
			}
			signer := ed25519.NewKeyFromSeed(d)
			if !bytes.Equal(signer.Public().(ed25519.PublicKey), x) {
				return nil, errors.New("an Ed25519 JWK's \"x\" is not the public key of its \"d\"")
			}
			k.sign = signer
		}
		thumbprintInput = `{"crv":"Ed25519","kty":"OKP","x":"` + x64 + `"}`
	default:
		return nil, errors.New("unsupported JWK key type; the profile uses \"oct\" (HS256) and \"OKP\" (Ed25519)")
	}
	k.kid = kid
	if k.kid == "" {
		digest := sha256.Sum256([]byte(thumbprintInput))
		k.kid = b64.EncodeToString(digest[:])
	}
	return k, nil
}

// parseJWKS loads a JWKS ({"keys": [...]}) into a ring; kids must be distinct.
func parseJWKS(raw json.RawMessage) (ring, error) {
	var jwks struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := checkJSON(raw, maxJWKSDepth); err != nil {
		return nil, fmt.Errorf("the JWKS is not strict JSON: %w", err)
	}
	if err := json.Unmarshal(raw, &jwks); err != nil || len(jwks.Keys) == 0 {
		return nil, errors.New(`a JWKS must be a JSON object with a non-empty "keys" array`)
	}
	keys := ring{}
	var secrets []*key
	for _, raw := range jwks.Keys {
		k, err := parseJWK(raw)
		if err != nil {
			return nil, err
		}
		if keys[k.kid] != nil {
			return nil, errors.New("two keys in the JWKS have the same kid")
		}
		// Profile 7.6 and 9.10: an encryption key holds a secret no other key
		// holds, whatever the kids.
		for _, other := range secrets {
			if (k.alg == encryptionAlg || other.alg == encryptionAlg) && subtle.ConstantTimeCompare(k.secret, other.secret) == 1 {
				return nil, errors.New("two keys of the JWKS hold the same secret, one of them an encryption key")
			}
		}
		if k.secret != nil {
			secrets = append(secrets, k)
		}
		keys[k.kid] = k
	}
	return keys, nil
}

// lookup applies steps 8 and 9: the header's kid names a key of the ring, and the
// header's alg is that key's algorithm. It serves both the explicit steps and the
// Keyfunc handed to golang-jwt.
func (r ring) lookup(header map[string]any) (*key, error) {
	kid, _ := header["kid"].(string)
	k := r[kid]
	if k == nil {
		return nil, refuse("unknown_key", "the header's kid names no key in the ring")
	}
	if header["alg"] != k.alg {
		return nil, refuse("algorithm_mismatch", "the header's alg is not the algorithm of its key")
	}
	return k, nil
}
