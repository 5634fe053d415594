// Package refusal holds the one error type of a refused requestState token,
// InvalidRequestState, and the profile's reason codes (spec/profile.md,
// section 6). It is a leaf package so that every room (token, binding, the
// sealer, the MCP middleware) can return it; the root package mrtrstate
// re-exports it under the same names.
package refusal
