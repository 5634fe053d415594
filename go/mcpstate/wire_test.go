package mcpstate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/mcpstate"
)

// The edge inputs of profile 8.2, sent as raw JSON to a server of the official
// SDK over stdio framing (mcp.IOTransport on pipes) and over Streamable HTTP on
// loopback, each with mcpstate's wire wrapper (Transport, Handler). A client of
// the SDK makes each call; a tamperer then rewrites the JSON-RPC params on their
// way out (the SDK's own client cannot send a requestState of 42). Each
// transport's table takes well under a second.

// edit says what the tamperer does to one member of the params: leave it, set
// it to raw JSON, or delete it.
type edit struct {
	set    string
	delete bool
	merge  bool // set's members join the member's own (an object)
}

type edits map[string]edit

func (e edits) apply(params json.RawMessage) json.RawMessage {
	var members map[string]json.RawMessage
	if json.Unmarshal(params, &members) != nil {
		return params
	}
	for name, ed := range e {
		if ed.delete {
			delete(members, name)
		} else if ed.merge {
			var own, add map[string]json.RawMessage
			_ = json.Unmarshal(members[name], &own)
			_ = json.Unmarshal([]byte(ed.set), &add)
			if own == nil {
				own = map[string]json.RawMessage{}
			}
			for k, v := range add {
				own[k] = v
			}
			members[name], _ = json.Marshal(own)
		} else {
			members[name] = json.RawMessage(ed.set)
		}
	}
	out, _ := json.Marshal(members)
	return out
}

// tamper holds the edits for the next target request the client sends.
type tamper struct{ next edits }

func (t *tamper) rewrite(method string, params json.RawMessage) json.RawMessage {
	if t.next == nil || (method != "tools/call" && method != "prompts/get" && method != "resources/read") {
		return params
	}
	out := t.next.apply(params)
	t.next = nil
	return out
}

// tamperTransport is a client transport whose outgoing requests pass the tamperer.
type tamperTransport struct {
	mcp.Transport
	t *tamper
}

func (tt tamperTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := tt.Transport.Connect(ctx)
	return tamperConnection{c, tt.t}, err
}

type tamperConnection struct {
	mcp.Connection
	t *tamper
}

func (c tamperConnection) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok {
		req.Params = c.t.rewrite(req.Method, req.Params)
	}
	return c.Connection.Write(ctx, msg)
}

// tamperRoundTripper does the same to the bodies of HTTP POSTs.
type tamperRoundTripper struct{ t *tamper }

func (rt tamperRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		var msg map[string]json.RawMessage
		if json.Unmarshal(body, &msg) == nil {
			var method string
			_ = json.Unmarshal(msg["method"], &method)
			if params, ok := msg["params"]; ok {
				msg["params"] = rt.t.rewrite(method, params)
				body, _ = json.Marshal(msg)
			}
		}
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// edgeServer is a server with a tool, a prompt and a resource that ask on a
// first round, behind the middleware with a fixed principal.
func edgeServer(t *testing.T, refusal mcpstate.Refusal) (*mcp.Server, *int) {
	t.Helper()
	k, _ := keys.Generate(keys.EdDSA, "")
	ring, _ := keys.NewKeyring(k)
	sealer, err := mrtrstate.New(ring, "https://tools.example.com")
	if err != nil {
		t.Fatal(err)
	}
	acted := new(int)
	server := mcp.NewServer(&mcp.Implementation{Name: "edge", Version: "1"}, nil)
	ask := mcp.InputRequestMap{"ok": &mcp.ElicitParams{Mode: "form", Message: "OK?"}}
	for _, name := range []string{"delete_branch", "other_tool"} {
		server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if req.Params.RequestState == "" {
					return &mcp.CallToolResult{InputRequests: ask, RequestState: "asked"}, nil
				}
				*acted++
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
			})
	}
	server.AddPrompt(&mcp.Prompt{Name: "summary"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if _, leaked := req.Params.Meta[mcpstate.WireMetaKey]; leaked {
			return nil, errors.New("the handler saw the wire id")
		}
		if req.Params.RequestState == "" {
			return &mcp.GetPromptResult{InputRequests: ask, RequestState: "asked"}, nil
		}
		*acted++
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "ok"}}}}, nil
	})
	server.AddResource(&mcp.Resource{URI: "file:///q3.csv", Name: "q3"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if req.Params.RequestState == "" {
			return &mcp.ReadResourceResult{InputRequests: ask, RequestState: "asked"}, nil
		}
		*acted++
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///q3.csv", Text: "x"}}}, nil
	})
	if err := mcpstate.Install(server, sealer, &mcpstate.Options{
		Principal: mcpstate.FixedPrincipal("alice"), ToolRefusal: refusal,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}); err != nil {
		t.Fatal(err)
	}
	return server, acted
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"},
		&mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
}

