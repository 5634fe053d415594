package binding

import (
	"crypto/sha256"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/mrtr-state/mrtr-state/go/token/base64url"
	"github.com/mrtr-state/mrtr-state/go/token/jsonstrict"
)

// maxArgumentsDepth bounds the nesting of arguments read for a digest, as the
// Python reference does.
const maxArgumentsDepth = 256

// ErrUnbindable is the error of Canonicalize and Digest for arguments that have
// no digest (profile, section 3.4). Test for it with errors.Is; the message says
// what to do and never holds a value.
var ErrUnbindable = errors.New("the arguments are unbindable: they must be a JSON object of I-JSON values, " +
	"and a number whose value is an integer beyond +/-(2^53 - 1) has no digest (RFC 8785 writes numbers " +
	"as IEEE 754 doubles, so neighbouring integers share one): pass such ids (64-bit ids, nanosecond " +
	"timestamps) as strings")

// twoTo53 is 2^53: every double of that magnitude or more is an integer beyond the safe range.
const twoTo53 = 1 << 53

// Canonicalize returns the RFC 8785 form of arguments (JSON text of an object),
// or ErrUnbindable. Members with one name keep the last value, as the handler's
// own JSON reader does.
func Canonicalize(arguments []byte) ([]byte, error) {
	v, err := jsonstrict.Parse(arguments, jsonstrict.Options{MaxDepth: maxArgumentsDepth, LastDuplicateWins: true})
	if err != nil || v.Kind != jsonstrict.Object {
		// Profile 3.4 (decision D2): present arguments that are not an object are unbindable.
		return nil, ErrUnbindable
	}
	out, ok := appendCanonical(make([]byte, 0, len(arguments)), v)
	if !ok {
		return nil, ErrUnbindable
	}
	return out, nil
}

// Digest returns args_sha256 of arguments: BASE64URL(SHA-256(JCS(arguments))),
// or ErrUnbindable.
func Digest(arguments []byte) (string, error) {
	canonical, err := Canonicalize(arguments)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canonical)
	return base64url.Encode(sum[:]), nil
}

// appendCanonical writes v in the JCS form; false for an unbindable number.
func appendCanonical(out []byte, v *jsonstrict.Value) ([]byte, bool) {
	switch v.Kind {
	case jsonstrict.Null:
		return append(out, "null"...), true
	case jsonstrict.True:
		return append(out, "true"...), true
	case jsonstrict.False:
		return append(out, "false"...), true
	case jsonstrict.String:
		return jsonstrict.AppendString(out, v.Str), true
	case jsonstrict.Number:
		// Profile 3.4, decision D1: the rule is on the nearest double, so
		// 9007199254740991.5 (which reads as 2^53) is unbindable.
		if math.Abs(v.Num) >= twoTo53 {
			return nil, false
		}
		return AppendNumber(out, v.Num), true
	case jsonstrict.Array:
		out = append(out, '[')
		for i, item := range v.Items {
			if i > 0 {
				out = append(out, ',')
			}
			var ok bool
			if out, ok = appendCanonical(out, item); !ok {
				return nil, false
			}
		}
		return append(out, ']'), true
	}
	members := slices.Clone(v.Members)
	slices.SortFunc(members, func(a, b jsonstrict.Member) int { return compareUTF16(a.Name, b.Name) })
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = jsonstrict.AppendString(out, m.Name)
		out = append(out, ':')
		var ok bool
		if out, ok = appendCanonical(out, m.Value); !ok {
			return nil, false
		}
	}
	return append(out, '}'), true
}

// compareUTF16 orders member names by their UTF-16 code units (RFC 8785, 3.2.3).
func compareUTF16(a, b string) int {
	ascii := true
	for i := 0; i < len(a) && ascii; i++ {
		ascii = a[i] < 0x80
	}
	for i := 0; i < len(b) && ascii; i++ {
		ascii = b[i] < 0x80
	}
	if ascii {
		return strings.Compare(a, b)
	}
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// AppendNumber writes f as ECMAScript's Number.prototype.toString does (RFC 8785,
// 3.2.2.3): the shortest digits that read back as f, in plain notation for
// exponents from -7 to 20, else with an exponent. f must be finite.
func AppendNumber(out []byte, f float64) []byte {
	if f == 0 {
		return append(out, '0') // -0 too
	}
	if f < 0 {
		out = append(out, '-')
		f = -f
	}
	// "d.ddddde±XX": the shortest round-tripping digits and the exponent.
	e := strconv.AppendFloat(nil, f, 'e', -1, 64)
	mark := slices.Index(e, 'e')
	digits := make([]byte, 0, 17)
	for _, c := range e[:mark] {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	exp, _ := strconv.Atoi(string(e[mark+1:]))
	k, n := len(digits), exp+1
	switch {
	case k <= n && n <= 21:
		out = append(out, digits...)
		for range n - k {
			out = append(out, '0')
		}
	case 0 < n && n <= 21:
		out = append(out, digits[:n]...)
		out = append(out, '.')
		out = append(out, digits[n:]...)
	case -6 < n && n <= 0:
		out = append(out, '0', '.')
		for range -n {
			out = append(out, '0')
		}
		out = append(out, digits...)
	default:
		out = append(out, digits[0])
		if k > 1 {
			out = append(out, '.')
			out = append(out, digits[1:]...)
		}
		out = append(out, 'e')
		if n-1 >= 0 {
			out = append(out, '+')
		}
		out = strconv.AppendInt(out, int64(n-1), 10)
	}
	return out
}
