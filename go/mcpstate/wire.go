package mcpstate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Go SDK decodes params into typed structs before any middleware runs, and
// three edge inputs of profile 8.2 do not survive that decoding: a requestState
// that is "" (a Go string cannot tell it from absent) or not a string (the
// decoding fails, over Streamable HTTP with the SDK's -32020 header error), and
// prompts/get arguments that are null, not an object of strings, or strings the
// decoder repairs (a lone surrogate becomes U+FFFD). Transport and Handler see
// each message before the SDK does and hand the middleware what was sent:
//
//   - a requestState that is present, not null, and not a non-empty string is
//     replaced by MalformedState, which the sealer refuses as malformed on its
//     own (so the answer holds even where the middleware cannot look further);
//   - arguments nested deeper than the SDK reads (999 levels and more) are
//     recorded and removed in the same way, on tools/call too;
//   - prompts/get arguments, as sent, are recorded under a random one-time id
//     written into the request's _meta (WireMetaKey); the middleware binds those
//     bytes, and arguments the SDK cannot decode (not an object of strings) are
//     removed from what the SDK sees, so that the middleware answers instead of
//     the SDK's decoding error and the handler never runs with other arguments;
//   - inputResponses that are no results the SDK can read (the string "yes"
//     where an ElicitResult belongs) are recorded the same way and removed, so
//     that the middleware answers -32602 Invalid params on every transport
//     once the state opens (over Streamable HTTP the SDK's header check would
//     answer -32020); a refused state is refused first, and on a first round
//     they are dropped like any other answers, as Python's boundary does;
//   - a WireMetaKey a client sent is removed, so only this process writes it.

// WireMetaKey is the _meta member of a target request under which Transport
// and Handler leave the middleware a one-time id of what was sent (prompts/get
// arguments, unreadable inputResponses). A client's own value is removed; the middleware removes it from the
// params the handler sees.
const WireMetaKey = "io.github.mrtr-state/wire"

// MalformedState is what Transport and Handler put in place of a requestState
// that is present but is the empty string or not a string (42, true, {}, []):
// text that is no token, so that the middleware refuses it as malformed.
const MalformedState = "(requestState was not a non-empty string)"

// wireFacts is what a request carried before the SDK decoded it.
type wireFacts struct {
	arguments    json.RawMessage // prompts/get: the arguments member as sent (nil: absent)
	removed      bool            // the SDK was not shown them: it cannot decode them
	badResponses bool            // inputResponses the SDK cannot decode (not shown to it)
	badResponse  string          // the first entry it cannot decode, as a quoted key ("": the map itself)
}

// sent holds the facts of requests in flight by their one-time id.
var sent sync.Map // string -> wireFacts

func remember(f wireFacts) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return ""
	}
	id := hex.EncodeToString(b[:])
	sent.Store(id, f)
	return id
}

// recall returns (and forgets) the facts recorded for meta, if any.
func recall(meta mcp.Meta) (wireFacts, bool) {
	id, _ := meta[WireMetaKey].(string)
	if id == "" {
		return wireFacts{}, false
	}
	f, ok := sent.LoadAndDelete(id)
	if !ok {
		return wireFacts{}, false
	}
	return f.(wireFacts), true
}

func forget(ids []string) {
	for _, id := range ids {
		sent.Delete(id)
	}
}

