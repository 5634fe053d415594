package jsonstrict

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxSafeInteger is 2^53 - 1, the largest integer every JSON implementation reads exactly.
const MaxSafeInteger = 1<<53 - 1

// Kind is the JSON type of a Value.
type Kind uint8

// The JSON types.
const (
	Null Kind = iota
	False
	True
	Number
	String
	Array
	Object
)

// Value is one parsed JSON value. Raw is its text as it appeared in the input
// (a sub-slice of it, without surrounding white space).
type Value struct {
	Kind    Kind
	Str     string   // a String's decoded value
	Num     float64  // a Number's value as the nearest double (underflow reads as 0)
	Literal string   // a Number's literal text
	Raw     []byte   // the value's text in the input
	Members []Member // an Object's members, in input order
	Items   []*Value // an Array's items
}

// Member is one member of an object.
type Member struct {
	Name  string
	Value *Value
}

// Get returns the member called name of an object, or nil.
func (v *Value) Get(name string) *Value {
	for i := range v.Members {
		if v.Members[i].Name == name {
			return v.Members[i].Value
		}
	}
	return nil
}

// IsIntegerLiteral tells whether a Number was written without fraction or exponent.
func (v *Value) IsIntegerLiteral() bool {
	for i := 0; i < len(v.Literal); i++ {
		switch v.Literal[i] {
		case '.', 'e', 'E':
			return false
		}
	}
	return v.Kind == Number
}

// Options change how Parse reads.
type Options struct {
	// MaxDepth is the deepest nesting of arrays and objects accepted (the
	// outermost container is level 1). It must be at least 1.
	MaxDepth int
	// LastDuplicateWins keeps the last of two members with one name instead of
	// refusing the text, as JSON.parse, encoding/json and Python read it. Only
	// request arguments are read this way (their digest must cover the values
	// the handler reads); token text never is.
	LastDuplicateWins bool
	// KeepDepth, when above 0, builds the values inside the outermost
	// KeepDepth levels only: a value inside a container at that depth is
	// checked by every rule above but comes back with Raw alone (its Kind
	// unset, no Str, Members or Items), which spares building a tree nobody
	// reads (the state inside the claims: KeepDepth 2). 0 builds everything.
	KeepDepth int
	// CheckOnly checks the text and builds no value at all: Parse returns a
	// Value with Raw only. Faster than any KeepDepth.
	CheckOnly bool
}

// linearScanLimit is the member count from which duplicate names are found
// through a map rather than a scan.
const linearScanLimit = 16

// Error is a refusal of JSON text. Its message names the rule, never the text.
type Error struct{ msg string }

// Error names the rule the text broke, never the text.
func (e *Error) Error() string { return e.msg }

func fail(msg string) error { return &Error{msg} }

var errSyntax = fail("not JSON: a syntax error")

// Parse reads one strict JSON value from text, with white space allowed before and
// after it, and nothing else.
func Parse(text []byte, opts Options) (*Value, error) {
	if !utf8.Valid(text) {
		return nil, fail("not valid UTF-8")
	}
	if len(text) >= 3 && text[0] == 0xEF && text[1] == 0xBB && text[2] == 0xBF {
		return nil, fail("starts with a byte order mark")
	}
	if opts.MaxDepth < 1 {
		return nil, errors.New("jsonstrict: MaxDepth must be at least 1")
	}
	p := parser{text: text, opts: opts}
	p.space()
	start := p.pos
	v, err := p.value(0, !opts.CheckOnly)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos != len(p.text) {
		return nil, fail("content after the JSON value")
	}
	if v == nil {
		v = &Value{Raw: bytes.TrimRight(text[start:], " \t\r\n")}
	}
	return v, nil
}

// keepChildren tells whether the values inside a container at depth are built.
func (p *parser) keepChildren(depth int) bool {
	return p.opts.KeepDepth == 0 || depth < p.opts.KeepDepth
}

type parser struct {
	text []byte
	pos  int
	opts Options
	// names is a stack of the member names of the objects being checked
	// without being built, for the duplicate rule: each object pushes its names
	// and drops them when it ends. A name without escapes is its text in the
	// input, so checking allocates nothing for it.
	names [][]byte
}

