// Command client is a one-call command-line client of the example servers on
// the official Go MCP SDK client (manual multi round-trip mode): it sends one
// tools/call, retry fields included, and prints what came back. The
// cross-language test (tests/crosslang) drives it.
//
//	echo '{"url": ..., "user": "alice", "tool": "delete_branch", "arguments": {...},
//	       "requestState": "...", "inputResponses": {...}}' | client
//
// It prints one JSON line: {"resultType": "input_required", "requestState"}, or
// {"resultType": "complete", "isError", "text", "reason"} (reason: the _meta
// refusal code, or null), or {"error": {"code", "message", "data"}} for a
// JSON-RPC error. Exit status 2 for a bad call line.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mrtr-state/mrtr-state/go/mcpstate"
)

type call struct {
	URL            string               `json:"url"`
	User           string               `json:"user"`
	Tool           string               `json:"tool"`
	Arguments      map[string]any       `json:"arguments"`
	RequestState   string               `json:"requestState"`
	InputResponses mcp.InputResponseMap `json:"inputResponses"`
}

// bearer adds the example user's token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func main() {
	var c call
	if err := json.NewDecoder(os.Stdin).Decode(&c); err != nil || c.URL == "" || c.User == "" || c.Tool == "" {
		fmt.Fprintln(os.Stderr, `client: the call needs "url", "user" and "tool" strings`)
		os.Exit(2)
	}
	if c.Arguments == nil {
		c.Arguments = map[string]any{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "mrtr-state-example-client-go", Version: "1.0.0"},
		&mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return nil, errors.New("this client answers no questions by itself")
			}})
	transport := &mcp.StreamableClientTransport{Endpoint: c.URL, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer{c.User + "-example-token"}}, DisableStandaloneSSE: true}
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client: cannot connect:", err)
		os.Exit(1)
	}
	defer session.Close()
	result, err := session.CallTool(ctx, &mcp.CallToolParams{Name: c.Tool, Arguments: c.Arguments,
		RequestState: c.RequestState, InputResponses: c.InputResponses})
	var wire *jsonrpc.Error
	switch {
	case errors.As(err, &wire):
		var data any
		if len(wire.Data) > 0 {
			_ = json.Unmarshal(wire.Data, &data)
		}
		print(map[string]any{"error": map[string]any{"code": wire.Code, "message": wire.Message, "data": data}})
	case err != nil:
		fmt.Fprintln(os.Stderr, "client: the call failed:", err)
		os.Exit(1)
	case result.NeedsInput():
		print(map[string]any{"resultType": "input_required", "requestState": result.RequestState})
	default:
		var text strings.Builder
		for _, item := range result.Content {
			if t, ok := item.(*mcp.TextContent); ok {
				text.WriteString(t.Text)
			}
		}
		reason, _ := result.Meta[mcpstate.ReasonMetaKey].(string)
		var shown any
		if reason != "" {
			shown = reason
		}
		print(map[string]any{"resultType": "complete", "isError": result.IsError, "text": text.String(), "reason": shown})
	}
}

func print(value any) {
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(value)
}
