package mcpstate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/token"
	"github.com/mrtr-state/mrtr-state/go/token/jsonstrict"
)

// ReasonMetaKey is the _meta key of a refused tool call that holds the reason code.
const ReasonMetaKey = "io.github.mrtr-state/reason"

// Refusal says how a refused requestState on tools/call is answered.
type Refusal int

const (
	// ToolError answers with a CallToolResult with isError set (the default, as
	// rule AGT-18's check asks).
	ToolError Refusal = iota
	// JSONRPCError answers with a JSON-RPC -32602 error whose data is {"reason": code}.
	JSONRPCError
)

// Principal names the user a request is made for; "" means nobody is
// authenticated, and the middleware then refuses to seal or open.
type Principal func(ctx context.Context, req mcp.Request) (string, error)

// AuthenticatedUser is the default Principal: the UserID of the request's
// bearer token (req.Extra.TokenInfo, set by the SDK's auth.RequireBearerToken).
func AuthenticatedUser(_ context.Context, req mcp.Request) (string, error) {
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		return extra.TokenInfo.UserID, nil
	}
	return "", nil
}

// FixedPrincipal binds every request to one user: a deliberate choice for a
// server with one user (a local stdio server), never for a server several
// people reach, since anyone who reaches it can then present any state it
// minted (profile, 8.2).
func FixedPrincipal(user string) Principal {
	return func(context.Context, mcp.Request) (string, error) { return user, nil }
}

// Options configure the middleware; the zero value is the default.
type Options struct {
	// Principal names the request's user (default AuthenticatedUser).
	Principal Principal
	// ToolRefusal is how a refusal on tools/call is answered (default ToolError).
	ToolRefusal Refusal
	// SingleUse lists the aud values ("tools/call:delete_branch") whose states
	// are redeemed once; SingleUseAll redeems every state once. Either needs a
	// sealer made WithReplayStore. Give the round that acts (books, pays,
	// deletes) single use (profile, 9.5).
	SingleUse    []string
	SingleUseAll bool
	// AllowUnboundTokens stops requiring the argument binding on tools/call and
	// prompts/get (required by default; profile, section 5, step 19). Every state
	// this middleware seals carries the binding; set it only while tokens minted
	// by a server that does not bind are still live.
	AllowUnboundTokens bool
	// Logger receives refusals (reason and detail, never the token) and
	// configuration errors (default slog.Default()).
	Logger *slog.Logger
}

// Install adds the middleware to server (Server.AddReceivingMiddleware). Add it
// after other receiving middleware that must see the sealed token.
func Install(server *mcp.Server, sealer *mrtrstate.Sealer, opts *Options) error {
	m, err := Middleware(sealer, opts)
	if err != nil {
		return err
	}
	server.AddReceivingMiddleware(m)
	return nil
}

type boundary struct {
	sealer    *mrtrstate.Sealer
	principal Principal
	refusal   Refusal
	singleUse map[string]bool
	all       bool
	require   bool
	logger    *slog.Logger
}

// Middleware returns the middleware without installing it.
func Middleware(sealer *mrtrstate.Sealer, opts *Options) (mcp.Middleware, error) {
	if sealer == nil {
		return nil, errors.New("mcpstate: a sealer is required")
	}
	if opts == nil {
		opts = &Options{}
	}
	b := &boundary{
		sealer: sealer, principal: opts.Principal, refusal: opts.ToolRefusal, all: opts.SingleUseAll,
		require: !opts.AllowUnboundTokens, logger: opts.Logger, singleUse: map[string]bool{},
	}
	if b.principal == nil {
		b.principal = AuthenticatedUser
	}
	if b.logger == nil {
		b.logger = slog.Default()
	}
	if b.refusal != ToolError && b.refusal != JSONRPCError {
		return nil, errors.New("mcpstate: ToolRefusal must be ToolError or JSONRPCError")
	}
	for _, aud := range opts.SingleUse {
		if _, ok := binding.ParseAudience(aud); !ok {
			return nil, fmt.Errorf("mcpstate: SingleUse entries are aud values such as \"tools/call:delete_branch\", not %q", aud)
		}
		b.singleUse[aud] = true
	}
	if (b.all || len(b.singleUse) > 0) && sealer.ReplayStore() == nil {
		return nil, errors.New("mcpstate: single use needs a sealer made WithReplayStore " +
			"(replay.NewMemoryStore for one process, redisstore for a fleet)")
	}
	return b.wrap, nil
}

// roundKey is the context key of the verified round.
type roundKey struct{}

