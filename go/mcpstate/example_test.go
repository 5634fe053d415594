package mcpstate_test

import (
	"context"
	"log"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/mcpstate"
)

// A server whose tool asks for a confirmation: the handler writes and reads its
// own plain state; on the wire it is a token bound to the user, the tool and
// the arguments.
func ExampleInstall() {
	ring, err := keys.FromEnv("") // MRTR_STATE_KEYS: a JWKS, a JWK or an HS256 secret
	if err != nil {
		log.Fatal(err)
	}
	sealer, err := mrtrstate.New(ring, "https://tools.example.com")
	if err != nil {
		log.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "git-tools", Version: "1.0.0"}, nil)
	server.AddTool(&mcp.Tool{Name: "delete_branch", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.RequestState == "" { // a first round: ask
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Mode: "form", Message: "Delete it?"}},
					RequestState:  `{"asked":"confirm"}`,
				}, nil
			}
			// A retry: RequestState is the verified state, as the handler wrote it.
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted"}}}, nil
		})
	// Users come from bearer authentication (auth.RequireBearerToken sets
	// TokenInfo.UserID); without one, nothing is sealed.
	if err := mcpstate.Install(server, sealer, nil); err != nil {
		log.Fatal(err)
	}
}

// Handler and Transport show the middleware each request as sent, so that the
// edge inputs of profile 8.2 (an empty or non-string requestState, prompts/get
// arguments that are null or not strings) get the profile's answer rather than
// what the SDK's typed params make of them.
func ExampleHandler() {
	server := mcp.NewServer(&mcp.Implementation{Name: "git-tools", Version: "1.0.0"}, nil)
	// ... tools, then mcpstate.Install(server, sealer, nil) ...
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true})
	http.Handle("/mcp", mcpstate.Handler(streamable)) // behind your authentication
}

// Over stdio the wrapper goes around the transport.
func ExampleTransport() {
	server := mcp.NewServer(&mcp.Implementation{Name: "git-tools", Version: "1.0.0"}, nil)
	// ... tools, then mcpstate.Install(server, sealer, &mcpstate.Options{Principal: mcpstate.FixedPrincipal("me")}) ...
	if err := server.Run(context.Background(), mcpstate.Transport(&mcp.StdioTransport{})); err != nil {
		log.Fatal(err)
	}
}
