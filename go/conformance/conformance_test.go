package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestTheServerAnswersEachOperationWithTheRequestID(t *testing.T) {
	var k vectorKeys
	readVectors(t, "keys.json", &k)
	var jwk bytes.Buffer
	if err := json.Compact(&jwk, k.HS256); err != nil {
		t.Fatal(err)
	}
	var ring bytes.Buffer
	if err := json.Compact(&ring, k.VerifierJWKS); err != nil {
		t.Fatal(err)
	}
	shared := `{"keys":[{"kty":"oct","alg":"A256GCM","kid":"e","k":"AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA"},` +
		`{"kty":"oct","kid":"s","k":"AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA"}]}`
	in := `{"id":"a","op":"digest","arguments":{}}` + "\n" +
		`{"id":"b","op":"digest","arguments":[1]}` + "\n" +
		`{"id":"c","op":"load_key","jwk":` + jwk.String() + `}` + "\n" +
		`{"id":"d","op":"sign"}` + "\n" + "not json\n" +
		`{"id":"e","op":"digest"}` + "\n" +
		`{"id":"f","op":"digest","arguments":null}` + "\n" +
		`{"id":"g","op":"load_key","jwks":` + ring.String() + `}` + "\n" +
		`{"id":"h","op":"load_key","jwks":` + shared + `}` + "\n" +
		`{"id":"i","op":"verify","keys":` + shared + `,"token":"x","issuer":"i","user":"u","tool":"t","now":1}` + "\n"
	var out bytes.Buffer
	var s Server
	if err := s.Serve(bytes.NewReader([]byte(in)), &out); err != nil {
		t.Fatal(err)
	}
	want := `{"digest":"RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o","id":"a"}` + "\n" +
		`{"id":"b","unbindable":true}` + "\n" +
		`{"id":"c","loaded":true}` + "\n" +
		`{"id":"d","unsupported":true}` + "\n" +
		`{"error":"a request must be one JSON object per line","id":null}` + "\n" +
		`{"digest":"RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o","id":"e"}` + "\n" +
		`{"id":"f","unbindable":true}` + "\n" +
		`{"id":"g","loaded":true}` + "\n" +
		`{"id":"h","loaded":false}` + "\n"
	prefix := `{"error":"the verifier's ring does not load: `
	got, last, _ := strings.Cut(out.String(), "\n"+prefix)
	if got+"\n" != want || !strings.HasSuffix(last, `","id":"i"}`+"\n") {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestServeAnswersTheLastLineWithoutANewlineAndSkipsBlankLines(t *testing.T) {
	in := "\n" + `{"id":1,"op":"digest"}` + "\n  \n" + `{"id":2,"op":"digest","arguments":"x"}`
	var out bytes.Buffer
	if err := Serve(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := `{"digest":"RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o","id":1}` + "\n" + `{"id":2,"unbindable":true}` + "\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestAJobNamesExactlyOneNonEmptyTarget(t *testing.T) {
	name, empty := "deploy", ""
	for _, bad := range []TargetMembers{{}, {Tool: &name, Prompt: &name}, {Tool: &empty}, {Tool: &name, Resource: &name}} {
		if target, err := bad.Target(); err == nil {
			t.Errorf("%+v read as %v", bad, target)
		}
	}
	for _, good := range []struct {
		members TargetMembers
		aud     string
	}{
		{TargetMembers{Tool: &name}, "tools/call:deploy"},
		{TargetMembers{Prompt: &name}, "prompts/get:deploy"},
		{TargetMembers{Resource: &name}, "resources/read:deploy"},
	} {
		target, err := good.members.Target()
		if err != nil || target.Aud() != good.aud {
			t.Errorf("%+v: %v %v, want %s", good.members, target, err, good.aud)
		}
	}
}

func TestAVerifyJobWithoutItsRequiredMembersIsAnErrorNotAVerdict(t *testing.T) {
	var k vectorKeys
	readVectors(t, "keys.json", &k)
	var s Server
	ring := string(bytes.Join(bytes.Fields(k.VerifierJWKS), nil))
	for _, line := range []string{
		`{"id":1,"op":"verify","keys":` + ring + `,"token":"x","issuer":"i","user":"u","tool":"t"}`,        // no now
		`{"id":1,"op":"verify","keys":` + ring + `,"token":"x","issuer":"i","user":"","tool":"t","now":1}`, // an empty user
		`{"id":1,"op":"verify","keys":` + ring + `,"token":"x","issuer":"i","user":"u","now":1}`,           // no target
		`{"id":1,"op":"verify","keys":` + ring + `,"token":"x","issuer":"i","user":"u","tool":"t","now":1,"leway":5}`,
	} {
		reply := s.Answer([]byte(line))
		if _, isError := reply["error"]; !isError || reply["valid"] != nil {
			t.Errorf("%s: %v", line, reply)
		}
	}
	// A token that is not a string is a verdict: malformed (step 1).
	reply := s.Answer([]byte(`{"id":1,"op":"verify","keys":` + ring + `,"token":5,"issuer":"i","user":"u","tool":"t","now":1}`))
	if reply["valid"] != false || reply["reason"] != "malformed" {
		t.Errorf("a number as the token: %v", reply)
	}
}

func TestOneServerAnswersFromSeveralGoroutines(t *testing.T) {
	var k vectorKeys
	readVectors(t, "keys.json", &k)
	var ring bytes.Buffer
	if err := json.Compact(&ring, k.VerifierJWKS); err != nil {
		t.Fatal(err)
	}
	var s Server
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			line := fmt.Sprintf(`{"id":%d,"op":"verify","keys":%s,"token":"x","issuer":"i","user":"u","tool":"t","now":1}`, i, ring.String())
			reply := s.Answer([]byte(line))
			if reply["valid"] != false || reply["reason"] != "malformed" || string(reply["id"].(json.RawMessage)) != fmt.Sprint(i) {
				t.Errorf("goroutine %d: %v", i, reply)
			}
		}()
	}
	wg.Wait()
}
