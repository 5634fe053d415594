package main

// The conformance command: the JSON-lines protocol of `mrtr-state conformance`
// (docs/conformance.md). One request per line on stdin, one answer per line on
// stdout, in order, each carrying the request's "id". The operations are the
// verify job of the other commands and the module's binding.Digest, keys.ParseJWK
// and keys.ParseJWKS.

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/keys"
)

func conformance(stdin io.Reader, stdout io.Writer) error {
	in := bufio.NewReader(stdin)
	out := bufio.NewWriter(stdout)
	for {
		line, readErr := in.ReadBytes('\n')
		if len(line) > 0 {
			if err := writeJSON(out, answer(line)); err != nil {
				return err
			}
			if err := out.Flush(); err != nil {
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

// answer is the reply to one request line.
func answer(line []byte) map[string]any {
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
	delete(request, "id")
	delete(request, "op")
	switch op {
	case "verify": // the request is a verify job
		job, _ := json.Marshal(request)
		result, err := verifyJob(job)
		if err != nil {
			reply["error"] = err.Error()
			break
		}
		reply["valid"], reply["state"], reply["reason"] = result.Valid, result.State, result.Reason
		if result.Valid {
			delete(reply, "reason")
		} else {
			delete(reply, "state")
		}
	case "digest":
		arguments := request["arguments"]
		if arguments == nil {
			arguments = json.RawMessage("{}") // absent arguments are {} (profile 3.4)
		}
		if digest, err := binding.Digest(arguments); err != nil {
			reply["unbindable"] = true // not an object, or no digest (profile 3.4)
		} else {
			reply["digest"] = digest
		}
	case "load_key":
		reply["loaded"] = loadKey(request["jwk"], request["jwks"]) == nil
	default:
		reply["unsupported"] = true
	}
	return reply
}

// loadKey loads what a load_key request carries: a ring when jwks is present
// (so that the rules between its keys apply too, profile 7.6), else one key.
func loadKey(jwk, jwks json.RawMessage) error {
	if jwks != nil {
		_, err := keys.ParseJWKS(jwks)
		return err
	}
	_, err := keys.ParseJWK(jwk)
	return err
}