// rewriteParams returns the params to hand the SDK for one request and the id
// it recorded facts under ("" when none); changed is false when params stand.
func rewriteParams(method string, params json.RawMessage) (out json.RawMessage, id string, changed bool) {
	if method != "tools/call" && method != "prompts/get" && method != "resources/read" {
		return params, "", false
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(params, &members) != nil || members == nil {
		return params, "", false // the SDK answers params that are not an object
	}
	if raw, ok := members["requestState"]; ok && !nonEmptyString(raw) && string(raw) != "null" {
		members["requestState"] = json.RawMessage(strconv.Quote(MalformedState))
		changed = true
	}
	var meta map[string]json.RawMessage
	if raw, ok := members["_meta"]; ok {
		if json.Unmarshal(raw, &meta) != nil || meta == nil {
			// The SDK refuses a _meta that is not an object.
			return encodeMembers(members, params, changed), "", changed
		}
		if _, forged := meta[WireMetaKey]; forged {
			delete(meta, WireMetaKey)
			changed = true
		}
	}
	var f wireFacts
	record := false
	if args, ok := members["arguments"]; ok && method != "resources/read" {
		tooDeep := nesting(args) > sdkArgumentsDepth
		if method == "prompts/get" || tooDeep {
			f.arguments, f.removed, record = args, tooDeep || (method == "prompts/get" && string(args) != "null" && !stringObject(args)), true
		}
		if f.removed {
			delete(members, "arguments")
		}
	}
	if responses, ok := members["inputResponses"]; ok && string(responses) != "null" {
		var m mcp.InputResponseMap
		if json.Unmarshal(responses, &m) != nil {
			f.badResponses, f.badResponse, record = true, firstBadResponse(responses), true
			delete(members, "inputResponses")
		}
	}
	if record {
		if id = remember(f); id == "" {
			// No id, no facts: the SDK answers what it was sent (never arguments
			// taken away with nothing to say so).
			return encodeMembers(withState(params, members["requestState"]), params, changed), "", changed
		}
		if meta == nil {
			meta = map[string]json.RawMessage{}
		}
		meta[WireMetaKey] = json.RawMessage(strconv.Quote(id))
		changed = true
	}
	if meta != nil && changed {
		text, err := json.Marshal(meta)
		if err != nil {
			forget([]string{id})
			return params, "", false
		}
		members["_meta"] = text
	}
	return encodeMembers(members, params, changed), id, changed
}

// firstBadResponse is the key of the first entry (in key order) of an
// inputResponses map that the SDK cannot decode, quoted and cut short for a
// message; "" when the map itself is no object.
func firstBadResponse(responses json.RawMessage) string {
	var entries map[string]json.RawMessage
	if json.Unmarshal(responses, &entries) != nil {
		return ""
	}
	keys := make([]string, 0, len(entries))
	for key := range entries {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		var m mcp.InputResponseMap
		if json.Unmarshal([]byte(`{"k":`+string(entries[key])+`}`), &m) != nil {
			if r := []rune(key); len(r) > 64 {
				key = string(r[:64]) + "..."
			}
			quoted, _ := json.Marshal(key)
			return string(quoted)
		}
	}
	return ""
}

// withState is params' members with requestState set to state (if present).
func withState(params json.RawMessage, state json.RawMessage) map[string]json.RawMessage {
	var members map[string]json.RawMessage
	_ = json.Unmarshal(params, &members)
	if state != nil {
		members["requestState"] = state
	}
	return members
}

func encodeMembers(members map[string]json.RawMessage, original json.RawMessage, changed bool) json.RawMessage {
	if !changed {
		return original
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(members) != nil {
		return original
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// sdkArgumentsDepth is the deepest arguments value the SDK reads: it refuses
// a message nested deeper than 1000 levels, and the message and its params are
// two of them. Deeper arguments (unbindable anyway: profile 3.4 allows 256) are
// not shown to it, so the middleware answers instead of an HTTP 400.
const sdkArgumentsDepth = 998

// nesting is how deep the arrays and objects of a JSON text nest ({} is 1).
func nesting(text []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range text {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

func nonEmptyString(raw json.RawMessage) bool {
	var s string
	return len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil && s != ""
}

// stringObject tells whether raw is an object whose members are all strings,
// what the SDK's map[string]string decodes without changing a member's kind.
func stringObject(raw json.RawMessage) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil || members == nil {
		return false
	}
	for _, v := range members {
		if len(v) == 0 || v[0] != '"' {
			return false
		}
	}
	return true
}

// Transport wraps a transport (stdio, IO, in-memory) so that the middleware
// sees what each tools/call, prompts/get and resources/read request sent, not
// only what the SDK's typed params can hold: give the server
// mcpstate.Transport(&mcp.StdioTransport{}) instead of the transport itself.
// Without it an empty requestState reads as a first round, a non-string one
// gets the SDK's own decoding error, and prompts/get "arguments": null is bound
// as {}. Over Streamable HTTP use Handler.
func Transport(t mcp.Transport) mcp.Transport {
	if pvs, ok := t.(mcp.ProtocolVersionSupporter); ok {
		return &versionedTransport{wireTransport{t}, pvs}
	}
	return wireTransport{t}
}

type wireTransport struct{ inner mcp.Transport }

// Connect connects the wrapped transport and wraps its connection.
func (t wireTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &wireConnection{Connection: c, ids: map[jsonrpc.ID]string{}}, nil
}

type versionedTransport struct {
	wireTransport
	pvs mcp.ProtocolVersionSupporter
}

// SupportsProtocolVersion answers as the wrapped transport does.
func (t *versionedTransport) SupportsProtocolVersion(version string) bool {
	return t.pvs.SupportsProtocolVersion(version)
}

// wireConnection rewrites each incoming target request and forgets its facts
// once the answer is written (or the connection closes).
type wireConnection struct {
	mcp.Connection
	mu  sync.Mutex
	ids map[jsonrpc.ID]string
}

func (c *wireConnection) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		return msg, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		params, id, changed := rewriteParams(req.Method, req.Params)
		if changed {
			req.Params = params
		}
		if id != "" {
			c.mu.Lock()
			if old, ok := c.ids[req.ID]; ok { // a client reusing an id in flight
				forget([]string{old})
			}
			c.ids[req.ID] = id
			c.mu.Unlock()
		}
	}
	return msg, nil
}

func (c *wireConnection) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		if id, ok := c.ids[resp.ID]; ok {
			delete(c.ids, resp.ID)
			forget([]string{id})
		}
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *wireConnection) Close() error {
	c.mu.Lock()
	for key, id := range c.ids {
		forget([]string{id})
		delete(c.ids, key)
	}
	c.mu.Unlock()
	return c.Connection.Close()
}

// Handler wraps the SDK's StreamableHTTPHandler (or any handler in front of
// it) so that the middleware sees what each tools/call, prompts/get and
// resources/read request sent, as Transport does for stdio: it reads each POST
// body, rewrites the edge inputs described there and hands the rest on
// unchanged. Put it between authentication and the SDK's handler:
//
//	auth.RequireBearerToken(verify, nil)(mcpstate.Handler(mcp.NewStreamableHTTPHandler(...)))
//
// It reads the body whole, as the SDK's handler does; bound its size with
// http.MaxBytesHandler outside it.
func Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "failed to read body", http.StatusBadRequest)
			return
		}
		out, ids := rewriteBody(body)
		defer forget(ids)
		r = r.WithContext(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(out))
		r.ContentLength = int64(len(out))
		next.ServeHTTP(w, r)
	})
}

