package jsonstrict

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// sameAsMarshalThenParse checks that AppendMarshal writes what json.Marshal
// writes and refuses exactly what json.Marshal or the check-only Parse of its
// text refuses, with the same kind of error.
func sameAsMarshalThenParse(t *testing.T, name string, v any, maxDepth int) {
	t.Helper()
	text, marshalErr := json.Marshal(v)
	var checkErr error
	if marshalErr == nil {
		_, checkErr = Parse(text, Options{MaxDepth: maxDepth, CheckOnly: true})
	}
	got, err := AppendMarshal([]byte("prefix:"), v, maxDepth)
	var refused *Error
	switch {
	case marshalErr == nil && checkErr == nil:
		if err != nil || string(got) != "prefix:"+string(text) {
			t.Errorf("%s: wrote %q, %v; json.Marshal writes %q", name, got, err, text)
		}
	case err == nil:
		t.Errorf("%s: accepted (%q); json.Marshal and Parse say %v, %v", name, got, marshalErr, checkErr)
	case marshalErr != nil && !errors.As(err, &refused) && err.Error() != marshalErr.Error():
		t.Errorf("%s: %v; json.Marshal says %v", name, err, marshalErr)
	case marshalErr == nil && (!errors.As(err, &refused) || err.Error() != checkErr.Error()):
		t.Errorf("%s: %v; Parse says %v", name, err, checkErr)
	}
}

func nest(depth int, inner any, object bool) any {
	v := inner
	for range depth {
		if object {
			v = map[string]any{"a": v}
		} else {
			v = []any{v}
		}
	}
	return v
}

type point struct {
	X int64  `json:"x"`
	Y string `json:"y"`
}

func TestAppendMarshalWritesAndRefusesAsMarshalThenParse(t *testing.T) {
	many := map[string]any{}
	for _, name := range strings.Fields("q w e r t y u i o p a s d f g h j k l z x c v b n m") {
		many[name] = name
	}
	cases := map[string]any{
		"nil": nil, "true": true, "false": false, "empty string": "", "empty map": map[string]any{},
		"empty array": []any{}, "nil map": map[string]any(nil), "nil array": []any(nil),
		"html":             "<a href='x'>&amp;</a>",
		"escapes":          "q\"b\\s\b\f\n\r\t\x00\x1f\x7f/",
		"line separators":  "a\u2028b\u2029c",
		"invalid UTF-8":    "a\xffb\xc3(c\xed\xa0\x80",
		"non-ASCII":        "héllo, 世界, 🎉",
		"safe int":         int64(MaxSafeInteger),
		"unsafe int":       int64(MaxSafeInteger + 1),
		"negative unsafe":  -MaxSafeInteger - 1,
		"min int64":        int64(math.MinInt64),
		"float 2^53-1":     float64(MaxSafeInteger),
		"float 2^53":       float64(MaxSafeInteger + 1),
		"float -2^60":      -math.Pow(2, 60),
		"float 1e20":       1e20,
		"float 1e21":       1e21,
		"float 1e-7":       1e-7,
		"float 1e-6":       1e-6,
		"float -0":         math.Copysign(0, -1),
		"float tiny":       5e-324,
		"float max":        math.MaxFloat64,
		"float 0.1":        0.1,
		"float 3":          3.0,
		"NaN":              math.NaN(),
		"nested Inf":       map[string]any{"a": []any{1, math.Inf(-1)}},
		"many members":     many,
		"struct":           point{X: 1, Y: "<"},
		"struct unsafe":    []any{point{X: 1 << 60}},
		"int32":            int32(7),
		"uint64 unsafe":    map[string]any{"n": uint64(1 << 62)},
		"strings":          []string{"a", "b"},
		"raw duplicate":    map[string]any{"r": json.RawMessage(`{"a":1,"a":2}`)},
		"raw surrogate":    []any{json.RawMessage(`"\ud800"`)},
		"raw fine":         []any{json.RawMessage(` {"a" : [1, 2]} `)},
		"number unsafe":    json.Number("9007199254740993"),
		"number fine":      []any{json.Number("1.5e3")},
		"channel":          map[string]any{"c": make(chan int)},
		"depth 32 arrays":  nest(32, 1, false),
		"depth 33 arrays":  nest(33, 1, false),
		"depth 32 objects": nest(32, "x", true),
		"depth 33 objects": nest(33, "x", true),
		"depth 33 empty":   nest(32, []any{}, true),
		"struct at 31":     nest(31, point{}, false),
		"struct at 32":     nest(32, point{}, false),
		"scalar at 32":     nest(32, int32(1), false),
		"mixed":            map[string]any{"b": []any{1, "x", nil, map[string]any{"c": 2.5}}, "a": false},
	}
	for name, v := range cases {
		sameAsMarshalThenParse(t, name, v, 32)
	}
	if _, err := AppendMarshal(nil, 1, 0); err == nil {
		t.Error("MaxDepth 0 accepted")
	}
}

// FuzzAppendMarshal checks AppendMarshal against json.Marshal and Parse on
// every value json.Unmarshal makes into an any, at several depth limits.
func FuzzAppendMarshal(f *testing.F) {
	for _, seed := range []string{`{"b":[1,"x<>&\u2028",null,{"c":2.5e-9}],"a":false}`, `9007199254740993`,
		`[[[[1]]]]`, `{"z":1,"a":{"y":[],"x":{}}}`, `-0`, `1e300`, `"\ud83c\udf89"`} {
		f.Add([]byte(seed), uint8(3))
	}
	f.Fuzz(func(t *testing.T, text []byte, depth uint8) {
		var v any
		if json.Unmarshal(text, &v) != nil {
			return
		}
		sameAsMarshalThenParse(t, string(text), v, 1+int(depth%40))
	})
}
