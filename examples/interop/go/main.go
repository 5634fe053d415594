// Command interop checks and issues mrtr-state tokens (spec/profile.md) with
// golang-jwt v5, for the cross-language tests in tests/interop:
//
//	interop vectors <dir>   check spec/vectors (tokens, arguments, invalid keys); one line
//	                        per vector, then "N passed, M failed"
//	interop verify          stdin {"jobs": [...]} -> stdout {"results": [...]}
//	interop mint            stdin {"jobs": [...]} -> stdout {"results": [...]}
//	interop conformance     the JSON-lines protocol of mrtr-state conformance (conformance.go)
//
// A job that cannot be read (bad JSON, a missing member, a bad key) stops the
// program with a message on stderr and exit status 2.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
		return checkVectors(args[1], stdout)
	case len(args) == 1 && args[0] == "conformance":
		return conformance(stdin, stdout)
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

// target names what a request addresses; exactly one member is set.
type target struct {
	Tool     *string `json:"tool"`
	Prompt   *string `json:"prompt"`
	Resource *string `json:"resource"`
}

// aud maps the target to the aud claim (profile, section 3.5).
func (t target) aud() (string, error) {
	var kinds []string
	var name string
	for _, candidate := range []struct {
		method string
		value  *string
	}{{"tools/call", t.Tool}, {"prompts/get", t.Prompt}, {"resources/read", t.Resource}} {
		if candidate.value != nil {
			kinds = append(kinds, candidate.method)
			name = *candidate.value
		}
	}
	if len(kinds) != 1 || name == "" {
		return "", errors.New(`give exactly one non-empty "tool", "prompt" or "resource"`)
	}
	return kinds[0] + ":" + name, nil
}

// verifyRequest is a verify job without its keys (the vectors share one key set).
type verifyRequest struct {
	Token         json.RawMessage `json:"token"`
	Issuer        string          `json:"issuer"`
	User          string          `json:"user"`
	Arguments     json.RawMessage `json:"arguments"`
	Now           *int64          `json:"now"`
	MaxLifetime   *int64          `json:"max_lifetime"`
	Leeway        *int64          `json:"leeway"`
	MaxTokenBytes *int64          `json:"max_token_bytes"`
	// RequireArguments: a token for a tool or prompt must carry args_sha256 (step 19).
	RequireArguments *bool `json:"require_arguments"`
	target
}

type verdict struct {
	Valid  bool            `json:"valid"`
	State  json.RawMessage `json:"state,omitempty"`
	Reason string          `json:"reason,omitempty"`
}

func verifyJob(raw json.RawMessage) (verdict, error) {
	var job struct {
		Keys json.RawMessage `json:"keys"`
		verifyRequest
	}
	if err := strictUnmarshal(bytes.NewReader(raw), &job); err != nil {
		return verdict{}, err
	}
	keys, err := parseJWKS(job.Keys)
	if err != nil {
		return verdict{}, err
	}
	return job.verifyRequest.run(keys)
}

// run reads the request's options, with the profile's defaults, and verifies its token.
func (job verifyRequest) run(keys ring) (verdict, error) {
	v := verifier{keys: keys, issuer: job.Issuer, maxLifetime: 600, leeway: 0, maxTokenBytes: defaultMaxTokenBytes}
	if v.issuer == "" {
		return verdict{}, errors.New(`"issuer" must be a non-empty string`)
	}
	if job.MaxLifetime != nil {
		v.maxLifetime = *job.MaxLifetime
	}
	if job.Leeway != nil {
		v.leeway = *job.Leeway
	}
	if job.MaxTokenBytes != nil {
		v.maxTokenBytes = int(*job.MaxTokenBytes)
	}
	v.requireArguments = job.RequireArguments != nil && *job.RequireArguments
	if v.maxLifetime < 1 || v.leeway < 0 || v.leeway > 300 || v.maxTokenBytes < 512 {
		return verdict{}, errors.New("max_lifetime must be >= 1, leeway 0 to 300, max_token_bytes >= 512")
	}
	aud, err := job.aud()
	if err != nil {
		return verdict{}, err
	}
	if job.Token == nil || job.User == "" || job.Now == nil {
		return verdict{}, errors.New(`"token", "user" (non-empty) and "now" are required`)
	}
	arguments, err := argumentsObject(job.Arguments)
	if err != nil {
		return verdict{}, err
	}
	if arguments == nil {
		arguments = []byte("{}") // a request without arguments is treated as having {}
	}
	var token string
	if job.Token[0] != '"' || json.Unmarshal(job.Token, &token) != nil {
		return verdict{Reason: "malformed"}, nil // step 1: a token that is not a string
	}
	state, err := v.verify(token, request{user: job.User, aud: aud, arguments: arguments, now: *job.Now})
	var refused *refusal
	if errors.As(err, &refused) {
		return verdict{Reason: refused.reason}, nil
	}
	if err != nil {
		return verdict{}, err
	}
	return verdict{Valid: true, State: state}, nil
}

func mintJob(raw json.RawMessage) (map[string]string, error) {
	var job struct {
		Key       json.RawMessage `json:"key"`
		Issuer    string          `json:"issuer"`
		User      string          `json:"user"`
		Arguments json.RawMessage `json:"arguments"`
		Now       *int64          `json:"now"`
		TTL       *int64          `json:"ttl"`
		State     json.RawMessage `json:"state"`
		JTI       string          `json:"jti"`
		target
	}
	if err := strictUnmarshal(bytes.NewReader(raw), &job); err != nil {
		return nil, err
	}
	k, err := parseJWK(job.Key)
	if err != nil {
		return nil, err
	}
	aud, err := job.aud()
	if err != nil {
		return nil, err
	}
	if job.Issuer == "" || job.User == "" || job.Now == nil || *job.Now < 0 || job.TTL == nil || *job.TTL < 1 || job.State == nil {
		return nil, errors.New(`"issuer", "user" (non-empty), "now" (>= 0), "ttl" (>= 1) and "state" are required`)
	}
	arguments, err := argumentsObject(job.Arguments)
	if err != nil {
		return nil, err
	}
	token, err := mint(minting{
		key: k, issuer: job.Issuer, user: job.User, aud: aud, arguments: arguments,
		now: *job.Now, ttl: *job.TTL, state: job.State, jti: job.JTI,
	})
	if err != nil {
		return nil, err
	}
	return map[string]string{"token": token}, nil
}

// argumentsObject returns the job's arguments as JSON text, nil when absent. Any
// JSON value is taken: arguments that are present but not an object (null, an
// array, a string, a number, a boolean) are unbindable (profile, sections 3.4 and
// 8.2), which canonicalArguments decides, never "{}".
func argumentsObject(raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return nil, nil
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New(`"arguments" must be a JSON value`)
	}
	return raw, nil
}

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
