package token

import (
	"crypto/rand"
	"strings"

	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/refusal"
	"github.com/mrtr-state/mrtr-state/go/token/base64url"
	"github.com/mrtr-state/mrtr-state/go/token/jsonstrict"
)

// Lengths of the encrypted form (profile, section 3.6).
const (
	IVBytes  = 12 // the 96-bit GCM IV
	TagBytes = 16 // the 128-bit GCM tag
)

// decrypt makes steps 2 to 10 of the encrypted form (section 5.1) and returns
// the plaintext claims text.
func decrypt(token string, ring *keys.Keyring) ([]byte, error) {
	// Profile 5.1, step 2: Five segments of the base64url alphabet; the encrypted key (the
	// second) is empty for dir, every other one is not.
	segments := strings.Split(token, ".")
	for i, s := range segments {
		if (i == 1) != (s == "") || !base64url.IsAlphabet(s) {
			return nil, malformed("the token is not five base64url segments with an empty encrypted key")
		}
	}
	// Profile 5.1, step 3: Each segment is the canonical encoding of its bytes.
	var decoded [5][]byte
	if err := decodeSegments(segments, decoded[:]); err != nil {
		return nil, err
	}
	// Profile 5.1, step 4: The protected header is strict JSON and an object.
	header, err := decodeHeader(decoded[0])
	if err != nil {
		return nil, err
	}
	// Profile 5.1, step 5: No header parameter but alg, enc, typ and kid (no zip).
	for _, m := range header.Members {
		if m.Name != "alg" && m.Name != "enc" && m.Name != "typ" && m.Name != "kid" {
			return nil, refusal.New(refusal.UnsupportedHeader, "the header has a parameter the profile forbids")
		}
	}
	// Profile 5.1, step 6: alg is dir and enc is A256GCM.
	alg, _ := stringMember(header, "alg")
	enc, _ := stringMember(header, "enc")
	if alg != "dir" || enc != string(keys.A256GCM) {
		return nil, refusal.New(refusal.UnsupportedHeader, "the header's alg is not dir or its enc is not A256GCM")
	}
	// Profile 5.1, step 7: typ exactly.
	if typ, _ := stringMember(header, "typ"); typ != Type {
		return nil, refusal.New(refusal.WrongType, "the header's typ is not exactly "+Type)
	}
	// Profile 5.1, step 8: The kid names a key of the ring.
	kid, isString := stringMember(header, "kid")
	k := ring.Get(kid)
	if !isString || k == nil {
		return nil, refusal.New(refusal.UnknownKey, "the header's kid names no key in the ring")
	}
	// Profile 5.1, step 9: The key is an encryption key (a signing key never decrypts).
	if !k.IsEncryption() {
		return nil, refusal.New(refusal.AlgorithmMismatch, "the header's kid names a signing key")
	}
	// Profile 5.1, step 10: The IV and tag lengths, then AES-256-GCM with the protected header
	// segment as received as the AAD; the tag is checked in constant time.
	if len(decoded[2]) != IVBytes || len(decoded[4]) != TagBytes {
		return nil, refusal.New(refusal.BadSignature, "the IV is not 12 bytes or the tag is not 16 bytes")
	}
	sealed := append(decoded[3], decoded[4]...)
	plaintext, ok := k.Decrypt(decoded[2], sealed, []byte(segments[0]))
	if !ok {
		return nil, refusal.New(refusal.BadSignature, "the tag does not verify: the token was changed")
	}
	return plaintext, nil
}

// EncryptedHeader is the protected header segment of an encrypted token minted
// with k: BASE64URL({"alg":"dir","enc":"A256GCM","typ":"mrtr-state+jwt","kid":...}).
func EncryptedHeader(k *keys.Key) string {
	h := []byte(`{"alg":"dir","enc":"A256GCM","typ":"` + Type + `","kid":`)
	h = jsonstrict.AppendString(h, k.Kid())
	h = append(h, '}')
	return base64url.Encode(h)
}

// EncryptedSize is the length of the encrypted token of a payload of n bytes under k.
func EncryptedSize(k *keys.Key, n int) int {
	return len(EncryptedHeader(k)) + 2 + base64url.EncodedLen(IVBytes) + 1 + base64url.EncodedLen(n) + 1 +
		base64url.EncodedLen(TagBytes)
}

// Encrypt returns the compact JWE of the claims text payload under the
// encryption key k. The 96-bit IV always comes from the operating system's
// CSPRNG (decision D6), never from a hook.
func Encrypt(k *keys.Key, payload []byte) (string, error) {
	header := EncryptedHeader(k)
	iv := make([]byte, IVBytes)
	if _, err := rand.Read(iv); err != nil {
		return "", err
	}
	sealed, err := k.Encrypt(iv, payload, []byte(header))
	if err != nil {
		return "", err
	}
	ciphertext, tag := sealed[:len(sealed)-TagBytes], sealed[len(sealed)-TagBytes:]
	out := make([]byte, 0, EncryptedSize(k, len(payload)))
	out = append(out, header...)
	out = append(out, ".."...)
	out = base64url.AppendEncode(out, iv)
	out = append(out, '.')
	out = base64url.AppendEncode(out, ciphertext)
	out = append(out, '.')
	out = base64url.AppendEncode(out, tag)
	return string(out), nil
}