// rewriteBody rewrites each request of a JSON-RPC message or batch; a body it
// cannot read is handed on as it is, for the SDK to answer.
func rewriteBody(body []byte) ([]byte, []string) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(body, &batch) != nil {
			return body, nil
		}
		var ids []string
		changed := false
		for i, msg := range batch {
			out, id, ok := rewriteMessage(msg)
			if ok {
				batch[i], changed = out, true
			}
			if id != "" {
				ids = append(ids, id)
			}
		}
		if !changed {
			return body, ids
		}
		text, err := json.Marshal(batch)
		if err != nil {
			forget(ids)
			return body, nil
		}
		return text, ids
	}
	out, id, ok := rewriteMessage(body)
	if !ok {
		return body, nil
	}
	if id == "" {
		return out, nil
	}
	return out, []string{id}
}

func rewriteMessage(msg json.RawMessage) (json.RawMessage, string, bool) {
	var members map[string]json.RawMessage
	if json.Unmarshal(msg, &members) != nil || members == nil {
		return msg, "", false
	}
	var method string
	if json.Unmarshal(members["method"], &method) != nil {
		return msg, "", false
	}
	if id, ok := members["id"]; !ok || string(id) == "null" {
		return msg, "", false // a notification: no answer, nothing to rewrite
	}
	params, id, changed := rewriteParams(method, members["params"])
	if !changed {
		return msg, "", false
	}
	members["params"] = params
	out := encodeMembers(members, msg, true)
	if bytes.Equal(out, msg) {
		forget([]string{id})
		return msg, "", false
	}
	return out, id, true
}
