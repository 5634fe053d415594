package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The prompt and the resource that ask before they answer (the twins of
// examples/server/asking.py): the first round answers input_required with an
// elicitation and a state the middleware seals (bound to the user, the target
// and, for the prompt, its arguments); the retry with the answer completes.

// faresTemplate is the URI template of the resource that asks.
const faresTemplate = "trips://fares/{destination}"

// askedState is the state both seal: what the round asked.
func askedState(key string) string {
	encoded, _ := json.Marshal(map[string]string{"asked": key})
	return string(encoded)
}

// verifiedAnswer is the accepted answer under key of a retry whose verified
// state says key was asked; nil on a first round or without that answer.
func verifiedAnswer(requestState string, responses mcp.InputResponseMap, key string) map[string]any {
	if requestState == "" {
		return nil
	}
	var s map[string]any
	if json.Unmarshal([]byte(requestState), &s) != nil || s["asked"] != key {
		return nil
	}
	if answer, ok := responses[key].(*mcp.ElicitResult); ok && answer.Action == "accept" && answer.Content != nil {
		return answer.Content
	}
	return nil
}

// oneField is the properties of a form with one field of the JSON type kind.
func oneField(name, kind string) map[string]any {
	return map[string]any{name: map[string]any{"type": kind}}
}

// fareText is the text of trips://fares/<destination>: the return fare, 15%
// more for a weekend departure.
func fareText(destination string, weekend bool) string {
	base := destinations[destination]
	if weekend {
		return fmt.Sprintf("Return fare to %s, leaving on a weekend: %d EUR.", destination, int(float64(base)*1.15+0.5))
	}
	return fmt.Sprintf("Return fare to %s: %d EUR.", destination, base)
}

// addAskingPromptAndResource registers the review_branch prompt and the
// trips://fares/{destination} resource template on server.
func addAskingPromptAndResource(server *mcp.Server) {
	server.AddPrompt(&mcp.Prompt{
		Name:        "review_branch",
		Description: "Review a branch, after the person says what to focus on.",
		Arguments: []*mcp.PromptArgument{
			{Name: "repo", Description: "the repository (default acme/api)"},
			{Name: "branch", Description: "the branch (default main)"},
		},
	}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		repo, branch := req.Params.Arguments["repo"], req.Params.Arguments["branch"]
		if repo == "" {
			repo = "acme/api"
		}
		if branch == "" {
			branch = "main"
		}
		answer := verifiedAnswer(req.Params.RequestState, req.Params.InputResponses, "focus")
		if focus, ok := answer["focus"].(string); ok {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: fmt.Sprintf("Review branch %s of %s, focusing on: %s.", branch, repo, focus)}}}}, nil
		}
		question := fmt.Sprintf("What should the review of %s in %s focus on?", branch, repo)
		return &mcp.GetPromptResult{
			InputRequests: mcp.InputRequestMap{"focus": form(question, oneField("focus", "string"), "focus")},
			RequestState:  askedState("focus"),
		}, nil
	})
	server.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "fares",
		URITemplate: faresTemplate,
		Description: "The return fare to a destination, after the person says whether they leave on a weekend.",
		MIMEType:    "text/plain",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		destination := strings.TrimPrefix(uri, "trips://fares/")
		contents := func(text string) *mcp.ReadResourceResult {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}
		}
		if _, ok := destinations[destination]; !ok {
			return contents(fmt.Sprintf("The example airline does not fly to %s.", destination)), nil
		}
		answer := verifiedAnswer(req.Params.RequestState, req.Params.InputResponses, "weekend")
		if weekend, ok := answer["weekend"].(bool); ok {
			return contents(fareText(destination, weekend)), nil
		}
		question := fmt.Sprintf("Do you leave for %s on a weekend?", destination)
		return &mcp.ReadResourceResult{
			InputRequests: mcp.InputRequestMap{"weekend": form(question, oneField("weekend", "boolean"), "weekend")},
			RequestState:  askedState("weekend"),
		}, nil
	})
}
