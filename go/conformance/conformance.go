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

// Serve answers each request line of in on out, in order, one answer line
// per request, flushed after each; it returns when in ends (nil) or when
// reading or writing fails. A line of white space only is not a request and
// gets no answer. It is (&Server{}).Serve.
func Serve(in io.Reader, out io.Writer) error {
	var s Server
	return s.Serve(in, out)
}

// TargetMembers are the members of a job that name what its request
// addresses: exactly one of "tool", "prompt" and "resource", non-empty.
type TargetMembers struct {
	Tool     *string `json:"tool"`
	Prompt   *string `json:"prompt"`
	Resource *string `json:"resource"`
}

// Target reads the one target the members name, or says why they name none.
func (m TargetMembers) Target() (binding.Target, error) {
	var found []binding.Target
	for _, member := range []struct {
		kind binding.Kind
		name *string
	}{{binding.Tool, m.Tool}, {binding.Prompt, m.Prompt}, {binding.Resource, m.Resource}} {
		if member.name != nil {
			found = append(found, binding.Target{Kind: member.kind, Name: *member.name})
		}
	}
	if len(found) != 1 || found[0].Name == "" {
		return binding.Target{}, errors.New(`give exactly one non-empty "tool", "prompt" or "resource"`)
	}
	return found[0], nil
}

// VerifyJob is a verify request without its keys: the token, the verifier's
// settings (nil: the profile's default) and the request being served. Token
// is the JSON value as sent, so that a token that is not a string is refused
// as malformed (step 1) rather than failing the job.
type VerifyJob struct {
	Token  json.RawMessage `json:"token"`
	Issuer string          `json:"issuer"`
	User   string          `json:"user"`
	TargetMembers
	Arguments        json.RawMessage `json:"arguments"`
	Now              *int64          `json:"now"`
	MaxLifetime      *int64          `json:"max_lifetime"`
	Leeway           *int64          `json:"leeway"`
	MaxTokenBytes    *int64          `json:"max_token_bytes"`
	RequireArguments *bool           `json:"require_arguments"`
}

// Verdict is the answer to a verify job: valid with the state, or refused
// with a reason code of the profile (section 6).
type Verdict struct {
	Valid  bool            `json:"valid"`
	State  json.RawMessage `json:"state,omitempty"`
	Reason string          `json:"reason,omitempty"`
}

// Verify opens the job's token with ring and a Sealer made of the job's
// settings (the profile's defaults where it has none). An error means the job
// itself is wrong (a missing member, an option out of range), never a verdict.
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
// runner sends the same keys with every request. The zero value is ready to
// use, and one Server may answer from several goroutines.
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

// Answer is the reply to one request line (without a trailing newline): the
// request's "id" and the operation's answer, {"unsupported": true} for an
// operation this package does not know, or {"error": ...} for a request that
// cannot be run.
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

// Serve answers each line of in on out, in order, flushed after each; see the
// package function Serve.
func (s *Server) Serve(in io.Reader, out io.Writer) error {
	reader := bufio.NewReaderSize(in, 1<<16)
	writer := bufio.NewWriter(out)
	for {
		line, readErr := reader.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if err := writeJSON(writer, s.Answer(line)); err != nil {
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

// writeJSON writes one JSON value and a newline, with < > & left unescaped.
func writeJSON(w io.Writer, value any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(value)
}
