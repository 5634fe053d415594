package refusal

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The codes and sentences against spec/reasons.json, the table every language's tests read: the same
// codes in the same order (Reasons), and each code's Message word for word.
func TestReasonsAreTheContractsCodesAndSentences(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("..", "..", "spec", "reasons.json"))
	if err != nil {
		t.Fatal(err)
	}
	var contract struct {
		Reasons []struct {
			Code     string `json:"code"`
			Sentence string `json:"sentence"`
		} `json:"reasons"`
	}
	if err := json.Unmarshal(text, &contract); err != nil {
		t.Fatal(err)
	}
	if len(contract.Reasons) != len(Reasons) {
		t.Fatalf("spec/reasons.json has %d codes, Reasons %d", len(contract.Reasons), len(Reasons))
	}
	for i, want := range contract.Reasons {
		got := Reasons[i]
		if string(got) != want.Code {
			t.Errorf("Reasons[%d] = %q, spec/reasons.json says %q", i, got, want.Code)
		}
		if !got.Valid() {
			t.Errorf("%q is not Valid", got)
		}
		if got.Message() != want.Sentence {
			t.Errorf("%q: Message() = %q, spec/reasons.json says %q", got, got.Message(), want.Sentence)
		}
	}
	if len(messages) != len(Reasons) {
		t.Errorf("%d messages for %d codes", len(messages), len(Reasons))
	}
}
