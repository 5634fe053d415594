package mcpstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/mcpstate"
	"github.com/mrtr-state/mrtr-state/go/replay"
)

// testUser is a Principal for in-memory transports, which carry no bearer
// token: the user is the request's _meta "test/user" (never a real server's way).
func testUser(_ context.Context, req mcp.Request) (string, error) {
	var meta mcp.Meta
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		meta = p.Meta
	case *mcp.GetPromptParams:
		meta = p.Meta
	case *mcp.ReadResourceParams:
		meta = p.Meta
	}
	user, _ := meta["test/user"].(string)
	return user, nil
}

type fixture struct {
	session  *mcp.ClientSession
	calls    atomic.Int32 // handler runs that acted on a confirmation
	seen     chan string  // states the handler saw on retries
	answered atomic.Int32 // handler runs that saw inputResponses
}

func start(t *testing.T, opts *mcpstate.Options, sealerOpts ...mrtrstate.Option) *fixture {
	t.Helper()
	k, _ := keys.Generate(keys.EdDSA, "")
	ring, _ := keys.NewKeyring(k)
	sealer, err := mrtrstate.New(ring, "https://tools.example.com", sealerOpts...)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{seen: make(chan string, 16)}
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "delete_branch", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.InputResponses != nil {
				f.answered.Add(1)
			}
			if req.Params.RequestState == "" {
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Mode: "form", Message: "Delete?"}},
					RequestState:  `{"asked": "confirm"}`,
				}, nil
			}
			f.seen <- req.Params.RequestState
			f.calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted"}}}, nil
		})
	server.AddPrompt(&mcp.Prompt{Name: "summary"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if req.Params.RequestState == "" {
			return &mcp.GetPromptResult{
				InputRequests: mcp.InputRequestMap{"topic": &mcp.ElicitParams{Mode: "form", Message: "Topic?"}},
				RequestState:  "plain text state",
			}, nil
		}
		f.seen <- req.Params.RequestState
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "ok"}}}}, nil
	})
	server.AddResource(&mcp.Resource{URI: "file:///q3.csv", Name: "q3"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if req.Params.RequestState == "" {
			return &mcp.ReadResourceResult{
				InputRequests: mcp.InputRequestMap{"why": &mcp.ElicitParams{Mode: "form", Message: "Why?"}},
				RequestState:  `["a",1]`,
			}, nil
		}
		f.seen <- req.Params.RequestState
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "file:///q3.csv", Text: "x"}}}, nil
	})
	if err := mcpstate.Install(server, sealer, opts); err != nil {
		t.Fatal(err)
	}
	f.session = connect(t, server)
	return f
}

// connect connects a client that makes every round itself (no automatic multi round-trip) to server
// over in-memory transports, both closed when the test ends.
func connect(t *testing.T, server *mcp.Server) *mcp.ClientSession {
	t.Helper()
	clientTransport, serverTransport := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"},
		&mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	cs, err := client.Connect(ctx, clientTransport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

var yes = mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}}

func call(t *testing.T, f *fixture, user string, args any, state string, responses mcp.InputResponseMap) (*mcp.CallToolResult, error) {
	t.Helper()
	return f.session.CallTool(context.Background(), &mcp.CallToolParams{
		Meta: mcp.Meta{"test/user": user}, Name: "delete_branch", Arguments: args,
		RequestState: state, InputResponses: responses,
	})
}

func reasonOf(r *mcp.CallToolResult) string {
	if r == nil || !r.IsError {
		return ""
	}
	s, _ := r.Meta[mcpstate.ReasonMetaKey].(string)
	return s
}

var branch = map[string]any{"branch": "release-1.2"}

