// Command server is go/README.md's "server in one screen": delete_branch asks for a
// confirmation, and its state comes back sealed, bound to the user, tool and arguments.
package main

import (
	"context"
	"crypto/subtle"
	"flag"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/mcpstate"
	"github.com/mrtr-state/mrtr-state/go/replay"
)

// verify is your authentication: here one bearer token (EXAMPLE_BEARER_TOKEN) is the user alice.
func verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	want := os.Getenv("EXAMPLE_BEARER_TOKEN")
	if want == "" || subtle.ConstantTimeCompare([]byte(token), []byte(want)) != 1 {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: "alice", Expiration: time.Now().Add(time.Hour)}, nil
}

func main() {
	ring, err := keys.FromEnv("") // MRTR_STATE_KEYS: a JWKS, one JWK, or a bare HS256 secret (base64)
	if err != nil {
		log.Fatal(err)
	}
	sealer, err := mrtrstate.New(ring, "https://git.example.com",
		mrtrstate.WithReplayStore(replay.NewMemoryStore(0, nil))) // or redisstore.NewFromURL for a fleet
	if err != nil {
		log.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "git-tools", Version: "1.0.0"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{"branch": map[string]any{"type": "string"}}}
	server.AddTool(&mcp.Tool{Name: "delete_branch", InputSchema: schema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.RequestState == "" { // a first round: ask
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Mode: "form", Message: "Delete it?"}},
					RequestState:  `{"head":"4b1d0aa"}`, // the handler's own plain state
				}, nil
			}
			// The retry: RequestState is the verified state, bound to this user, tool and arguments.
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted"}}}, nil
		})
	if err := mcpstate.Install(server, sealer, &mcpstate.Options{SingleUse: []string{"tools/call:delete_branch"}}); err != nil {
		log.Fatal(err)
	}
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true}) // 2026-07-28 clients: no session
	addr := flag.String("addr", "127.0.0.1:8000", "the address to listen on")
	flag.Parse()
	// mcpstate.Handler shows the middleware each request as sent (profile 8.2's edge inputs);
	// over stdio: server.Run(ctx, mcpstate.Transport(&mcp.StdioTransport{})).
	httpServer := &http.Server{Addr: *addr, Handler: auth.RequireBearerToken(verify, nil)(mcpstate.Handler(handler)),
		ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(httpServer.ListenAndServe())
}
