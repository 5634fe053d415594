package keys

import (
	"crypto/ed25519"

	"github.com/mrtr-state/mrtr-state/go/token/base64url"
	"github.com/mrtr-state/mrtr-state/go/token/jsonstrict"
)

// maxJWKSDepth bounds key JSON: {"keys": [{...}]} nests three levels, x5c and
// key_ops arrays add one.
const maxJWKSDepth = 8

func parseKeyJSON(text []byte, what string) (*jsonstrict.Value, error) {
	v, err := jsonstrict.Parse(text, jsonstrict.Options{MaxDepth: maxJWKSDepth})
	if err != nil {
		return nil, keyringErrorf("%s is not strict JSON: %s", what, err.Error())
	}
	return v, nil
}

// ParseJWK loads one key from the JSON text of a JWK (FromJWK's rules).
func ParseJWK(text []byte) (*Key, error) {
	v, err := parseKeyJSON(text, "a JWK")
	if err != nil {
		return nil, err
	}
	return FromJWK(v)
}

// FromJWK loads one key from a parsed JWK: {"kty": "oct", "k"} for HS256 (k of at
// least 32 bytes), {"kty": "OKP", "crv": "Ed25519", "x", "d" (absent for a
// verify-only public key)} for EdDSA, or {"kty": "oct", "alg": "A256GCM", "k"}
// for an encryption key (k exactly 32 bytes; alg required). alg, if present,
// must match; use, if present, must be "sig" for a signing key and "enc" for an
// encryption key; kid defaults to the RFC 7638 thumbprint. Base64url members
// must be canonical and unpadded.
func FromJWK(jwk *jsonstrict.Value) (*Key, error) {
	if jwk.Kind != jsonstrict.Object {
		return nil, keyringError("a JWK must be a JSON object")
	}
	kty := jwk.Get("kty")
	alg := jwk.Get("alg")
	isString := func(v *jsonstrict.Value, s string) bool { return v != nil && v.Kind == jsonstrict.String && v.Str == s }
	kid, err := explicitKid(jwk)
	if err != nil {
		return nil, err
	}
	if isString(kty, "oct") && isString(alg, "A256GCM") {
		if use := jwk.Get("use"); use != nil && !isString(use, "enc") {
			return nil, keyringError(`an A256GCM JWK must have use "enc" (or no "use" member)`)
		}
		secret, err := member(jwk, "k")
		if err != nil {
			return nil, err
		}
		return NewEncryptionKey(secret, kid)
	}
	if use := jwk.Get("use"); use != nil && !isString(use, "sig") {
		return nil, keyringError(`a signing JWK must have use "sig" (or no "use" member); ` +
			`an encryption JWK has alg "A256GCM" and use "enc"`)
	}
	switch {
	case isString(kty, "oct"):
		if alg != nil && !isString(alg, "HS256") {
			return nil, keyringError(`an "oct" JWK must be for alg HS256 (or A256GCM for an encryption key)`)
		}
		secret, err := member(jwk, "k")
		if err != nil {
			return nil, err
		}
		return FromSecret(secret, kid)
	case isString(kty, "OKP"):
		if !isString(jwk.Get("crv"), "Ed25519") {
			return nil, keyringError(`an "OKP" JWK must be on curve Ed25519 (crv "Ed25519")`)
		}
		if alg != nil && !isString(alg, "EdDSA") && !isString(alg, "Ed25519") {
			return nil, keyringError("an Ed25519 JWK must be for alg EdDSA")
		}
		x, err := member(jwk, "x")
		if err != nil {
			return nil, err
		}
		if len(x) != ed25519.PublicKeySize {
			return nil, keyringError(`an Ed25519 JWK's "x" must be 32 bytes`)
		}
		if jwk.Get("d") == nil {
			return newEdDSA(nil, x, kid)
		}
		d, err := member(jwk, "d")
		if err != nil {
			return nil, err
		}
		if len(d) != ed25519.SeedSize {
			return nil, keyringError(`an Ed25519 JWK's "d" must be 32 bytes`)
		}
		if err := checkEd25519Point(x); err != nil {
			return nil, err
		}
		return newEdDSA(ed25519.NewKeyFromSeed(d), x, kid)
	}
	return nil, keyringError(`unsupported JWK key type; the profile uses "oct" (HS256, A256GCM) and "OKP" (Ed25519)`)
}

// explicitKid is the JWK's kid ("" when the member is absent, for the
// thumbprint), checked by decision D3: a present kid member is always checked,
// so null, a number or an empty string is refused rather than replaced by the
// thumbprint.
func explicitKid(jwk *jsonstrict.Value) (string, error) {
	v := jwk.Get("kid")
	if v == nil {
		return "", nil
	}
	if v.Kind != jsonstrict.String {
		return "", keyringError("a kid must be 1 to 128 printable ASCII characters without spaces")
	}
	if err := checkKid(v.Str); err != nil {
		return "", err
	}
	return v.Str, nil
}

// member decodes a base64url member of a JWK.
func member(jwk *jsonstrict.Value, name string) ([]byte, error) {
	v := jwk.Get(name)
	if v == nil || v.Kind != jsonstrict.String {
		return nil, keyringErrorf("a JWK's %q member must be a base64url string", name)
	}
	b, err := base64url.Decode(v.Str)
	if err != nil {
		return nil, keyringErrorf("a JWK's %q member is not canonical unpadded base64url", name)
	}
	return b, nil
}