func TestAnInputRequiredResultCarriesATokenAndTheRetryOpensIt(t *testing.T) {
	f := start(t, &mcpstate.Options{Principal: testUser})
	first, err := call(t, f, "alice", branch, "", nil)
	if err != nil || !first.NeedsInput() {
		t.Fatalf("first round: %v %+v", err, first)
	}
	if strings.Count(first.RequestState, ".") != 2 || strings.Contains(first.RequestState, "asked") {
		t.Fatalf("the state left the server unsealed: %q", first.RequestState)
	}
	second, err := call(t, f, "alice", branch, first.RequestState, yes)
	if err != nil || second.IsError || second.NeedsInput() {
		t.Fatalf("retry: %v %+v", err, second)
	}
	if got := <-f.seen; got != `{"asked":"confirm"}` {
		t.Errorf("the handler saw %q; want the object as compact JSON", got)
	}
}

func TestRuleAGT18RefusalsAreToolErrorsAndTheHandlerNeverRuns(t *testing.T) {
	f := start(t, &mcpstate.Options{Principal: testUser})
	first, _ := call(t, f, "alice", branch, "", nil)
	tok := first.RequestState
	changed := []byte(tok)
	i := len(changed) - 10 // inside the signature, where every letter is canonical
	changed[i] = map[bool]byte{true: 'B', false: 'A'}[changed[i] == 'A']
	for name, c := range map[string]struct {
		user  string
		args  any
		state string
		want  string
	}{
		"one byte changed": {"alice", branch, string(changed), "bad_signature"},
		"another user":     {"mallory", branch, tok, "wrong_user"},
		"other arguments":  {"alice", map[string]any{"branch": "main"}, tok, "wrong_request"},
		"not a token":      {"alice", branch, "step=1", "malformed"},
	} {
		r, err := call(t, f, c.user, c.args, c.state, yes)
		if err != nil || reasonOf(r) != c.want {
			t.Errorf("%s: %v %+v, want the tool error %s", name, err, r, c.want)
		}
		if wire, _ := json.Marshal(r); !strings.Contains(string(wire), `"resultType":"complete"`) {
			t.Errorf("%s: a 2026-07-28 refusal without resultType: %s", name, wire)
		}
		if r != nil && len(r.Content) == 1 && strings.Contains(r.Content[0].(*mcp.TextContent).Text, tok[:16]) {
			t.Errorf("%s: the refusal shows the token", name)
		}
	}
	if f.calls.Load() != 0 {
		t.Errorf("the handler acted %d times on refused states", f.calls.Load())
	}
}

func TestRefusalsCanBeJSONRPCErrorsWithTheReasonInData(t *testing.T) {
	f := start(t, &mcpstate.Options{Principal: testUser, ToolRefusal: mcpstate.JSONRPCError})
	first, _ := call(t, f, "alice", branch, "", nil)
	_, err := call(t, f, "mallory", branch, first.RequestState, yes)
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || string(wire.Data) != `{"reason":"wrong_user"}` {
		t.Fatalf("got %v", err)
	}
}

func TestInputResponsesWithoutAVerifiedStateNeverReachTheHandler(t *testing.T) {
	f := start(t, &mcpstate.Options{Principal: testUser})
	r, err := call(t, f, "alice", branch, "", yes)
	if err != nil || !r.NeedsInput() {
		t.Fatalf("%v %+v", err, r)
	}
	if f.answered.Load() != 0 || f.calls.Load() != 0 {
		t.Error("the handler saw inputResponses on a first round")
	}
}

func TestWithoutAnAuthenticatedUserNothingIsMintedUnlessAFixedPrincipalIsChosen(t *testing.T) {
	f := start(t, nil) // the default principal: the bearer token's user, absent in memory
	if _, err := call(t, f, "", branch, "", nil); err == nil || !strings.Contains(err.Error(), "no authenticated principal") {
		t.Errorf("a state was minted with no user: %v", err)
	}
	fixed := start(t, &mcpstate.Options{Principal: mcpstate.FixedPrincipal("the-only-user")})
	first, err := call(t, fixed, "", branch, "", nil)
	if err != nil || strings.Count(first.RequestState, ".") != 2 {
		t.Fatalf("a fixed principal: %v", err)
	}
	if r, err := call(t, fixed, "", branch, first.RequestState, yes); err != nil || r.IsError {
		t.Errorf("a fixed principal's retry: %v %+v", err, r)
	}
}

