package mcpstate_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/mcpstate"
)

// bearerClient adds a bearer token to every request.
type bearerClient struct{ token string }

func (b bearerClient) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestTheDefaultPrincipalIsTheBearerTokensUser runs the middleware with its
// default principal behind the SDK's auth.RequireBearerToken over Streamable
// HTTP on loopback: a state alice's token minted opens for alice and is refused
// for bob.
func TestTheDefaultPrincipalIsTheBearerTokensUser(t *testing.T) {
	k, _ := keys.Generate(keys.HS256, "")
	ring, _ := keys.NewKeyring(k)
	sealer, _ := mrtrstate.New(ring, "https://tools.example.com")
	server := mcp.NewServer(&mcp.Implementation{Name: "http", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "confirm", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.RequestState == "" {
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"ok": &mcp.ElicitParams{Mode: "form", Message: "OK?"}},
					RequestState:  "asked",
				}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done: " + req.Params.RequestState}}}, nil
		})
	if err := mcpstate.Install(server, sealer, nil); err != nil {
		t.Fatal(err)
	}
	users := map[string]string{"alice-token": "alice", "bob-token": "bob"}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if user, ok := users[token]; ok {
			return &auth.TokenInfo{UserID: user, Expiration: time.Now().Add(time.Hour)}, nil
		}
		return nil, auth.ErrInvalidToken
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	httpServer := httptest.NewServer(auth.RequireBearerToken(verify, nil)(handler))
	defer httpServer.Close()
	call := func(token, state string) *mcp.CallToolResult {
		t.Helper()
		client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
		session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: httpServer.URL,
			HTTPClient: &http.Client{Transport: bearerClient{token}}, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer session.Close()
		params := &mcp.CallToolParams{Name: "confirm", Arguments: map[string]any{}, RequestState: state}
		if state != "" {
			params.InputResponses = mcp.InputResponseMap{"ok": &mcp.ElicitResult{Action: "accept"}}
		}
		result, err := session.CallTool(context.Background(), params)
		if err != nil {
			t.Fatal(err)
		}
		return result
	}
	first := call("alice-token", "")
	if !first.NeedsInput() || strings.Count(first.RequestState, ".") != 2 {
		t.Fatalf("first round: %+v", first)
	}
	if r := call("bob-token", first.RequestState); reasonOf(r) != "wrong_user" {
		t.Errorf("bob presented alice's state: %+v", r)
	}
	r := call("alice-token", first.RequestState)
	if r.IsError || len(r.Content) != 1 || r.Content[0].(*mcp.TextContent).Text != "done: asked" {
		t.Errorf("alice's retry: %+v", r)
	}
}
