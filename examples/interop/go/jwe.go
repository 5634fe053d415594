package main

// The encrypted form (profile: JWE compact, "alg": "dir", "enc": "A256GCM") with
// go-jose v4; golang-jwt has no JWE.
//
// What go-jose gives: the compact parse, AES-256-GCM with the protected header
// segment as received as the AAD (RFC 7516, 5.1 step 14), the tag check, and the
// encryption with a fresh random 96-bit IV. What this file adds before go-jose
// sees the token, because go-jose does not check it or gives no reason code: the
// five segments with an empty encrypted key; canonical base64url (go-jose accepted
// a tag with non-zero unused bits, and refuses padding only as a parse error); the
// strict header JSON (go-jose refuses a duplicate member, but as a parse error);
// the header allowlist (go-jose accepted an unknown member, and zip: it inflates a
// compressed plaintext); alg and enc; the exact typ; the kid lookup and the key's
// form; and the IV and tag lengths (go-jose refuses an 8-byte IV only as a
// failed decryption). The claims then go through the same steps 11 to 19 as a
// signed token's (verify.go).

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// encryptionAlg is the algorithm of an encryption key ("alg" of its JWK).
const encryptionAlg = "A256GCM"

const (
	encryptionKeyBytes = 32 // AES-256
	ivBytes            = 12 // 96-bit IV
	tagBytes           = 16 // 128-bit tag
)

var encryptedHeaderParameters = map[string]bool{"alg": true, "enc": true, "typ": true, "kid": true}

// encryptionKey is a ring key for the encrypted form: exactly 32 bytes, never a
// signing key (its alg is A256GCM, which no JWS header may name).
func encryptionKey(secret []byte) (*key, error) {
	if len(secret) != encryptionKeyBytes {
		return nil, fmt.Errorf("an A256GCM key must be exactly %d bytes", encryptionKeyBytes)
	}
	return &key{alg: encryptionAlg, verify: secret, sign: secret, secret: secret}, nil
}

// verifyEncrypted applies the encrypted form's steps 2 to 10 to the five segments
// of token (step 1, the size, has passed), then the shared claim steps.
func (v *verifier) verifyEncrypted(segments []string, req request) (json.RawMessage, error) {
	// Step 2. Five segments of the base64url alphabet; the encrypted key (the second)
	// is empty for "dir", every other one is not.
	for i, segment := range segments {
		if (i == 1) != (segment == "") || (segment != "" && !isBase64URL(segment)) {
			return nil, refuse("malformed", "the token is not five base64url segments with an empty encrypted key")
		}
	}
	// Step 3. Each segment is the canonical encoding of its bytes.
	decoded := make([][]byte, 5)
	for i, segment := range segments {
		var err error
		if decoded[i], err = b64.DecodeString(segment); err != nil {
			return nil, refuse("malformed", "a segment is not canonical unpadded base64url")
		}
	}
	// Step 4. The protected header is strict JSON and an object.
	var header map[string]any
	if checkJSON(decoded[0], maxTextDepth) != nil || json.Unmarshal(decoded[0], &header) != nil || header == nil {
		return nil, refuse("malformed", "the header is not a strict JSON object")
	}
	// Step 5. No header parameter but alg, enc, typ and kid.
	for name := range header {
		if !encryptedHeaderParameters[name] {
			return nil, refuse("unsupported_header", "the header has a parameter the profile forbids")
		}
	}
	// Step 6. alg is dir and enc is A256GCM.
	if header["alg"] != "dir" || header["enc"] != encryptionAlg {
		return nil, refuse("unsupported_header", "the header's alg is not dir or its enc is not A256GCM")
	}
	// Step 7. typ exactly.
	if header["typ"] != typ {
		return nil, refuse("wrong_type", "the header's typ is not exactly "+typ)
	}
	// Step 8. The kid names a key of the ring.
	kid, _ := header["kid"].(string)
	k := v.keys[kid]
	if k == nil {
		return nil, refuse("unknown_key", "the header's kid names no key in the ring")
	}
	// Step 9. The key is an encryption key (a signing key never decrypts).
	if k.alg != encryptionAlg {
		return nil, refuse("algorithm_mismatch", "the header's kid names a signing key")
	}
	// Step 10. The IV and tag lengths, then go-jose decrypts and checks the tag.
	if len(decoded[2]) != ivBytes || len(decoded[4]) != tagBytes {
		return nil, refuse("bad_signature", "the IV is not 12 bytes or the tag is not 16 bytes")
	}
	token := strings.Join(segments, ".")
	object, err := jose.ParseEncryptedCompact(token, []jose.KeyAlgorithm{jose.DIRECT}, []jose.ContentEncryption{jose.A256GCM})
	if err != nil {
		return nil, fmt.Errorf("go-jose refused a token that passed steps 1 to 9: %w", err)
	}
	plaintext, err := object.Decrypt(k.verify)
	if err != nil {
		return nil, refuse("bad_signature", "the tag does not verify: the token was changed")
	}
	// Steps 11 to 19, as for a signed token; golang-jwt's claim validator makes steps
	// 14 to 18 (the same checks its parser makes on a signed token).
	return v.claimSteps(plaintext, req, func() error {
		var claims jwt.RegisteredClaims
		if err := json.Unmarshal(plaintext, &claims); err != nil {
			return fmt.Errorf("golang-jwt cannot read claims that passed step 12: %w", err)
		}
		return libraryVerdict(jwt.NewValidator(v.claimOptions(req)...).Validate(&claims))
	})
}

// encrypt returns the compact JWE of claims under k: protected header {alg: dir,
// enc: A256GCM, typ, kid}, an empty encrypted key, a random 96-bit IV from go-jose.
func encrypt(k *key, claims jwt.MapClaims) (string, error) {
	plaintext, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	options := (&jose.EncrypterOptions{}).WithType(typ)
	encrypter, err := jose.NewEncrypter(jose.A256GCM, jose.Recipient{Algorithm: jose.DIRECT, Key: k.sign, KeyID: k.kid}, options)
	if err != nil {
		return "", err
	}
	object, err := encrypter.Encrypt(plaintext)
	if err != nil {
		return "", err
	}
	return object.CompactSerialize()
}
