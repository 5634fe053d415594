package jsonstrict

import (
	"strconv"
	"strings"
	"testing"
)

func TestTheStrictReaderRefusesWhatTheProfileRefuses(t *testing.T) {
	for name, text := range map[string]string{
		"duplicate":             `{"a":1,"a":2}`,
		"nested duplicate":      `{"a":{"b":1,"b":1}}`,
		"escaped duplicate":     `{"a":1,"\u0061":2}`,
		"lone high surrogate":   `"\ud800"`,
		"lone low surrogate":    `"\udc00x"`,
		"reversed pair":         `"\udc00\ud800"`,
		"high then letter":      `"\ud800\u0041"`,
		"NaN":                   `NaN`,
		"Infinity":              `[Infinity]`,
		"beyond a double":       `1e400`,
		"integer beyond 2^53-1": `9007199254740992`,
		"negative beyond":       `-9007199254740992`,
		"huge integer":          `123456789012345678901234567890`,
		"BOM":                   "\xef\xbb\xbf{}",
		"invalid UTF-8":         "\"\xff\"",
		"control character":     "\"a\nb\"",
		"trailing content":      `{} {}`,
		"trailing comma":        `[1,]`,
		"leading zero":          `01`,
		"bare minus":            `-`,
		"single quotes":         `'a'`,
		"bad escape":            `"\x"`,
		"unterminated":          `"abc`,
		"empty":                 ``,
	} {
		if _, err := Parse([]byte(text), Options{MaxDepth: 33}); err == nil {
			t.Errorf("%s: %q accepted", name, text)
		}
	}
}

func TestTheStrictReaderAcceptsI_JSON(t *testing.T) {
	for _, text := range []string{
		`{}`, ` { "a" : [ 1 , 2.5 , -0 , 1e-400 , true , false , null ] } `, `9007199254740991`,
		`-9007199254740991`, `1.152921504606847e+18`, `"\ud83d\ude00 \u00e9 \""`, `1E2`, `0.5e-3`,
	} {
		if _, err := Parse([]byte(text), Options{MaxDepth: 33}); err != nil {
			t.Errorf("%q refused: %v", text, err)
		}
	}
	v, _ := Parse([]byte(`[1e-400, "\u002b", "\ud83d\ude00"]`), Options{MaxDepth: 2})
	if v.Items[0].Num != 0 || v.Items[1].Str != "+" || v.Items[2].Str != "😀" {
		t.Errorf("decoded %v", v.Items)
	}
}

func TestNestingIsBoundedByMaxDepth(t *testing.T) {
	deep := strings.Repeat("[", 33) + strings.Repeat("]", 33)
	if _, err := Parse([]byte(deep), Options{MaxDepth: 33}); err != nil {
		t.Errorf("33 levels refused: %v", err)
	}
	deeper := strings.Repeat("[", 34) + strings.Repeat("]", 34)
	if _, err := Parse([]byte(deeper), Options{MaxDepth: 33}); err == nil {
		t.Error("34 levels accepted with a limit of 33")
	}
	if _, err := Parse([]byte(strings.Repeat(`{"a":`, 100000)), Options{MaxDepth: 33}); err == nil {
		t.Error("100000 levels accepted")
	}
}

func TestLastDuplicateWinsOnlyWhenAsked(t *testing.T) {
	v, err := Parse([]byte(`{"a":1,"b":2,"a":3}`), Options{MaxDepth: 2, LastDuplicateWins: true})
	if err != nil || len(v.Members) != 2 || v.Get("a").Literal != "3" {
		t.Errorf("got %v, %v", v, err)
	}
}

func TestRawIsTheValueTextAsWritten(t *testing.T) {
	v, _ := Parse([]byte(`{"state": {"x" : 1.0} }`), Options{MaxDepth: 3})
	if string(v.Get("state").Raw) != `{"x" : 1.0}` {
		t.Errorf("raw %q", v.Get("state").Raw)
	}
}

func TestCheckingWithoutBuildingRefusesWhatBuildingRefuses(t *testing.T) {
	texts := []string{`{"a":{"b":1,"b":2}}`, `[{"x":"\ud800"}]`, `{"s":[9007199254740992]}`, `{"n":[1e400]}`,
		`{"a":[[[[1]]]]}`, `{"a":{"b":[1,2,{"c":"\u00e9"}]}}`, `{"a":"x","a":"y"}`, `{"s":{"a":1,"\u0061":2}}`, `{"s":{"\u0061":1,"a":2}}`, `[1,2,]`, `{"k":12345678901234567}`}
	for _, text := range texts {
		_, full := Parse([]byte(text), Options{MaxDepth: 4})
		_, shallow := Parse([]byte(text), Options{MaxDepth: 4, KeepDepth: 1})
		_, check := Parse([]byte(text), Options{MaxDepth: 4, CheckOnly: true})
		if (full == nil) != (shallow == nil) || (full == nil) != (check == nil) {
			t.Errorf("%s: built %v, kept one level %v, checked only %v", text, full, shallow, check)
		}
	}
	v, err := Parse([]byte(`{"iss":"x","state":{"deep":[1,{"a":2}]}}`), Options{MaxDepth: 4, KeepDepth: 2})
	if err != nil || v.Get("iss").Str != "x" || string(v.Get("state").Raw) != `{"deep":[1,{"a":2}]}` || v.Get("state").Get("deep").Items != nil {
		t.Errorf("KeepDepth 2: %+v %v", v, err)
	}
}

func TestAnEscapedDuplicateIsRefusedInEveryMode(t *testing.T) {
	for _, opts := range []Options{{MaxDepth: 4}, {MaxDepth: 4, KeepDepth: 1}, {MaxDepth: 4, CheckOnly: true}} {
		for _, text := range []string{`{"s":{"a":1,"\u0061":2}}`, `{"s":{"\u0061":1,"a":2}}`, `[{"ab":1,"a\u0062":2}]`} {
			if _, err := Parse([]byte(text), opts); err == nil {
				t.Errorf("%+v: %s accepted", opts, text)
			}
		}
	}
}

func TestALargeObjectIsReadInLinearTimeAndItsDuplicatesFound(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 50000 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":1`)
	}
	unique := b.String() + "}"
	duplicated := b.String() + `,"k7":2}`
	for _, opts := range []Options{{MaxDepth: 2}, {MaxDepth: 2, CheckOnly: true}} {
		if _, err := Parse([]byte(unique), opts); err != nil {
			t.Errorf("%+v: %v", opts, err)
		}
		if _, err := Parse([]byte(duplicated), opts); err == nil {
			t.Errorf("%+v: a duplicate among 50000 members was not found", opts)
		}
	}
	v, err := Parse([]byte(duplicated), Options{MaxDepth: 2, LastDuplicateWins: true})
	if err != nil || len(v.Members) != 50000 || v.Get("k7").Literal != "2" {
		t.Errorf("last duplicate wins: %v", err)
	}
}
