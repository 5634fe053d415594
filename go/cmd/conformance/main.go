// Command conformance speaks the JSON-lines protocol of `mrtr-state
// conformance` (docs/conformance.md) for this Go module: one request per line
// on stdin, one answer per line on stdout, in order. It claims the strict class
// for both forms:
//
//	mrtr-state conformance --class strict -- ./bin/conformance
//
// It is package conformance's Serve, which any Go server built on this module
// can call the same way.
package main

import (
	"fmt"
	"os"

	"github.com/mrtr-state/mrtr-state/go/conformance"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: conformance < requests.jsonl (the protocol of mrtr-state conformance)")
		os.Exit(2)
	}
	if err := conformance.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}
