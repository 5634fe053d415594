//lint:file-ignore SA1019 the conformance scenarios call sampling and roots, deprecated in 2026-07-28 but still part of the protocol

package main

// The fixtures the MCP conformance suite's input-required-result-* scenarios
// call (`npx @modelcontextprotocol/conformance list --server`), as the Python
// example serves them. State goes through the same middleware as the real
// tools; the suite's harness sends no credentials, so the conformance server
// binds every state to one fixed principal, chosen deliberately in main.go.

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func sample(text string, maxTokens int64) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{MaxTokens: maxTokens, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}
}

func sampledText(req *mcp.CallToolRequest, key string) (string, bool) {
	if r, ok := req.Params.InputResponses[key].(*mcp.CreateMessageResult); ok {
		if t, ok := r.Content.(*mcp.TextContent); ok {
			return t.Text, true
		}
	}
	return "", false
}

func roots(req *mcp.CallToolRequest, key string) ([]string, bool) {
	r, ok := req.Params.InputResponses[key].(*mcp.ListRootsResult)
	if !ok {
		return nil, false
	}
	uris := make([]string, 0, len(r.Roots))
	for _, root := range r.Roots {
		uris = append(uris, root.URI)
	}
	return uris, true
}

func addFixture(server *mcp.Server, name, description string, handler mcp.ToolHandler) {
	server.AddTool(&mcp.Tool{Name: name, Description: description, InputSchema: map[string]any{"type": "object"}}, handler)
}

// addConformanceFixtures registers every fixture the input-required-result-* scenarios name.
func addConformanceFixtures(server *mcp.Server) {
	field := func(name, kind string) map[string]any { return map[string]any{name: map[string]any{"type": kind}} }
	addFixture(server, "test_input_required_result_elicitation", "Ask for a name, then greet.",
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			answer := accepted(req, "user_name")
			if name, ok := answer["name"].(string); ok {
				return text(fmt.Sprintf("Hello, %s!", name)), nil
			}
			return inputRequired(mcp.InputRequestMap{"user_name": form("What is your name?", field("name", "string"), "name")}, nil), nil
		})
	addFixture(server, "test_input_required_result_sampling", "Ask the client's model a question, then report its answer.",
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if said, ok := sampledText(req, "capital_question"); ok {
				return text("The model said: " + said), nil
			}
			return inputRequired(mcp.InputRequestMap{"capital_question": sample("What is the capital of France?", 100)}, nil), nil
		})
	addFixture(server, "test_input_required_result_list_roots", "Ask for the client's roots, then list them.",
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if uris, ok := roots(req, "client_roots"); ok {
				return text("Roots: " + strings.Join(uris, ", ")), nil
			}
			return inputRequired(mcp.InputRequestMap{"client_roots": &mcp.ListRootsParams{}}, nil), nil
		})
	addFixture(server, "test_input_required_result_request_state", "Ask for a confirmation with a sealed state.",
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s := state(req)
			answer := accepted(req, "confirm")
			if s == nil || s["asked"] != "confirm" || answer == nil {
				return inputRequired(mcp.InputRequestMap{"confirm": form("Please confirm", field("ok", "boolean"), "ok")},
					map[string]string{"asked": "confirm"}), nil
			}
			return text(fmt.Sprintf("state-ok: the sealed requestState verified; ok=%v", answer["ok"])), nil
		})
	addFixture(server, "test_input_required_result_multi_round", "Ask for a name, then (with the name in the state) for a colour.",
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s := state(req)
			if s != nil && s["step"] == "color" {
				if color := accepted(req, "step2"); color != nil {
					return text(fmt.Sprintf("%v likes %v.", s["name"], color["color"])), nil
				}
				return inputRequired(mcp.InputRequestMap{"step2": form("Step 2: What is your favorite color?", field("color", "string"), "color")}, s), nil
			}
			var name map[string]any
			if s != nil && s["step"] == "name" {
				name = accepted(req, "step1")
			}
			if name == nil {
				return inputRequired(mcp.InputRequestMap{"step1": form("Step 1: What is your name?", field("name", "string"), "name")},
					map[string]string{"step": "name"}), nil
			}
			return inputRequired(mcp.InputRequestMap{"step2": form("Step 2: What is your favorite color?", field("color", "string"), "color")},
				map[string]any{"step": "color", "name": name["name"]}), nil
		})
}
