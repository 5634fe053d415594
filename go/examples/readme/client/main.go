// Command client is go/README.md's client for manual rounds: it calls the one-screen server's
// delete_branch, sees the server ask (NeedsInput), answers the question itself, and retries with
// the sealed requestState; then it shows a changed requestState refused.
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds the user's access token (EXAMPLE_BEARER_TOKEN) to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(req)
}

func main() {
	ctx := context.Background()
	endpoint := "http://127.0.0.1:8000"
	if len(os.Args) > 1 {
		endpoint = os.Args[1]
	}
	// Disabled: the client returns input_required results to you instead of answering them itself.
	client := mcp.NewClient(&mcp.Implementation{Name: "git-client", Version: "1.0.0"},
		&mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint,
		HTTPClient: &http.Client{Transport: bearer{os.Getenv("EXAMPLE_BEARER_TOKEN")}}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	params := &mcp.CallToolParams{Name: "delete_branch", Arguments: map[string]any{"branch": "old-feature"}}
	first, err := session.CallTool(ctx, params)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(first.NeedsInput(), len(first.InputRequests)) // true 1: the server asks "confirm"

	// The retry: the same call with the answers and the requestState exactly as received (a sealed token).
	params.InputResponses = mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept"}}
	params.RequestState = first.RequestState
	changed := *params
	signature := strings.LastIndex(first.RequestState, ".") + 1 // one character of the signature changed
	flipped := map[bool]string{true: "B", false: "A"}[first.RequestState[signature] == 'A']
	changed.RequestState = first.RequestState[:signature] + flipped + first.RequestState[signature+1:]
	refused, err := session.CallTool(ctx, &changed)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(refused.IsError, refused.Meta["io.github.mrtr-state/reason"]) // true bad_signature

	second, err := session.CallTool(ctx, params)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(second.NeedsInput(), second.Content[0].(*mcp.TextContent).Text) // false deleted
}
