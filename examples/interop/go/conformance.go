package main

// The conformance command: the JSON-lines protocol of `mrtr-state conformance`
// (docs/conformance.md). One request per line on stdin, one answer per line on
// stdout, in order, each carrying the request's "id". The operations reuse the
// verify job, the argument digest and the key loader of the other commands.

import (
	"bufio"
	"encoding/json"
	"io"
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
		arguments, err := argumentsObject(request["arguments"])
		if err == nil && arguments == nil {
			arguments = []byte("{}") // absent arguments are {} (profile 8.2); null is not
		}
		if err != nil {
			reply["error"] = err.Error()
		} else if _, err := canonicalArguments(arguments); err != nil {
			reply["unbindable"] = true
		} else {
			reply["digest"] = argumentsDigest(arguments)
		}
	case "load_key": // one key ("jwk"), or a ring ("jwks"), whose keys must also keep their secrets apart
		var err error
		if jwks, ring := request["jwks"]; ring {
			_, err = parseJWKS(jwks)
		} else {
			_, err = parseJWK(request["jwk"])
		}
		reply["loaded"] = err == nil
	default:
		reply["unsupported"] = true
	}
	return reply
}