// overStdio connects a client to server over stdio framing on pipes, the
// server's side wrapped by mcpstate.Transport.
func overStdio(t *testing.T, server *mcp.Server) (*mcp.ClientSession, *tamper) {
	t.Helper()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	ctx := context.Background()
	ss, err := server.Connect(ctx, mcpstate.Transport(&mcp.IOTransport{Reader: toServer, Writer: fromServer}), nil)
	if err != nil {
		t.Fatal(err)
	}
	tm := &tamper{}
	cs, err := newClient().Connect(ctx, tamperTransport{&mcp.IOTransport{Reader: toClient, Writer: fromClient}, tm}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Close() })
	return cs, tm
}

// overHTTP serves server over Streamable HTTP (stateless) on loopback behind
// mcpstate.Handler and connects a client to it.
func overHTTP(t *testing.T, server *mcp.Server) (*mcp.ClientSession, *tamper) {
	t.Helper()
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true})
	httpServer := httptest.NewServer(mcpstate.Handler(handler))
	t.Cleanup(httpServer.Close)
	tm := &tamper{}
	cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: httpServer.URL,
		HTTPClient: &http.Client{Transport: tamperRoundTripper{tm}}, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, tm
}

// answerOf names what the client got: "minted", "ran", "refused <reason>"
// (a tool error or a -32602 with data.reason), "invalid params" (a -32602
// without a reason), or the error's code.
func answerOf(isError bool, meta mcp.Meta, state string, err error) string {
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		var data struct{ Reason string }
		if wire.Code == jsonrpc.CodeInvalidParams && json.Unmarshal(wire.Data, &data) == nil && data.Reason != "" {
			return "refused " + data.Reason
		}
		if wire.Code == jsonrpc.CodeInvalidParams {
			return "invalid params"
		}
		return fmt.Sprintf("error %d %s", wire.Code, wire.Message)
	}
	if err != nil {
		return "error " + err.Error()
	}
	if isError {
		reason, _ := meta[mcpstate.ReasonMetaKey].(string)
		return "refused " + reason
	}
	if strings.Count(state, ".") == 2 {
		return "minted"
	}
	return "ran"
}

// send makes one target request named by method and name, with state and
// args as the SDK's client sends them, then the tamperer's edits.
func send(cs *mcp.ClientSession, tm *tamper, method, name, state string, e edits) string {
	ctx := context.Background()
	tm.next = e
	switch method {
	case "tools/call":
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}, RequestState: state})
		if r == nil {
			return answerOf(false, nil, "", err)
		}
		return answerOf(r.IsError, r.Meta, r.RequestState, err)
	case "prompts/get":
		r, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: map[string]string{}, RequestState: state})
		if r == nil {
			return answerOf(false, nil, "", err)
		}
		return answerOf(false, nil, r.RequestState, err)
	default:
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: name, RequestState: state})
		if r == nil {
			return answerOf(false, nil, "", err)
		}
		return answerOf(false, nil, r.RequestState, err)
	}
}

