package jsonstrict

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendMarshal appends to out the JSON text json.Marshal writes for v, and
// refuses, with the *Error Parse returns, every text Parse with
// Options{MaxDepth: maxDepth, CheckOnly: true} would refuse: a lone surrogate,
// an integer literal outside +/-(2^53 - 1), a duplicate member name, nesting
// deeper than maxDepth. A value json.Marshal cannot write (a NaN, a channel, a
// failing MarshalJSON) gives its error, unchanged.
//
// The values json.Unmarshal makes into an any (nil, bool, float64, string,
// []any, map[string]any) and int and int64 are written here and checked as they
// are written, which spares a reflective encoding and a second walk of the text;
// any other value is written by json.Marshal and its text parsed, as a whole
// (its depth counted from where it stands).
func AppendMarshal(out []byte, v any, maxDepth int) ([]byte, error) {
	if maxDepth < 1 {
		return nil, errors.New("jsonstrict: MaxDepth must be at least 1")
	}
	return appendMarshal(out, v, 0, maxDepth)
}

var errTooDeep = fail("nested deeper than the limit")

var errUnsafeInteger = fail("an integer literal outside +/-(2^53 - 1)")

// appendMarshal writes v, which stands inside depth containers.
func appendMarshal(out []byte, v any, depth, maxDepth int) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(out, "null"...), nil
	case bool:
		return strconv.AppendBool(out, v), nil
	case string:
		return appendMarshalString(out, v), nil
	case float64:
		return appendFloat(out, v)
	case int:
		return appendInt(out, int64(v))
	case int64:
		return appendInt(out, v)
	case []any:
		if v == nil {
			return append(out, "null"...), nil
		}
		if depth+1 > maxDepth {
			return nil, errTooDeep
		}
		out = append(out, '[')
		for i, item := range v {
			if i > 0 {
				out = append(out, ',')
			}
			var err error
			if out, err = appendMarshal(out, item, depth+1, maxDepth); err != nil {
				return nil, err
			}
		}
		return append(out, ']'), nil
	case map[string]any:
		if v == nil {
			return append(out, "null"...), nil
		}
		if depth+1 > maxDepth {
			return nil, errTooDeep
		}
		// json.Marshal writes a map's members sorted by name; a map has no duplicate names.
		var small [16]string
		names := small[:0]
		for name := range v {
			names = append(names, name)
		}
		slices.Sort(names)
		out = append(out, '{')
		for i, name := range names {
			if i > 0 {
				out = append(out, ',')
			}
			out = appendMarshalString(out, name)
			out = append(out, ':')
			var err error
			if out, err = appendMarshal(out, v[name], depth+1, maxDepth); err != nil {
				return nil, err
			}
		}
		return append(out, '}'), nil
	}
	text, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	left := maxDepth - depth
	if left < 1 {
		// Only a scalar may stand at the deepest level.
		if text[0] == '{' || text[0] == '[' {
			return nil, errTooDeep
		}
		left = 1
	}
	if _, err := Parse(text, Options{MaxDepth: left, CheckOnly: true}); err != nil {
		return nil, err
	}
	return append(out, text...), nil
}

func appendInt(out []byte, n int64) ([]byte, error) {
	if n > MaxSafeInteger || n < -MaxSafeInteger {
		return nil, errUnsafeInteger
	}
	return strconv.AppendInt(out, n, 10), nil
}

// appendFloat writes f as json.Marshal does (the ES6 number-to-string
// conversion); one written without fraction or exponent is an integer literal,
// refused outside +/-(2^53 - 1) as Parse refuses it.
func appendFloat(out []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		out = strconv.AppendFloat(out, f, 'e', -1, 64)
		// e-09 is written e-9
		if n := len(out); n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
			out[n-2] = out[n-1]
			out = out[:n-1]
		}
		return out, nil
	}
	if abs > MaxSafeInteger && abs == math.Trunc(abs) {
		return nil, errUnsafeInteger
	}
	return strconv.AppendFloat(out, f, 'f', -1, 64), nil
}

// htmlSafe tells which ASCII bytes json.Marshal writes as they are: every
// printable one but the quote, the backslash and < > & (which it escapes for
// HTML).
var htmlSafe = func() (safe [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		safe[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return safe
}()

// appendMarshalString writes s as json.Marshal does: < > & and U+2028, U+2029
// escaped, and each byte that is not valid UTF-8 written as U+FFFD, so that
// the text is always valid Unicode.
func appendMarshalString(out []byte, s string) []byte {
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if htmlSafe[c] {
				i++
				continue
			}
			out = append(out, s[start:i]...)
			switch c {
			case '\\', '"':
				out = append(out, '\\', c)
			case '\b':
				out = append(out, '\\', 'b')
			case '\f':
				out = append(out, '\\', 'f')
			case '\n':
				out = append(out, '\\', 'n')
			case '\r':
				out = append(out, '\\', 'r')
			case '\t':
				out = append(out, '\\', 't')
			default:
				out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, s[start:i]...)
			out = append(out, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			out = append(out, s[start:i]...)
			out = append(out, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}
