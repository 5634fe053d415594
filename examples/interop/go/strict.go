package main

// Strict decoding of token text: canonical base64url (profile, steps 2 and 3) and
// strict JSON (steps 4 and 11). Both fill gaps in the Go standard library, which
// golang-jwt uses as it is:
//
//   - encoding/base64 skips CR and LF anywhere in its input, even in Strict mode, so
//     the alphabet is checked here first;
//   - encoding/json keeps the last of two duplicate member names, replaces invalid
//     UTF-8 and escaped lone surrogates with U+FFFD, accepts nesting up to 10000
//     levels, and reads integer literals of any size.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// b64 is unpadded base64url that also refuses non-zero unused bits in the last
// character, so that one byte string has exactly one encoding.
var b64 = base64.RawURLEncoding.Strict()

// isBase64URL tells whether s is made only of the base64url alphabet A-Z a-z 0-9 - _.
func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// decodeCanonical decodes canonical unpadded base64url and refuses anything else:
// other characters, padding, a length of 1 modulo 4, non-zero unused bits.
func decodeCanonical(s string) ([]byte, error) {
	if !isBase64URL(s) {
		return nil, errors.New("not base64url: a character outside the URL-safe alphabet")
	}
	return b64.DecodeString(s)
}

// maxSafeInteger is 2^53 - 1, the largest integer every JSON implementation reads exactly.
const maxSafeInteger = 1<<53 - 1

// checkJSON refuses JSON text that the profile does not accept, before anything
// unmarshals it: invalid UTF-8, a byte order mark, a syntax error (NaN and Infinity
// included), a duplicate member name at any depth, a number beyond the range of a
// double, an integer literal beyond +/-(2^53 - 1), an escaped lone surrogate, arrays
// and objects nested deeper than maxDepth, or content after the value. Past the
// syntax, these are the I-JSON rules (RFC 7493): what passes reads as the same values
// in every language.
func checkJSON(raw []byte, maxDepth int) error {
	if !utf8.Valid(raw) {
		return errors.New("not valid UTF-8")
	}
	if bytes.HasPrefix(raw, []byte("\uFEFF")) {
		return errors.New("starts with a byte order mark")
	}
	type level struct {
		object   bool
		names    map[string]bool
		wantName bool // inside an object, the next string is a member name
	}
	var stack []*level
	valueEnded := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantName = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for started := false; !started || len(stack) > 0; started = true {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("not JSON: %w", err)
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				if len(stack) == maxDepth {
					return fmt.Errorf("nested deeper than %d levels", maxDepth)
				}
				stack = append(stack, &level{object: t == '{', names: map[string]bool{}, wantName: t == '{'})
				continue
			}
			stack = stack[:len(stack)-1]
		case string:
			if top := len(stack) - 1; top >= 0 && stack[top].wantName {
				if stack[top].names[t] {
					return errors.New("duplicate member name")
				}
				stack[top].names[t] = true
				stack[top].wantName = false
				continue
			}
		case json.Number:
			if _, err := strconv.ParseFloat(string(t), 64); err != nil {
				return errors.New("a number beyond the range of a double")
			}
			if isIntegerLiteral(string(t)) {
				if v, err := strconv.ParseInt(string(t), 10, 64); err != nil || v > maxSafeInteger || v < -maxSafeInteger {
					return errors.New("an integer literal outside +/-(2^53 - 1)")
				}
			}
		}
		valueEnded()
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("content after the JSON value")
	}
	// The decoder has turned every escaped lone surrogate into U+FFFD, as it does a
	// real U+FFFD, so the escapes are read from the text itself.
	if hasLoneSurrogateEscape(raw) {
		return errors.New("an escaped lone surrogate, which is not valid Unicode")
	}
	return nil
}

// isIntegerLiteral tells whether a JSON number literal is written without fraction or exponent.
func isIntegerLiteral(number string) bool {
	return number != "" && bytes.IndexAny([]byte(number), ".eE") < 0
}

// hasLoneSurrogateEscape tells whether valid JSON text has a \u escape of a surrogate
// that is not a high surrogate directly followed by an escaped low one (the only
// way to write a character beyond the BMP with escapes). Outside strings valid JSON
// has no backslash, so the text needs no tokenizing.
func hasLoneSurrogateEscape(raw []byte) bool {
	high := false // the previous escape was a high surrogate, waiting for its low half
	for i := 0; i < len(raw); i++ {
		unit := rune(-1) // not a \u escape
		if raw[i] == '\\' {
			if raw[i+1] == 'u' {
				v, _ := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
				unit = rune(v)
				i += 5
			} else {
				i++ // a one-letter escape, \\ included
			}
		}
		isLow := 0xDC00 <= unit && unit <= 0xDFFF
		switch {
		case high:
			if !isLow {
				return true
			}
			high = false
		case isLow:
			return true
		case 0xD800 <= unit && unit <= 0xDBFF:
			high = true
		}
	}
	return high
}
