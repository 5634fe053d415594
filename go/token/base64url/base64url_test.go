package base64url

import "testing"

func TestDecodeRefusesEveryNonCanonicalForm(t *testing.T) {
	for _, s := range []string{"AA==", "A", "AB", "AQ\n", "A+/A", "AA A", "AAB"} {
		if _, err := Decode(s); err == nil {
			t.Errorf("Decode(%q) accepted a non-canonical encoding", s)
		}
	}
	for _, s := range []string{"", "AA", "AAA", "AAAA", "-_8"} {
		b, err := Decode(s)
		if err != nil || Encode(b) != s {
			t.Errorf("Decode(%q) = %v; the canonical form must round-trip", s, err)
		}
	}
}