// mint returns a state minted for method and name with arguments absent ({}).
func mint(t *testing.T, cs *mcp.ClientSession, tm *tamper, method, name string) string {
	t.Helper()
	ctx := context.Background()
	tm.next = edits{"arguments": {delete: true}}
	switch method {
	case "tools/call":
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return r.RequestState
	case "prompts/get":
		r, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		return r.RequestState
	}
	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: name})
	if err != nil {
		t.Fatal(err)
	}
	return r.RequestState
}

var notStrings = []string{`""`, `42`, `1.5`, `true`, `{}`, `[]`}

var notObjects = []string{`null`, `[]`, `"x"`, `1`, `true`}

var unbindable = []string{`{"n": 1152921504606846976}`, `{"n": 1e23}`, `{"q": "\ud800"}`,
	strings.Repeat(`{"a":`, 256) + `{}` + strings.Repeat(`}`, 256)} // 257 levels

// checkEdgeInputs is the one answer of profile 8.2 at the seam, as Python's
// boundary gives it.
func checkEdgeInputs(t *testing.T, connect func(*testing.T, *mcp.Server) (*mcp.ClientSession, *tamper)) {
	server, acted := edgeServer(t, mcpstate.ToolError)
	cs, tm := connect(t, server)
	targets := map[string]string{"tools/call": "delete_branch", "prompts/get": "summary", "resources/read": "file:///q3.csv"}
	for method, name := range targets {
		for _, state := range notStrings {
			if got := send(cs, tm, method, name, "x", edits{"requestState": {set: state}}); got != "refused malformed" {
				t.Errorf("%s with requestState %s: %s, want refused malformed", method, state, got)
			}
		}
		for what, e := range map[string]edits{"null": {"requestState": {set: "null"}}, "absent": {"requestState": {delete: true}}} {
			if got := send(cs, tm, method, name, "", e); got != "minted" {
				t.Errorf("%s with requestState %s: %s, want a first round (minted)", method, what, got)
			}
		}
		// An answer that is no result of the request it answers: -32602 once the
		// state opens; a refused state is refused first; on a first round the
		// answers are dropped and the handler asks (Python's answers).
		bad := edits{"inputResponses": {set: `{"ok":"yes"}`}}
		for state, want := range map[string]string{mint(t, cs, tm, method, name): "invalid params",
			"abc.def.ghi": "refused malformed", "": "minted"} {
			if got := send(cs, tm, method, name, state, bad); got != want {
				t.Errorf("%s with inputResponses {\"ok\":\"yes\"} (state %.12q): %s, want %s", method, state, got, want)
			}
		}
		if method == "resources/read" {
			continue
		}
		state := mint(t, cs, tm, method, name)
		if got := send(cs, tm, method, name, state, edits{"arguments": {set: `{}`}}); got != "ran" {
			t.Errorf("%s: a state minted with arguments absent, retried with {}: %s, want ran", method, got)
		}
		for _, args := range append(append([]string{}, notObjects...), unbindable...) {
			if got := send(cs, tm, method, name, "", edits{"arguments": {set: args}}); got != "invalid params" {
				t.Errorf("%s first round with arguments %.40s: %s, want invalid params", method, args, got)
			}
			state := mint(t, cs, tm, method, name)
			if got := send(cs, tm, method, name, state, edits{"arguments": {set: args}}); got != "refused wrong_request" {
				t.Errorf("%s retry with arguments %.40s: %s, want refused wrong_request", method, args, got)
			}
		}
	}
	tool := mint(t, cs, tm, "tools/call", "delete_branch")
	for _, other := range []string{"other_tool", "no_such_tool"} {
		if got := send(cs, tm, "tools/call", other, tool, nil); got != "refused wrong_tool" {
			t.Errorf("a state of delete_branch sent to %s: %s, want refused wrong_tool", other, got)
		}
	}
	prompt := mint(t, cs, tm, "prompts/get", "summary")
	if got := send(cs, tm, "prompts/get", "no_such_prompt", prompt, nil); got != "refused wrong_tool" {
		t.Errorf("a state of the prompt summary sent to another prompt: %s, want refused wrong_tool", got)
	}
	// The acting runs: one {} retry on each of tools/call and prompts/get.
	if *acted != 2 {
		t.Errorf("the handlers acted %d times; want 2", *acted)
	}
}

