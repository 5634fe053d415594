package conformance_test

import (
	"os"
	"strings"

	"github.com/mrtr-state/mrtr-state/go/conformance"
)

// Serve answers the runner's requests, one line each, carrying each request's id.
func ExampleServe() {
	requests := `{"id": "1", "op": "digest", "arguments": {}}` + "\n" +
		`{"id": "2", "op": "digest", "arguments": null}` + "\n" +
		`{"id": "3", "op": "load_key", "jwk": {"kty": "oct", "kid": "weak", "k": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}` + "\n" +
		`{"id": "4", "op": "sign"}` + "\n"
	if err := conformance.Serve(strings.NewReader(requests), os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// {"digest":"RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o","id":"1"}
	// {"id":"2","unbindable":true}
	// {"id":"3","loaded":false}
	// {"id":"4","unsupported":true}
}
