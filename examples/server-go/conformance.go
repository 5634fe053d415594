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

// sampledText is the text a sampling answer under key carries (the SDK reads
// every sampling answer as a CreateMessageWithToolsResult).
func sampledText(req *mcp.CallToolRequest, key string) (string, bool) {
	switch r := req.Params.InputResponses[key].(type) {
	case *mcp.CreateMessageResult:
		if t, ok := r.Content.(*mcp.TextContent); ok {
			return t.Text, true
		}
	case *mcp.CreateMessageWithToolsResult:
		for _, c := range r.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				return t.Text, true
			}
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
	addFixture(server, "test_input_required_result_multiple_inputs", "Ask for a name, a model's greeting and the roots at once.",
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := accepted(req, "user_name")
			greeting, sampled := sampledText(req, "greeting")
			uris, listed := roots(req, "client_roots")
			if state(req) == nil || name == nil || !sampled || !listed {
				return inputRequired(mcp.InputRequestMap{
					"user_name":    form("What is your name?", field("name", "string"), "name"),
					"greeting":     sample("Generate a greeting", 50),
					"client_roots": &mcp.ListRootsParams{},
				}, map[string]any{"asked": []string{"client_roots", "greeting", "user_name"}}), nil
			}
			return text(fmt.Sprintf("%s %v; roots: %s", greeting, name["name"], strings.Join(uris, ", "))), nil
		})
	addFixture(server, "test_input_required_result_tampered_state", "Ask with a sealed state; a tampered one never reaches this code.",
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if state(req) == nil || accepted(req, "confirm") == nil {
				return inputRequired(mcp.InputRequestMap{"confirm": form("Please confirm", field("ok", "boolean"), "ok")},
					map[string]string{"asked": "confirm"}), nil
			}
			return text("The state verified."), nil
		})
	addFixture(server, "test_input_required_result_capabilities", "Ask only for what the client declared it can answer.",
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			capabilities := req.ClientCapabilities()
			requests := mcp.InputRequestMap{}
			var asked []string
			if capabilities != nil && capabilities.Elicitation != nil {
				requests["user_name"] = form("What is your name?", field("name", "string"), "name")
				asked = append(asked, "user_name")
			}
			if capabilities != nil && capabilities.Sampling != nil {
				requests["greeting"] = sample("Generate a greeting", 50)
				asked = append([]string{"greeting"}, asked...)
			}
			if len(requests) == 0 {
				return text("The client declared neither elicitation nor sampling; nothing to ask."), nil
			}
			all := state(req) != nil
			for key := range requests {
				_, answered := req.Params.InputResponses[key]
				all = all && answered
			}
			if all {
				return text("Every declared input arrived."), nil
			}
			return inputRequired(requests, map[string]any{"asked": asked}), nil
		})
	server.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks for context first."},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if answer, ok := req.Params.InputResponses["user_context"].(*mcp.ElicitResult); ok && answer.Action == "accept" && req.Params.RequestState != "" {
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
					Content: &mcp.TextContent{Text: fmt.Sprintf("Use this context: %v", answer.Content["context"])}}}}, nil
			}
			return &mcp.GetPromptResult{
				InputRequests: mcp.InputRequestMap{"user_context": form("What context should the prompt use?", field("context", "string"), "context")},
				RequestState:  `{"asked":"user_context"}`,
			}, nil
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
