// Command interop checks and issues mrtr-state tokens (spec/profile.md) with the
// repository's Go module (../../../go), for the cross-language tests in tests/interop:
//
//	interop vectors <dir>   check spec/vectors (tokens, arguments, invalid keys); one line
//	                        per vector, then "N passed, M failed"
//	interop verify          stdin {"jobs": [...]} -> stdout {"results": [...]}
//	interop mint            stdin {"jobs": [...]} -> stdout {"results": [...]}
//	interop conformance     the JSON-lines protocol of mrtr-state conformance
//
// The vectors and conformance commands are the module's own conformance.CheckVectors
// and conformance.Serve; verify and mint are the jobs of jobs.go.
//
// A job that cannot be read (bad JSON, a missing member, a bad key) stops the
// program with a message on stderr and exit status 2.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mrtr-state/mrtr-state/go/conformance"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		var failed vectorsFailed
		if errors.As(err, &failed) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	switch {
	case len(args) == 2 && args[0] == "vectors":
		_, failed, err := conformance.CheckVectors(args[1], stdout)
		if err == nil && failed > 0 {
			err = vectorsFailed{failed}
		}
		return err
	case len(args) == 1 && args[0] == "conformance":
		return conformance.Serve(stdin, stdout)
	case len(args) == 1 && (args[0] == "verify" || args[0] == "mint"):
		var batch struct {
			Jobs []json.RawMessage `json:"jobs"`
		}
		if err := strictUnmarshal(stdin, &batch); err != nil {
			return fmt.Errorf(`stdin must be {"jobs": [...]}: %w`, err)
		}
		if batch.Jobs == nil {
			return errors.New(`stdin must be {"jobs": [...]}: no "jobs" array`)
		}
		results := make([]any, len(batch.Jobs))
		for i, job := range batch.Jobs {
			var err error
			if args[0] == "verify" {
				results[i], err = verifyJob(job)
			} else {
				results[i], err = mintJob(job)
			}
			if err != nil {
				return fmt.Errorf("%s job %d: %w", args[0], i, err)
			}
		}
		return writeJSON(stdout, map[string]any{"results": results})
	}
	return errors.New("usage: interop vectors <dir> | interop verify | interop mint | interop conformance")
}

// vectorsFailed is the error when at least one vector failed (exit status 1).
type vectorsFailed struct{ failed int }

func (e vectorsFailed) Error() string { return fmt.Sprintf("%d vectors failed", e.failed) }

// strictUnmarshal decodes one JSON value and refuses unknown members, so that a
// misspelt option is an error rather than a silent default.
func strictUnmarshal(r io.Reader, into any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("content after the JSON value")
	}
	return nil
}

// writeJSON writes one JSON value with characters such as < > & left unescaped.
func writeJSON(w io.Writer, value any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(value)
}
