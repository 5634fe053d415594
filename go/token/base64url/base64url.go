package base64url

import (
	"encoding/base64"
	"errors"
)

var strict = base64.RawURLEncoding.Strict()

// ErrNotCanonical is returned by Decode for any text that is not canonical
// unpadded base64url. It never holds the text.
var ErrNotCanonical = errors.New("not canonical unpadded base64url")

// IsAlphabet tells whether s is made only of the base64url alphabet.
func IsAlphabet(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Decode decodes canonical unpadded base64url and refuses anything else: other
// characters, padding, a length of 1 modulo 4, non-zero unused bits.
func Decode(s string) ([]byte, error) {
	if !IsAlphabet(s) {
		return nil, ErrNotCanonical
	}
	b, err := strict.DecodeString(s)
	if err != nil {
		return nil, ErrNotCanonical
	}
	return b, nil
}

// Encode returns the canonical unpadded base64url of b.
func Encode(b []byte) string { return strict.EncodeToString(b) }

// EncodedLen is the length of Encode's result for n bytes.
func EncodedLen(n int) int { return strict.EncodedLen(n) }

// AppendEncode appends the canonical unpadded base64url of b to dst.
func AppendEncode(dst, b []byte) []byte { return strict.AppendEncode(dst, b) }