func TestTheActingRoundIsSingleUse(t *testing.T) {
	f := start(t, &mcpstate.Options{Principal: testUser, SingleUse: []string{"tools/call:delete_branch"}},
		mrtrstate.WithReplayStore(replay.NewMemoryStore(0, time.Now)))
	first, _ := call(t, f, "alice", branch, "", nil)
	if r, err := call(t, f, "alice", branch, first.RequestState, yes); err != nil || r.IsError {
		t.Fatalf("the first redemption: %v %+v", err, r)
	}
	r, err := call(t, f, "alice", branch, first.RequestState, yes)
	if err != nil || reasonOf(r) != "replayed" {
		t.Errorf("the second redemption: %v %+v", err, r)
	}
	if f.calls.Load() != 1 {
		t.Errorf("the branch was deleted %d times", f.calls.Load())
	}
	if _, err := mcpstate.Middleware(mustSealer(t), &mcpstate.Options{SingleUseAll: true}); err == nil {
		t.Error("single use without a replay store was accepted")
	}
	if _, err := mcpstate.Middleware(mustSealer(t), &mcpstate.Options{SingleUse: []string{"delete_branch"}}); err == nil {
		t.Error("a single-use entry that is not an aud value was accepted")
	}
}

func mustSealer(t *testing.T) *mrtrstate.Sealer {
	k, _ := keys.Generate(keys.HS256, "")
	ring, _ := keys.NewKeyring(k)
	s, err := mrtrstate.New(ring, "https://tools.example.com")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestUnbindableArgumentsGetAnInvalidParamsErrorAndNoState(t *testing.T) {
	f := start(t, &mcpstate.Options{Principal: testUser})
	_, err := call(t, f, "alice", json.RawMessage(`{"id": 9007199254740993}`), "", nil)
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("got %v", err)
	}
}

func TestPromptsAndResourcesCarryStatesAndRefuseWithJSONRPCErrors(t *testing.T) {
	f := start(t, &mcpstate.Options{Principal: testUser})
	ctx := context.Background()
	meta := mcp.Meta{"test/user": "alice"}
	p, err := f.session.GetPrompt(ctx, &mcp.GetPromptParams{Meta: meta, Name: "summary", Arguments: map[string]string{"q": "3"}})
	if err != nil || !p.NeedsInput() || strings.Count(p.RequestState, ".") != 2 {
		t.Fatalf("prompt first round: %v %+v", err, p)
	}
	if _, err := f.session.GetPrompt(ctx, &mcp.GetPromptParams{Meta: meta, Name: "summary", Arguments: map[string]string{"q": "3"}, RequestState: p.RequestState}); err != nil {
		t.Fatalf("prompt retry: %v", err)
	}
	if got := <-f.seen; got != "plain text state" {
		t.Errorf("a plain string state came back as %q", got)
	}
	_, err = f.session.GetPrompt(ctx, &mcp.GetPromptParams{Meta: meta, Name: "summary", Arguments: map[string]string{"q": "4"}, RequestState: p.RequestState})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || string(wire.Data) != `{"reason":"wrong_request"}` {
		t.Errorf("a prompt with other arguments: %v", err)
	}
	r, err := f.session.ReadResource(ctx, &mcp.ReadResourceParams{Meta: meta, URI: "file:///q3.csv"})
	if err != nil || !r.NeedsInput() {
		t.Fatalf("resource first round: %v", err)
	}
	if _, err := f.session.ReadResource(ctx, &mcp.ReadResourceParams{Meta: meta, URI: "file:///q3.csv", RequestState: r.RequestState}); err != nil {
		t.Fatalf("resource retry: %v", err)
	}
	if got := <-f.seen; got != `["a",1]` {
		t.Errorf("an array state came back as %q", got)
	}
	_, err = f.session.ReadResource(ctx, &mcp.ReadResourceParams{Meta: mcp.Meta{"test/user": "bob"}, URI: "file:///q3.csv", RequestState: r.RequestState})
	if !errors.As(err, &wire) || string(wire.Data) != `{"reason":"wrong_user"}` {
		t.Errorf("a resource read by another user: %v", err)
	}
}

