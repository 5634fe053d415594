package binding

import (
	"errors"
	"strings"
)

// Kind is what a state can be bound to: a tool, a prompt or a resource.
type Kind string

// The target kinds and their MCP methods (profile, section 3.5).
const (
	Tool     Kind = "tool"
	Prompt   Kind = "prompt"
	Resource Kind = "resource"
)

// Method returns the MCP method of the kind ("tools/call", "prompts/get",
// "resources/read"), or "" for an unknown kind.
func (k Kind) Method() string {
	switch k {
	case Tool:
		return "tools/call"
	case Prompt:
		return "prompts/get"
	case Resource:
		return "resources/read"
	}
	return ""
}

// KindOfMethod is the kind whose method is method, or "" when none is.
func KindOfMethod(method string) Kind {
	for _, k := range []Kind{Tool, Prompt, Resource} {
		if k.Method() == method {
			return k
		}
	}
	return ""
}

// Target is what a request addresses: a tool or prompt by name, a resource by URI.
type Target struct {
	Kind Kind
	Name string
}

// ToolTarget is the target of a tools/call of the named tool.
func ToolTarget(name string) Target { return Target{Tool, name} }

// PromptTarget is the target of a prompts/get of the named prompt.
func PromptTarget(name string) Target { return Target{Prompt, name} }

// ResourceTarget is the target of a resources/read of uri.
func ResourceTarget(uri string) Target { return Target{Resource, uri} }

// ErrBadTarget is returned by Target.Check for an unknown kind or an empty name.
var ErrBadTarget = errors.New("a target needs a kind (tool, prompt or resource) and a non-empty name")

// Check refuses an unknown kind or an empty name.
func (t Target) Check() error {
	if t.Kind.Method() == "" || t.Name == "" {
		return ErrBadTarget
	}
	return nil
}

// Aud is the aud claim for the target: "<method>:<name>", the name as the
// request carries it, without normalisation.
func (t Target) Aud() string { return t.Kind.Method() + ":" + t.Name }

// ParseAudience is the inverse of Aud: the method ends at the first colon and the
// name after it must not be empty.
func ParseAudience(aud string) (Target, bool) {
	method, name, found := strings.Cut(aud, ":")
	kind := KindOfMethod(method)
	if !found || kind == "" || name == "" {
		return Target{}, false
	}
	return Target{kind, name}, true
}
