// Package conformance answers the JSON-lines protocol of `mrtr-state
// conformance` (docs/conformance.md) with this module's public API: verify
// through a Sealer, digest through binding.Digest, load_key through
// keys.ParseJWK or keys.ParseJWKS. cmd/conformance serves it on stdin and stdout; the vector
// tests of the module use the same Verify.
package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/keys"
)

// VerifyJob is a verify request without its keys: the token, the verifier's
// settings (nil: the profile's default) and the request being served.
type VerifyJob struct {
	Token            json.RawMessage `json:"token"`
	Issuer           string          `json:"issuer"`
	User             string          `json:"user"`
	Tool             *string         `json:"tool"`
	Prompt           *string         `json:"prompt"`
	Resource         *string         `json:"resource"`
	Arguments        json.RawMessage `json:"arguments"`
	Now              *int64          `json:"now"`
	MaxLifetime      *int64          `json:"max_lifetime"`
	Leeway           *int64          `json:"leeway"`
	MaxTokenBytes    *int64          `json:"max_token_bytes"`
	RequireArguments *bool           `json:"require_arguments"`
}

// Verdict is the answer to a verify job.
type Verdict struct {
	Valid  bool            `json:"valid"`
	State  json.RawMessage `json:"state,omitempty"`
	Reason string          `json:"reason,omitempty"`
}

// Target reads the job's one target.
func (j *VerifyJob) Target() (binding.Target, error) {
	var found []binding.Target
	for kind, name := range map[binding.Kind]*string{binding.Tool: j.Tool, binding.Prompt: j.Prompt, binding.Resource: j.Resource} {
		if name != nil {
			found = append(found, binding.Target{Kind: kind, Name: *name})
		}
	}
	if len(found) != 1 || found[0].Name == "" {
		return binding.Target{}, errors.New(`give exactly one non-empty "tool", "prompt" or "resource"`)
	}
	return found[0], nil
}

// Verify runs the job with ring. An error means the job itself is wrong (a
// missing member, an option out of range), never a verdict.
func (j *VerifyJob) Verify(ring *keys.Keyring) (Verdict, error) {
	target, err := j.Target()
	if err != nil {
		return Verdict{}, err
	}
	if j.Now == nil || j.User == "" || j.Token == nil {
		return Verdict{}, errors.New(`"token", "user" (non-empty) and "now" are required`)
	}
	now := time.Unix(*j.Now, 0)
	opts := []mrtrstate.Option{mrtrstate.WithClock(func() time.Time { return now })}
	if j.MaxLifetime != nil {
		opts = append(opts, mrtrstate.WithMaxLifetime(time.Duration(*j.MaxLifetime)*time.Second))
	}
	if j.Leeway != nil {
		opts = append(opts, mrtrstate.WithLeeway(time.Duration(*j.Leeway)*time.Second))
	}
	if j.MaxTokenBytes != nil {
		opts = append(opts, mrtrstate.WithMaxTokenBytes(int(*j.MaxTokenBytes)))
	}
	if j.RequireArguments != nil {
		opts = append(opts, mrtrstate.WithRequireArguments(*j.RequireArguments))
	}
	sealer, err := mrtrstate.New(ring, j.Issuer, opts...)
	if err != nil {
		return Verdict{}, err
	}
	arguments := j.Arguments
	if arguments == nil {
		arguments = json.RawMessage("{}") // absent arguments are {} (profile 3.4)
	}
	var tok string
	if len(j.Token) == 0 || j.Token[0] != '"' || json.Unmarshal(j.Token, &tok) != nil {
		return Verdict{Reason: string(mrtrstate.Malformed)}, nil // step 1: a token that is not a string
	}
	state, err := sealer.Open(context.Background(), tok, mrtrstate.Request{User: j.User, Target: target, Arguments: arguments})
	var refused *mrtrstate.InvalidRequestState
	if errors.As(err, &refused) {
		return Verdict{Reason: string(refused.Reason)}, nil
	}
	if err != nil {
		return Verdict{}, err
	}
	return Verdict{Valid: true, State: state}, nil
}

