package token

import (
	"strings"

	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/refusal"
	"github.com/mrtr-state/mrtr-state/go/token/base64url"
	"github.com/mrtr-state/mrtr-state/go/token/jsonstrict"
)

// DefaultMaxTokenBytes is the verifiers' default size cap (profile, section 5, step 1).
const DefaultMaxTokenBytes = 8192

// Decode makes steps 1 to 12 of the validation procedure on a token of either
// form with the keys of ring and the size cap maxTokenBytes, and returns its
// claims. Steps 13 to 19 are Claims.Validate. Every failure is a
// *refusal.InvalidRequestState; no other error is returned.
func Decode(token string, maxTokenBytes int, ring *keys.Keyring) (*Claims, error) {
	// Profile 5, step 1 (and Profile 5.1, step 1): Size, in bytes of the UTF-8 encoding, before any decoding: a Go
	// string holds those bytes.
	if len(token) > maxTokenBytes {
		return nil, refusal.New(refusal.TooLarge, "the token is longer than the size cap")
	}
	if strings.Count(token, ".") == 4 {
		payload, err := decrypt(token, ring) // the encrypted form (section 5.1)
		if err != nil {
			return nil, err
		}
		return parseClaims(payload) // steps 11 and 12
	}
	payload, err := verifySigned(token, ring)
	if err != nil {
		return nil, err
	}
	return parseClaims(payload) // steps 11 and 12
}

// decodeSegments makes step 3 of either form: each segment is the canonical
// unpadded base64url encoding of its bytes, which go to the same index of
// decoded.
func decodeSegments(segments []string, decoded [][]byte) error {
	for i, s := range segments {
		var err error
		if decoded[i], err = base64url.Decode(s); err != nil {
			return malformed("a segment is not canonical unpadded base64url")
		}
	}
	return nil
}

// decodeHeader makes step 4 of either form: the header is strict JSON and an object.
func decodeHeader(segment []byte) (*jsonstrict.Value, error) {
	header, err := jsonstrict.Parse(segment, jsonstrict.Options{MaxDepth: maxTextDepth})
	if err != nil || header.Kind != jsonstrict.Object {
		return nil, malformed("the header is not a strict JSON object")
	}
	return header, nil
}

// stringMember is a header member's decoded string, "" with false when absent or
// not a string.
func stringMember(header *jsonstrict.Value, name string) (string, bool) {
	v := header.Get(name)
	if v == nil || v.Kind != jsonstrict.String {
		return "", false
	}
	return v.Str, true
}

// verifySigned makes steps 2 to 10 of the signed form and returns the claims text.
func verifySigned(token string, ring *keys.Keyring) ([]byte, error) {
	// Profile 5, step 2: Three non-empty segments of the base64url alphabet.
	segments := strings.Split(token, ".")
	if len(segments) != 3 {
		return nil, malformed("the token is not three segments joined by '.'")
	}
	for _, s := range segments {
		if s == "" || !base64url.IsAlphabet(s) {
			return nil, malformed("a segment is empty or not base64url")
		}
	}
	// Profile 5, step 3: Each segment is the canonical encoding of its bytes.
	var decoded [3][]byte
	if err := decodeSegments(segments, decoded[:]); err != nil {
		return nil, err
	}
	// Profile 5, step 4: The header is strict JSON and an object.
	header, err := decodeHeader(decoded[0])
	if err != nil {
		return nil, err
	}
	// Profile 5, step 5: No header parameter but alg, typ and kid.
	for _, m := range header.Members {
		if m.Name != "alg" && m.Name != "typ" && m.Name != "kid" {
			return nil, refusal.New(refusal.UnsupportedHeader, "the header has a parameter the profile forbids")
		}
	}
	// Profile 5, step 6: alg is HS256 or EdDSA (none, Ed25519, HS512, missing: refused).
	alg, _ := stringMember(header, "alg")
	if alg != string(keys.HS256) && alg != string(keys.EdDSA) {
		return nil, refusal.New(refusal.UnsupportedHeader, "the header's alg is not HS256 or EdDSA")
	}
	// Profile 5, step 7: typ exactly, as the decoded JSON string.
	if typ, _ := stringMember(header, "typ"); typ != Type {
		return nil, refusal.New(refusal.WrongType, "the header's typ is not exactly "+Type)
	}
	// Profile 5, step 8: The kid names a key of the ring.
	kid, isString := stringMember(header, "kid")
	k := ring.Get(kid)
	if !isString || k == nil {
		return nil, refusal.New(refusal.UnknownKey, "the header's kid names no key in the ring")
	}
	// Profile 5, step 9: alg is the algorithm of that key (an encryption key's is A256GCM,
	// which no signed token can carry).
	if string(k.Alg()) != alg {
		return nil, refusal.New(refusal.AlgorithmMismatch, "the header's alg is not the algorithm of its key")
	}
	// Profile 5, step 10: The signature, of the key's length, over the first two segments
	// as received; an HS256 MAC is compared in constant time.
	signingInput := token[:len(segments[0])+1+len(segments[1])]
	if len(decoded[2]) != k.SignatureSize() || !k.Verify([]byte(signingInput), decoded[2]) {
		return nil, refusal.New(refusal.BadSignature, "the signature does not verify")
	}
	return decoded[1], nil
}

// SignedHeader is the header segment of a signed token minted with k:
// BASE64URL({"alg":...,"typ":"mrtr-state+jwt","kid":...}).
func SignedHeader(k *keys.Key) string {
	h := []byte(`{"alg":`)
	h = jsonstrict.AppendString(h, string(k.Alg()))
	h = append(h, `,"typ":"`+Type+`","kid":`...)
	h = jsonstrict.AppendString(h, k.Kid())
	h = append(h, '}')
	return base64url.Encode(h)
}

// SignedSize is the length of the signed token of a payload of n bytes under k.
func SignedSize(k *keys.Key, n int) int {
	return len(SignedHeader(k)) + 1 + base64url.EncodedLen(n) + 1 + base64url.EncodedLen(k.SignatureSize())
}

// Sign returns the compact JWS of the claims text payload under k.
func Sign(k *keys.Key, payload []byte) (string, error) {
	header := SignedHeader(k)
	out := make([]byte, 0, SignedSize(k, len(payload)))
	out = append(out, header...)
	out = append(out, '.')
	out = base64url.AppendEncode(out, payload)
	signature, err := k.Sign(out)
	if err != nil {
		return "", err
	}
	out = append(out, '.')
	out = base64url.AppendEncode(out, signature)
	return string(out), nil
}
