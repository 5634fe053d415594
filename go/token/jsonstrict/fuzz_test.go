package jsonstrict

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzStrictReader checks the strict reader against encoding/json: what it
// accepts is JSON, and every string it decodes is the one encoding/json decodes
// (so no escape is read two ways); and its three modes (build everything, keep
// two levels, check only) accept and refuse exactly the same texts. Seeded with the argument vectors and the
// shapes the reader refuses.
func FuzzStrictReader(f *testing.F) {
	var v struct {
		Vectors []struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"vectors"`
	}
	text, err := os.ReadFile(filepath.Join("..", "..", "..", "spec", "vectors", "arguments.json"))
	if err == nil {
		err = json.Unmarshal(text, &v)
	}
	if err != nil {
		f.Fatal(err)
	}
	for _, vector := range v.Vectors {
		f.Add([]byte(vector.Arguments))
	}
	for _, seed := range []string{`{"a":1,"a":2}`, `"\ud800"`, `1e400`, `9007199254740992`, "\xef\xbb\xbf{}", `[[[[]]]]`, `-0`, `1e-400`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		value, err := Parse(text, Options{MaxDepth: 33})
		_, shallow := Parse(text, Options{MaxDepth: 33, KeepDepth: 2})
		_, checked := Parse(text, Options{MaxDepth: 33, CheckOnly: true})
		if (err == nil) != (shallow == nil) || (err == nil) != (checked == nil) {
			t.Fatalf("building, keeping two levels and checking only disagree on %q: %v, %v, %v", text, err, shallow, checked)
		}
		if err != nil {
			return
		}
		if !json.Valid(text) {
			t.Fatalf("accepted text encoding/json refuses: %q", text)
		}
		var check func(v *Value)
		check = func(v *Value) {
			switch v.Kind {
			case String:
				var s string
				if json.Unmarshal(v.Raw, &s) != nil || s != v.Str {
					t.Fatalf("a string read as %q; encoding/json reads %q", v.Str, s)
				}
			case Array:
				for _, item := range v.Items {
					check(item)
				}
			case Object:
				for _, m := range v.Members {
					check(m.Value)
				}
			}
		}
		check(value)
	})
}