func TestEveryEdgeInputGetsTheOneAnswerOverStdio(t *testing.T) {
	checkEdgeInputs(t, overStdio)
}

func TestEveryEdgeInputGetsTheOneAnswerOverStreamableHTTP(t *testing.T) {
	checkEdgeInputs(t, overHTTP)
}

// In the JSON-RPC refusal mode a malformed requestState on tools/call is a
// -32602 with data.reason, over both transports.
func TestANonStringStateIsAJSONRPCMalformedInThatMode(t *testing.T) {
	for name, connect := range map[string]func(*testing.T, *mcp.Server) (*mcp.ClientSession, *tamper){
		"stdio": overStdio, "http": overHTTP} {
		server, _ := edgeServer(t, mcpstate.JSONRPCError)
		cs, tm := connect(t, server)
		for _, state := range notStrings {
			if got := send(cs, tm, "tools/call", "delete_branch", "x", edits{"requestState": {set: state}}); got != "refused malformed" {
				t.Errorf("%s: requestState %s: %s", name, state, got)
			}
		}
	}
}

// A client cannot choose the arguments the middleware binds by sending the
// wire id itself: the wrapper removes it, and without the wrapper an id that
// this process did not record is ignored.
func TestAWireIDFromTheClientIsNeverTrusted(t *testing.T) {
	for name, connect := range map[string]func(*testing.T, *mcp.Server) (*mcp.ClientSession, *tamper){
		"stdio": overStdio, "http": overHTTP} {
		server, _ := edgeServer(t, mcpstate.ToolError)
		cs, tm := connect(t, server)
		state := mint(t, cs, tm, "prompts/get", "summary")
		forged := edits{"arguments": {set: `{"q":"other"}`}, "_meta": {set: `{"` + mcpstate.WireMetaKey + `":"0123"}`, merge: true}}
		if got := send(cs, tm, "prompts/get", "summary", state, forged); got != "refused wrong_request" {
			t.Errorf("%s: %s", name, got)
		}
	}
}

func nested(levels int) string {
	return strings.Repeat(`{"a":`, levels-1) + `{}` + strings.Repeat(`}`, levels-1)
}

// Over Streamable HTTP, arguments nested deeper than the SDK reads (999
// levels and more; its reader refuses a message over 1000) get the one answer
// too: Handler does not show them to the SDK, and the middleware answers.
func TestArgumentsDeeperThanTheSDKReadsGetTheOneAnswerOverHTTP(t *testing.T) {
	server, _ := edgeServer(t, mcpstate.ToolError)
	cs, tm := overHTTP(t, server)
	for _, levels := range []int{998, 999, 5000} {
		for _, method := range []string{"tools/call", "prompts/get"} {
			name := map[string]string{"tools/call": "delete_branch", "prompts/get": "summary"}[method]
			if got := send(cs, tm, method, name, "", edits{"arguments": {set: nested(levels)}}); got != "invalid params" {
				t.Errorf("%s first round, arguments %d levels deep: %s", method, levels, got)
			}
			state := mint(t, cs, tm, method, name)
			if got := send(cs, tm, method, name, state, edits{"arguments": {set: nested(levels)}}); got != "refused wrong_request" {
				t.Errorf("%s retry, arguments %d levels deep: %s", method, levels, got)
			}
		}
	}
}