func (p *parser) space() {
	for p.pos < len(p.text) {
		switch p.text[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) literal(word string, kind Kind, keep bool) (*Value, error) {
	end := p.pos + len(word)
	if end > len(p.text) || string(p.text[p.pos:end]) != word {
		return nil, errSyntax
	}
	start := p.pos
	p.pos = end
	if !keep {
		return nil, nil
	}
	return &Value{Kind: kind, Raw: p.text[start:end]}, nil
}

// value reads one value at p.pos; keep says whether to build it (nil when not).
func (p *parser) value(depth int, keep bool) (*Value, error) {
	if p.pos >= len(p.text) {
		return nil, errSyntax
	}
	switch c := p.text[p.pos]; {
	case c == '{':
		return p.object(depth+1, keep)
	case c == '[':
		return p.array(depth+1, keep)
	case c == '"':
		start := p.pos
		s, err := p.str(keep)
		if err != nil || !keep {
			return nil, err
		}
		return &Value{Kind: String, Str: s, Raw: p.text[start:p.pos]}, nil
	case c == 't':
		return p.literal("true", True, keep)
	case c == 'f':
		return p.literal("false", False, keep)
	case c == 'n':
		return p.literal("null", Null, keep)
	case c == '-' || '0' <= c && c <= '9':
		return p.number(keep)
	}
	return nil, errSyntax
}

func (p *parser) object(depth int, keep bool) (*Value, error) {
	if depth > p.opts.MaxDepth {
		return nil, fail("nested deeper than the limit")
	}
	start := p.pos
	p.pos++ // {
	var v *Value
	if keep {
		v = &Value{Kind: Object}
	}
	keepChildren := keep && p.keepChildren(depth)
	firstName := len(p.names) // this object's names, when values are not kept, are p.names[firstName:]
	// Names are looked up by a linear scan while an object is small, and by an
	// index once it has linearScanLimit members, so a large object (arguments
	// are not under the token's size cap) costs linear time, not quadratic.
	var index map[string]int
	defer func() { p.names = p.names[:firstName] }()
	p.space()
	if p.pos < len(p.text) && p.text[p.pos] == '}' {
		p.pos++
		if keep {
			v.Raw = p.text[start:p.pos]
		}
		return v, nil
	}
	for {
		p.space()
		if p.pos >= len(p.text) || p.text[p.pos] != '"' {
			return nil, errSyntax
		}
		nameStart := p.pos
		name, err := p.str(keep)
		if err != nil {
			return nil, err
		}
		nameEnd := p.pos - 1 // the closing quote
		p.space()
		if p.pos >= len(p.text) || p.text[p.pos] != ':' {
			return nil, errSyntax
		}
		p.pos++
		p.space()
		itemStart := p.pos
		item, err := p.value(depth, keepChildren)
		if err != nil {
			return nil, err
		}
		if keep && !keepChildren {
			item = &Value{Raw: p.text[itemStart:p.pos]} // checked, not built
		}
		if !keep {
			raw := p.text[nameStart+1 : nameEnd]
			if bytes.IndexByte(raw, '\\') >= 0 {
				decoded, _ := (&parser{text: p.text, pos: nameStart}).str(true)
				raw = []byte(decoded)
			}
			seen := len(p.names) - firstName
			if seen >= linearScanLimit && index == nil {
				index = make(map[string]int, 2*seen)
				for i, n := range p.names[firstName:] {
					index[string(n)] = i
				}
			}
			duplicate := false
			if index != nil {
				_, duplicate = index[string(raw)]
				index[string(raw)] = seen
			} else {
				for _, n := range p.names[firstName:] {
					duplicate = duplicate || bytes.Equal(n, raw)
				}
			}
			if duplicate && !p.opts.LastDuplicateWins {
				return nil, fail("duplicate member name")
			}
			p.names = append(p.names, raw)
		} else {
			if len(v.Members) >= linearScanLimit && index == nil {
				index = make(map[string]int, 2*len(v.Members))
				for i, m := range v.Members {
					index[m.Name] = i
				}
			}
			duplicate := -1
			if index != nil {
				if i, ok := index[name]; ok {
					duplicate = i
				}
			} else {
				for i := range v.Members {
					if v.Members[i].Name == name {
						duplicate = i
						break
					}
				}
			}
			if duplicate < 0 && index != nil {
				index[name] = len(v.Members)
			}
			switch {
			case duplicate < 0:
				v.Members = append(v.Members, Member{name, item})
			case p.opts.LastDuplicateWins:
				v.Members[duplicate].Value = item
			default:
				return nil, fail("duplicate member name")
			}
		}
		p.space()
		if p.pos >= len(p.text) {
			return nil, errSyntax
		}
		switch p.text[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			if keep {
				v.Raw = p.text[start:p.pos]
			}
			return v, nil
		default:
			return nil, errSyntax
		}
	}
}

func (p *parser) array(depth int, keep bool) (*Value, error) {
	if depth > p.opts.MaxDepth {
		return nil, fail("nested deeper than the limit")
	}
	start := p.pos
	p.pos++ // [
	var v *Value
	if keep {
		v = &Value{Kind: Array}
	}
	keepChildren := keep && p.keepChildren(depth)
	p.space()
	if p.pos < len(p.text) && p.text[p.pos] == ']' {
		p.pos++
		if keep {
			v.Raw = p.text[start:p.pos]
		}
		return v, nil
	}
	for {
		p.space()
		itemStart := p.pos
		item, err := p.value(depth, keepChildren)
		if err != nil {
			return nil, err
		}
		if keep {
			if !keepChildren {
				item = &Value{Raw: p.text[itemStart:p.pos]}
			}
			v.Items = append(v.Items, item)
		}
		p.space()
		if p.pos >= len(p.text) {
			return nil, errSyntax
		}
		switch p.text[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			if keep {
				v.Raw = p.text[start:p.pos]
			}
			return v, nil
		default:
			return nil, errSyntax
		}
	}
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// str reads a string at p.pos (which is '"') and returns its decoded value
// ("" when build is false: the string is checked, not built).
func (p *parser) str(build bool) (string, error) {
	p.pos++
	start := p.pos
	// Fast path: no escape.
	for p.pos < len(p.text) {
		c := p.text[p.pos]
		if c == '"' {
			var s string
			if build {
				s = string(p.text[start:p.pos])
			}
			p.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", fail("not JSON: a control character in a string")
		}
		p.pos++
	}
	var buf []byte
	if build {
		buf = append(buf, p.text[start:p.pos]...)
	}
	for p.pos < len(p.text) {
		c := p.text[p.pos]
		switch {
		case c == '"':
			p.pos++
			if !build {
				return "", nil
			}
			return string(buf), nil
		case c < 0x20:
			return "", fail("not JSON: a control character in a string")
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.text) {
			return "", errSyntax
		}
		e := p.text[p.pos+1]
		p.pos += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(p.text[p.pos:])
			if !ok {
				return "", errSyntax
			}
			p.pos += 4
			if utf16.IsSurrogate(r) {
				// Only a high surrogate followed at once by an escaped low one
				// writes a character; any other surrogate escape is not Unicode.
				var low rune
				ok = r < 0xDC00 && p.pos+6 <= len(p.text) && p.text[p.pos] == '\\' && p.text[p.pos+1] == 'u'
				if ok {
					low, ok = hex4(p.text[p.pos+2:])
					ok = ok && 0xDC00 <= low && low <= 0xDFFF
				}
				if !ok {
					return "", fail("an escaped lone surrogate, which is not valid Unicode")
				}
				p.pos += 6
				r = utf16.DecodeRune(r, low)
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", errSyntax
		}
	}
	return "", errSyntax
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (p *parser) number(keep bool) (*Value, error) {
	start := p.pos
	t := p.text
	if t[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(t) && t[p.pos] == '0':
		p.pos++
	case p.pos < len(t) && isDigit(t[p.pos]):
		for p.pos < len(t) && isDigit(t[p.pos]) {
			p.pos++
		}
	default:
		return nil, errSyntax
	}
	integer := true
	if p.pos < len(t) && t[p.pos] == '.' {
		integer = false
		p.pos++
		if p.pos >= len(t) || !isDigit(t[p.pos]) {
			return nil, errSyntax
		}
		for p.pos < len(t) && isDigit(t[p.pos]) {
			p.pos++
		}
	}
	if p.pos < len(t) && (t[p.pos] == 'e' || t[p.pos] == 'E') {
		integer = false
		p.pos++
		if p.pos < len(t) && (t[p.pos] == '+' || t[p.pos] == '-') {
			p.pos++
		}
		if p.pos >= len(t) || !isDigit(t[p.pos]) {
			return nil, errSyntax
		}
		for p.pos < len(t) && isDigit(t[p.pos]) {
			p.pos++
		}
	}
	raw := t[start:p.pos]
	if integer {
		// Up to 15 digits are always within +/-(2^53 - 1) and a double: no parse needed.
		digits := len(raw)
		if raw[0] == '-' {
			digits--
		}
		if digits > 15 {
			n, err := strconv.ParseInt(string(raw), 10, 64)
			if err != nil || n > MaxSafeInteger || n < -MaxSafeInteger {
				return nil, fail("an integer literal outside +/-(2^53 - 1)")
			}
		}
	}
	var f float64
	if !integer || keep {
		var err error
		f, err = strconv.ParseFloat(string(raw), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fail("a number beyond the range of a double")
		}
	}
	if !keep {
		return nil, nil
	}
	return &Value{Kind: Number, Num: f, Literal: string(raw), Raw: raw}, nil
}

// Check refuses text that is not strict JSON within maxDepth levels; it is Parse
// without keeping the value.
func Check(text []byte, maxDepth int) error {
	_, err := Parse(text, Options{MaxDepth: maxDepth})
	return err
}

const hexDigits = "0123456789abcdef"

// AppendString writes s as a JSON string the way JSON.stringify and RFC 8785
// (3.2.2.2) do: only the quote, the backslash and the control characters are
// escaped, everything else is written as its UTF-8 bytes.
func AppendString(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			out = append(out, '\\', '"')
		case c == '\\':
			out = append(out, '\\', '\\')
		case c >= 0x20:
			out = append(out, c)
		case c == '\b':
			out = append(out, '\\', 'b')
		case c == '\t':
			out = append(out, '\\', 't')
		case c == '\n':
			out = append(out, '\\', 'n')
		case c == '\f':
			out = append(out, '\\', 'f')
		case c == '\r':
			out = append(out, '\\', 'r')
		default:
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
	}
	return append(out, '"')
}