// Server answers protocol requests; it keeps the rings it has loaded, since the
// runner sends the same keys with every request.
type Server struct {
	mu    sync.Mutex
	rings map[string]*keys.Keyring
}

// ring loads (once) the JWKS text.
func (s *Server) ring(jwks json.RawMessage) (*keys.Keyring, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.rings[string(jwks)]; r != nil {
		return r, nil
	}
	r, err := keys.ParseJWKS(jwks)
	if err != nil {
		return nil, err
	}
	if s.rings == nil || len(s.rings) > 64 {
		s.rings = map[string]*keys.Keyring{}
	}
	s.rings[string(jwks)] = r
	return r, nil
}

// Answer is the reply to one request line (without a trailing newline).
func (s *Server) Answer(line []byte) map[string]any {
	var request map[string]json.RawMessage
	if err := json.Unmarshal(line, &request); err != nil || request == nil {
		return map[string]any{"id": nil, "error": "a request must be one JSON object per line"}
	}
	id := request["id"]
	if id == nil {
		id = json.RawMessage("null")
	}
	reply := map[string]any{"id": id}
	var op string
	_ = json.Unmarshal(request["op"], &op)
	switch op {
	case "verify":
		var job VerifyJob
		var verdict Verdict
		ring, err := s.ring(request["keys"])
		if err != nil {
			// No verifier holds such a ring: an error, not a verdict (docs/conformance.md).
			err = fmt.Errorf("the verifier's ring does not load: %w", err)
		} else {
			delete(request, "id")
			delete(request, "op")
			delete(request, "keys")
			text, _ := json.Marshal(request)
			err = strictUnmarshal(text, &job)
		}
		if err == nil {
			verdict, err = job.Verify(ring)
		}
		switch {
		case err != nil:
			reply["error"] = err.Error()
		case verdict.Valid:
			reply["valid"], reply["state"] = true, verdict.State
		default:
			reply["valid"], reply["reason"] = false, verdict.Reason
		}
	case "digest":
		arguments := request["arguments"]
		if arguments == nil {
			arguments = json.RawMessage("{}") // absent arguments are {} (profile 3.4)
		}
		if digest, err := binding.Digest(arguments); err != nil {
			reply["unbindable"] = true
		} else {
			reply["digest"] = digest
		}
	case "load_key":
		reply["loaded"] = LoadKey(request["jwk"], request["jwks"]) == nil
	default:
		reply["unsupported"] = true
	}
	return reply
}

// LoadKey loads what a load_key request carries: a ring when jwks is present
// (so that the rules between its keys apply too, profile 7.6), else one key.
func LoadKey(jwk, jwks json.RawMessage) error {
	if jwks != nil {
		_, err := keys.ParseJWKS(jwks)
		return err
	}
	_, err := keys.ParseJWK(jwk)
	return err
}

// Serve answers each line of in on out, in order, flushed after each.
func (s *Server) Serve(in io.Reader, out io.Writer) error {
	reader := bufio.NewReaderSize(in, 1<<16)
	writer := bufio.NewWriter(out)
	for {
		line, readErr := reader.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if err := WriteJSON(writer, s.Answer(line)); err != nil {
				return err
			}
			if err := writer.Flush(); err != nil {
				return err
			}
		}
		if readErr == io.EOF {
			return nil
		}
		if readErr != nil {
			return readErr
		}
	}
}

// strictUnmarshal decodes one JSON value and refuses unknown members, so that a
// misspelt option is an error rather than a silent default.
func strictUnmarshal(text []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("a bad request: %w", err)
	}
	return nil
}

// WriteJSON writes one JSON value and a newline, with < > & left unescaped.
func WriteJSON(w io.Writer, value any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(value)
}