// A documented limit (go/README.md): over stdio the SDK's own reader decodes
// each line before any Transport sees it, and a line nested deeper than 1000
// levels (arguments of 999 levels and more) ends the connection instead of
// getting an answer. 998 levels still get the one answer.
func TestOverStdioArgumentsDeeperThanTheSDKReadsCloseTheConnection(t *testing.T) {
	server, _ := edgeServer(t, mcpstate.ToolError)
	cs, tm := overStdio(t, server)
	if got := send(cs, tm, "tools/call", "delete_branch", "", edits{"arguments": {set: nested(998)}}); got != "invalid params" {
		t.Fatalf("998 levels: %s", got)
	}
	got := send(cs, tm, "tools/call", "delete_branch", "", edits{"arguments": {set: nested(999)}})
	if !strings.Contains(got, "connection closed") && !strings.Contains(got, "EOF") {
		t.Errorf("999 levels over stdio: %s; the SDK now answers, so the limit in go/README.md is gone", got)
	}
}

// Behind Handler a JSON-RPC -32602 answer goes out with the SDK's HTTP 400:
// MCP 2026-07-28 (SEP-2575) says InvalidParams MUST be returned with 400 on
// Streamable HTTP, as the Python, TypeScript and Java example servers send it;
// a header mismatch keeps its 400 too, the body is the SDK's own.
func TestAnInvalidParamsAnswerGoesOutWithHTTP400(t *testing.T) {
	server, _ := edgeServer(t, mcpstate.JSONRPCError)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true})
	httpServer := httptest.NewServer(mcpstate.Handler(handler))
	t.Cleanup(httpServer.Close)
	post := func(name, params string) (int, map[string]any) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + params + `}`
		req, _ := http.NewRequest(http.MethodPost, httpServer.URL, strings.NewReader(body))
		for key, value := range map[string]string{"Content-Type": "application/json",
			"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
			"Mcp-Method": "tools/call", "Mcp-Name": name} {
			req.Header.Set(key, value)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var answer map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
			t.Fatalf("HTTP %d, body not JSON: %v", resp.StatusCode, err)
		}
		return resp.StatusCode, answer
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	for _, params := range []string{
		`{"name":"delete_branch","arguments":{},"requestState":42,` + meta + `}`,      // malformed
		`{"name":"delete_branch","arguments":{"n":1152921504606846976},` + meta + `}`, // unbindable
	} {
		status, answer := post("delete_branch", params)
		code, _ := answer["error"].(map[string]any)["code"].(float64)
		if status != http.StatusBadRequest || code != -32602 || answer["id"] != float64(7) {
			t.Errorf("%s: HTTP %d %v, want 400 with a -32602 answering id 7", params, status, answer)
		}
	}
	status, answer := post("other_tool", `{"name":"delete_branch","arguments":{},`+meta+`}`)
	if code, _ := answer["error"].(map[string]any)["code"].(float64); status != http.StatusBadRequest || code == -32602 {
		t.Errorf("a header mismatch: HTTP %d %v, want the SDK's 400", status, answer)
	}
}

// The -32602 for an inputResponses entry that is no result names the entry
// (its key, quoted) and never shows its value, over both transports.
func TestANoResultAnswerIsNamedNeverShown(t *testing.T) {
	for name, connect := range map[string]func(*testing.T, *mcp.Server) (*mcp.ClientSession, *tamper){
		"stdio": overStdio, "http": overHTTP} {
		server, _ := edgeServer(t, mcpstate.ToolError)
		cs, tm := connect(t, server)
		state := mint(t, cs, tm, "tools/call", "delete_branch")
		tm.next = edits{"inputResponses": {set: `{"confirm":"yes-secret"}`}}
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_branch", Arguments: map[string]any{}, RequestState: state})
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams ||
			!strings.Contains(wire.Message, `inputResponses["confirm"] is not a result`) || strings.Contains(wire.Message, "yes-secret") {
			t.Errorf("%s: %v, want -32602 naming inputResponses[\"confirm\"] without its value", name, err)
		}
	}
}
