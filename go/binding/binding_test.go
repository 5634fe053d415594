package binding

import (
	"errors"
	"math"
	"testing"
)

func TestNumbersAreWrittenAsECMAScriptWritesThem(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0", math.Copysign(0, -1): "0", 1: "1", -1: "-1", 0.1: "0.1", 1e21: "1e+21", 1e20: "100000000000000000000",
		1e-6: "0.000001", 1e-7: "1e-7", 5e-324: "5e-324", 333333333.3333333: "333333333.3333333",
		1.7976931348623157e308: "1.7976931348623157e+308", 123e-20: "1.23e-18", 4.5: "4.5", -1e-7: "-1e-7",
		9007199254740991: "9007199254740991", 2.5e25: "2.5e+25",
	} {
		if got := string(AppendNumber(nil, f)); got != want {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
}

func TestANumberWhoseNearestDoubleReaches2To53IsUnbindable(t *testing.T) {
	// Decision D1: 9007199254740991.5 reads as 2^53.
	for _, args := range []string{
		`{"id":9007199254740991.5}`, `{"id":9007199254740992}`, `{"id":-9007199254740992.0}`, `{"id":1e23}`,
		`{"a":[{"b":1.152921504606847e+18}]}`, `{"x":1e400}`, `{"s":"\ud800"}`,
	} {
		if d, err := Digest([]byte(args)); !errors.Is(err, ErrUnbindable) {
			t.Errorf("%s bound to %q", args, d)
		}
	}
	for _, args := range []string{`{"id":9007199254740991}`, `{"id":9007199254740990.5}`, `{"id":-9007199254740991.0}`, `{"t":1e-400}`} {
		if _, err := Digest([]byte(args)); err != nil {
			t.Errorf("%s refused: %v", args, err)
		}
	}
}

func TestArgumentsThatAreNotAnObjectAreUnbindable(t *testing.T) {
	// Decision D2: null, an array, a string, a number, a boolean.
	for _, args := range []string{`null`, `[]`, `[{"a":1}]`, `"x"`, `1`, `true`, `false`, ``, `{`} {
		if _, err := Digest([]byte(args)); !errors.Is(err, ErrUnbindable) {
			t.Errorf("%q is bindable", args)
		}
	}
	if d, err := (Request{User: "u", Target: ToolTarget("t")}).Digest(); d != "" || err != nil {
		t.Error("a request without arguments has a digest")
	}
}

func TestMembersAreOrderedByUTF16CodeUnits(t *testing.T) {
	got, err := Canonicalize([]byte(`{"\ufffd":1,"\ud800\udc00":2,"\ue000":3,"b":4,"a":5}`))
	if err != nil || string(got) != "{\"a\":5,\"b\":4,\"\U00010000\":2,\"\ue000\":3,\"\ufffd\":1}" {
		t.Errorf("got %s, %v", got, err)
	}
}

func TestTheAudienceIsMethodColonName(t *testing.T) {
	for target, aud := range map[Target]string{
		ToolTarget("deploy"): "tools/call:deploy", PromptTarget("p"): "prompts/get:p",
		ResourceTarget("file:///a:b"): "resources/read:file:///a:b",
	} {
		if target.Aud() != aud {
			t.Errorf("%v: %s", target, target.Aud())
		}
		if back, ok := ParseAudience(aud); !ok || back != target {
			t.Errorf("ParseAudience(%s) = %v", aud, back)
		}
	}
	for _, aud := range []string{"tools/call", "tools/call:", "x:y", ""} {
		if _, ok := ParseAudience(aud); ok {
			t.Errorf("ParseAudience(%q) accepted", aud)
		}
	}
	if (Target{Kind: "tool"}).Check() == nil || (Request{Target: ToolTarget("t")}).Check() == nil {
		t.Error("an empty name or user passed")
	}
}