// Round is what the middleware verified for the request being handled.
type Round struct {
	// Verified is true when the request carried a requestState that opened.
	Verified bool
	// State is the verified state as the handler sees it ("" on a first round).
	State string
	// Claims are the token's validated claims (nil on a first round).
	Claims *token.Claims
}

// RoundFrom returns the round the middleware verified for the request whose
// handler got ctx; false when the middleware did not run for it.
func RoundFrom(ctx context.Context) (Round, bool) {
	r, ok := ctx.Value(roundKey{}).(Round)
	return r, ok
}

// request is a target request taken apart: its state, its target and arguments.
type request struct {
	state     string
	target    binding.Target
	arguments json.RawMessage
	responses bool // the params carry inputResponses
	// unread: the SDK was not shown the arguments sent (prompts/get arguments
	// that are not an object of strings; see Transport), so the handler must
	// not run.
	unread bool
	// notObject: tools/call arguments that are present, not null and not an
	// object ("x", [1], 42, true): the handler must not run with them.
	notObject bool
	// badResponses: an inputResponses entry is no result the SDK can read;
	// badResponse names it (a quoted key, "" when the map itself is unreadable).
	badResponses bool
	badResponse  string
}

func parts(method string, req mcp.Request) (request, bool) {
	var r request
	var meta mcp.Meta
	switch p := req.GetParams().(type) {
	case *mcp.CallToolParamsRaw:
		args := p.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}") // absent arguments are {} (profile 3.4)
		}
		r, meta = request{state: p.RequestState, target: binding.ToolTarget(p.Name), arguments: args,
			responses: p.InputResponses != nil, notObject: neitherObjectNorNull(args)}, p.Meta
	case *mcp.GetPromptParams:
		// Without Transport or Handler the SDK's map[string]string is all there
		// is: "arguments": null reads as absent, so it is bound as {}.
		args := json.RawMessage("{}")
		if p.Arguments != nil {
			args, _ = json.Marshal(p.Arguments)
		}
		r, meta = request{state: p.RequestState, target: binding.PromptTarget(p.Name), arguments: args,
			responses: p.InputResponses != nil}, p.Meta
	case *mcp.ReadResourceParams:
		r, meta = request{state: p.RequestState, target: binding.ResourceTarget(p.URI),
			responses: p.InputResponses != nil}, p.Meta
	default:
		return request{}, false
	}
	if sent, ok := recall(meta); ok { // the request as sent (Transport, Handler)
		if sent.arguments != nil {
			r.arguments, r.unread = sent.arguments, sent.removed
		}
		r.badResponses, r.badResponse = sent.badResponses, sent.badResponse
	}
	return r, method == "tools/call" || method == "prompts/get" || method == "resources/read"
}

// neitherObjectNorNull tells whether a JSON value (the SDK's raw tools/call
// arguments) is present and is neither an object nor null. Null is left to the
// handler, as the Python, TypeScript and Java SDKs read it as absent arguments;
// it stays unbindable, so no state is sealed for it.
func neitherObjectNorNull(value json.RawMessage) bool {
	trimmed := bytes.TrimLeft(value, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] != '{' && !bytes.Equal(bytes.TrimRight(trimmed, " \t\r\n"), []byte("null"))
}

// withoutWireID is meta without WireMetaKey (a copy when it had one).
func withoutWireID(meta mcp.Meta) mcp.Meta {
	if _, ok := meta[WireMetaKey]; !ok {
		return meta
	}
	meta = maps.Clone(meta)
	delete(meta, WireMetaKey)
	return meta
}

// withParams returns req with a copy of its params changed by the state and
// the responses to keep, and without WireMetaKey; the caller's params are never
// changed.
func withParams(req mcp.Request, state string, dropResponses bool) mcp.Request {
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		p := *r.Params
		p.RequestState = state
		p.Meta = withoutWireID(p.Meta)
		if dropResponses {
			p.InputResponses = nil
		}
		return &mcp.CallToolRequest{Session: r.Session, Params: &p, Extra: r.Extra}
	case *mcp.GetPromptRequest:
		p := *r.Params
		p.RequestState = state
		p.Meta = withoutWireID(p.Meta)
		if dropResponses {
			p.InputResponses = nil
		}
		return &mcp.GetPromptRequest{Session: r.Session, Params: &p, Extra: r.Extra}
	case *mcp.ReadResourceRequest:
		p := *r.Params
		p.RequestState = state
		p.Meta = withoutWireID(p.Meta)
		if dropResponses {
			p.InputResponses = nil
		}
		return &mcp.ReadResourceRequest{Session: r.Session, Params: &p, Extra: r.Extra}
	}
	return req
}

