// Package mrtrstate seals and opens MCP requestState tokens of the mrtr-state
// profile (spec/profile.md): signed (HS256, EdDSA) or encrypted (dir +
// A256GCM), bound to the user, the target and the request's arguments,
// short-lived, and validated by the profile's procedure in its order with its
// reason codes, so a state minted in Go opens, or is refused for the same
// reason, on a Python or TypeScript replica.
//
// A Sealer ties the rooms together: package keys (keys, rings, key sources),
// package token (the compact formats, the claims, the strict JSON reader),
// package binding (the aud target and the RFC 8785 argument digest) and package
// replay (single use). Every refusal is an *InvalidRequestState carrying a
// Reason; test it with errors.As, or with errors.Is and a sentinel such as
// ErrExpired. Package mcpstate installs all of it on a server of the official
// Go MCP SDK with one call; package metrics counts what it does (WithMetrics).
//
// It implements rule AGT-18 of the Agent Wranglers playbook: a state with one
// byte changed, one presented after 10 minutes, and one presented by another
// user are each refused.
package mrtrstate