// Decision D2 (profile 3.4, 8.2): absent arguments are {}, but "arguments":
// null is not {}: no state is minted for it, and a state bound to {} is refused
// wrong_request when the retry carries null.
func TestArgumentsNullIsUnbindableWhileAbsentArgumentsAreTheEmptyObject(t *testing.T) {
	f := start(t, &mcpstate.Options{Principal: testUser})
	null := json.RawMessage(`null`)
	_, err := call(t, f, "alice", null, "", nil)
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("a state was minted for arguments null: %v", err)
	}
	absent, err := call(t, f, "alice", nil, "", nil)
	if err != nil || !absent.NeedsInput() || strings.Count(absent.RequestState, ".") != 2 {
		t.Fatalf("absent arguments: %v %+v", err, absent)
	}
	if r, err := call(t, f, "alice", map[string]any{}, absent.RequestState, yes); err != nil || r.IsError {
		t.Errorf("a state bound to absent arguments refused {}: %v %+v", err, r)
	}
	again, _ := call(t, f, "alice", nil, "", nil)
	if r, err := call(t, f, "alice", null, again.RequestState, yes); err != nil || reasonOf(r) != "wrong_request" {
		t.Errorf("arguments null opened a state bound to {}: %v %+v", err, r)
	}
	if f.calls.Load() != 1 {
		t.Errorf("the handler acted %d times; want once (the {} retry)", f.calls.Load())
	}
}

// A first round of tools/call whose arguments are present and not an object
// ("x", [1], 42, true) is answered -32602 before the handler runs, as the
// Python, TypeScript and Java SDKs answer it (MCP allows only an object), even
// when the handler would not ask; null is left to the handler (those SDKs read
// it as absent) and stays unbindable. A retry whose state opens (a token bound
// to no arguments, accepted with AllowUnboundTokens) gets the same -32602.
func TestToolArgumentsThatAreNotAnObjectNeverReachTheHandler(t *testing.T) {
	sealer := mustSealer(t)
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	var runs atomic.Int32
	server.AddTool(&mcp.Tool{Name: "delete_branch", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			runs.Add(1) // checks its arguments first, as the example servers' delete_branch does
			return &mcp.CallToolResult{IsError: true,
				Content: []mcp.Content{&mcp.TextContent{Text: "delete_branch needs repo and branch strings."}}}, nil
		})
	if err := mcpstate.Install(server, sealer, &mcpstate.Options{Principal: testUser, AllowUnboundTokens: true}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, server)
	ctx := context.Background()
	unbound, err := sealer.Seal(json.RawMessage(`"asked"`), binding.Request{User: "alice", Target: binding.ToolTarget("delete_branch")})
	if err != nil {
		t.Fatal(err)
	}
	send := func(args json.RawMessage, state string) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Meta: mcp.Meta{"test/user": "alice"}, Name: "delete_branch",
			Arguments: args, RequestState: state})
	}
	for _, args := range []string{`"x"`, `[1]`, `42`, `true`, ` "secret-value"`} {
		for _, state := range []string{"", unbound} {
			r, err := send(json.RawMessage(args), state)
			var wire *jsonrpc.Error
			if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("arguments %s (state %.8q): %v %+v, want -32602", args, state, err, r)
				continue
			}
			if !strings.Contains(wire.Message, "must be a JSON object") || strings.Contains(wire.Message, "secret") {
				t.Errorf("arguments %s: the message %q does not say why, or shows the value", args, wire.Message)
			}
		}
	}
	if runs.Load() != 0 {
		t.Errorf("the handler ran %d times with arguments that are not an object", runs.Load())
	}
	r, err := send(json.RawMessage(`null`), "")
	if err != nil || !r.IsError || r.RequestState != "" || runs.Load() != 1 {
		t.Errorf("arguments null: %v %+v (runs %d), want the handler's own tool error", err, r, runs.Load())
	}
}