func internalError(message string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: message}
}

// errUnreadArguments answers arguments the SDK cannot decode (prompts/get
// arguments that are not a map of strings, arguments nested deeper than the
// SDK reads), so the handler never runs with others.
var errUnreadArguments = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
	Message: "The request's arguments cannot be read: they nest too deeply, or, on prompts/get, they are not an object whose members are strings."}

// errBadResponses answers an inputResponses entry that is no result of an
// input request (an ElicitResult, a CreateMessageResult, a ListRootsResult),
// naming the entry (its key, quoted), never its value.
func errBadResponses(name string) *jsonrpc.Error {
	if name == "" {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: "Invalid params: inputResponses is not an object of results of the input requests it answers."}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
		Message: "Invalid params: inputResponses[" + name + "] is not a result of the input request it answers (an object such as an ElicitResult)."}
}

// errArgumentsNotObject answers tools/call arguments that are not an object
// (MCP's CallToolRequest allows only an object): a -32602 before the handler
// runs, as the Python, TypeScript and Java SDKs answer them; it never shows the
// value.
var errArgumentsNotObject = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
	Message: "Invalid params: tools/call arguments must be a JSON object."}

var errNoPrincipal = internalError("The server cannot bind request state to a user: no authenticated principal.")

func (b *boundary) user(ctx context.Context, method string, req mcp.Request) (string, error) {
	user, err := b.principal(ctx, req)
	if err != nil {
		b.logger.Error("mcpstate: the principal function failed", "method", method, "error", err)
		return "", internalError("Internal error")
	}
	if user == "" {
		b.logger.Error("mcpstate: no authenticated principal to bind requestState to: use bearer "+
			"authentication whose token verifier sets TokenInfo.UserID, or a FixedPrincipal", "method", method)
		return "", errNoPrincipal
	}
	return user, nil
}

func (b *boundary) wrap(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		parsed, ok := parts(method, req)
		if !ok {
			return next(ctx, method, req)
		}
		req = withParams(req, parsed.state, false) // without WireMetaKey
		var bound *binding.Request
		round := Round{}
		if parsed.state == "" && parsed.unread {
			b.logger.Warn("mcpstate: the arguments cannot be read (too deep, or prompts/get arguments not an object of strings)", "method", method)
			return nil, errUnreadArguments
		}
		if parsed.state == "" && parsed.notObject {
			// A first round: no state to open, and the handler must not run (it
			// would see arguments MCP does not allow, and could ask).
			b.logger.Warn("mcpstate: the arguments are not an object", "method", method)
			return nil, errArgumentsNotObject
		}
		if parsed.state == "" { // absent, or null: a first round
			if parsed.responses {
				// Profile 8.2: answers with no verified state answer nothing this
				// server asked; the handler never sees them.
				b.logger.Info("mcpstate: inputResponses without a requestState were dropped", "method", method)
				req = withParams(req, "", true)
			}
		} else {
			user, err := b.user(ctx, method, req)
			if err != nil {
				return nil, err
			}
			bound = &binding.Request{User: user, Target: parsed.target, Arguments: parsed.arguments}
			var opts []mrtrstate.OpenOption
			if b.all || b.singleUse[parsed.target.Aud()] {
				opts = append(opts, mrtrstate.Consume())
			}
			opts = append(opts, mrtrstate.RequireArgumentsThisCall(b.require))
			claims, err := b.sealer.OpenClaims(ctx, parsed.state, *bound, opts...)
			var refused *mrtrstate.InvalidRequestState
			if errors.As(err, &refused) {
				b.logger.Warn("mcpstate: requestState refused", "method", method, "reason", string(refused.Reason),
					"detail", refused.Detail)
				return b.refuse(method, req, refused)
			}
			if err != nil {
				b.logger.Error("mcpstate: cannot open requestState", "method", method, "error", err)
				return nil, internalError("Internal error")
			}
			if parsed.unread { // opened, yet the SDK cannot hand the handler these arguments
				return nil, errUnreadArguments
			}
			if parsed.notObject { // opened (a state bound to no arguments), yet not an object
				return nil, errArgumentsNotObject
			}
			if parsed.badResponses {
				// Answers to a verified round that are no results: -32602, as Python's
				// and Java's boundaries answer them. A refused state was refused above;
				// on a first round the answers are dropped (the wrapper took them away).
				b.logger.Warn("mcpstate: an inputResponses entry is not a result", "method", method)
				return nil, errBadResponses(parsed.badResponse)
			}
			text := textOf(claims.State)
			round = Round{Verified: true, State: text, Claims: claims}
			req = withParams(req, text, false)
		}
		result, err := next(context.WithValue(ctx, roundKey{}, round), method, req)
		if err != nil || result == nil {
			return result, err
		}
		return b.seal(ctx, method, req, parsed, bound, result)
	}
}

func (b *boundary) refuse(method string, req mcp.Request, refused *mrtrstate.InvalidRequestState) (mcp.Result, error) {
	if method == "tools/call" && b.refusal == ToolError {
		result := &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: refused.Error()}},
			IsError: true,
			Meta:    mcp.Meta{ReasonMetaKey: string(refused.Reason)},
		}
		if call, ok := req.(*mcp.CallToolRequest); ok && multiRoundTrip(call.ProtocolVersion()) {
			// The handler does not run, so the SDK does not mark this result
			// "complete"; a 2026-07-28 client requires resultType. The SDK keeps
			// it unexported and reads it from the wire, so the result is read
			// from its own JSON with the member added.
			return withResultTypeComplete(result), nil
		}
		return result, nil
	}
	data, _ := json.Marshal(map[string]string{"reason": string(refused.Reason)})
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: refused.Error(), Data: data}
}

// multiRoundTrip tells whether a request's protocol version has resultType (as
// the SDK decides it: no version known means the latest).
func multiRoundTrip(version string) bool { return version == "" || version >= "2026-07-28" }

// withResultTypeComplete is result with resultType "complete" on the wire.
func withResultTypeComplete(result *mcp.CallToolResult) *mcp.CallToolResult {
	text, err := json.Marshal(result)
	if err != nil || len(text) < 2 {
		return result
	}
	text = append(text[:len(text)-1], `,"resultType":"complete"}`...)
	var typed mcp.CallToolResult
	if json.Unmarshal(text, &typed) != nil {
		return result
	}
	return &typed
}

// seal replaces the RequestState of the handler's result with a token.
func (b *boundary) seal(ctx context.Context, method string, req mcp.Request, parsed request,
	bound *binding.Request, result mcp.Result) (mcp.Result, error) {
	var state string
	switch r := result.(type) {
	case *mcp.CallToolResult:
		state = r.RequestState
	case *mcp.GetPromptResult:
		state = r.RequestState
	case *mcp.ReadResourceResult:
		state = r.RequestState
	}
	if state == "" {
		return result, nil
	}
	if bound == nil { // a first round: the request is bound now that a state is sealed
		user, err := b.user(ctx, method, req)
		if err != nil {
			return nil, err
		}
		bound = &binding.Request{User: user, Target: parsed.target, Arguments: parsed.arguments}
	}
	tok, err := b.sealer.Seal(claimOf(state), *bound)
	if errors.Is(err, binding.ErrUnbindable) {
		b.logger.Warn("mcpstate: the arguments cannot be bound to requestState", "method", method)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: "The request's arguments cannot be bound to a request state (they must be I-JSON): " + err.Error()}
	}
	if err != nil {
		b.logger.Error("mcpstate: cannot seal requestState", "method", method, "error", err)
		return nil, internalError("Internal error")
	}
	switch r := result.(type) {
	case *mcp.CallToolResult:
		cp := *r
		cp.RequestState = tok
		return &cp, nil
	case *mcp.GetPromptResult:
		cp := *r
		cp.RequestState = tok
		return &cp, nil
	case *mcp.ReadResourceResult:
		cp := *r
		cp.RequestState = tok
		return &cp, nil
	}
	return result, nil
}

// claimOf is the state claim for a handler's RequestState string: the JSON
// value of object or array text the profile can carry, else the string itself.
func claimOf(text string) json.RawMessage {
	trimmed := bytes.TrimLeft([]byte(text), " \t\r\n")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		if _, err := jsonstrict.Parse([]byte(text), jsonstrict.Options{MaxDepth: token.MaxStateDepth, CheckOnly: true}); err == nil {
			var compact bytes.Buffer
			if json.Compact(&compact, []byte(text)) == nil {
				return compact.Bytes()
			}
		}
	}
	return jsonstrict.AppendString(nil, text)
}

// textOf is the RequestState string a handler sees for a verified state claim:
// a string claim verbatim, any other value as its compact JSON text.
func textOf(claim json.RawMessage) string {
	v, err := jsonstrict.Parse(claim, jsonstrict.Options{MaxDepth: token.MaxStateDepth + 1, KeepDepth: 1})
	if err == nil && v.Kind == jsonstrict.String {
		return v.Str
	}
	var compact bytes.Buffer
	if json.Compact(&compact, claim) != nil {
		return string(claim)
	}
	return compact.String()
}
