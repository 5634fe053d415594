// Package mcpstate carries requestState as tokens of the mrtr-state profile on
// a server of the official Go MCP SDK (github.com/modelcontextprotocol/go-sdk,
// tested with v1.8.0), with one call:
//
//	mcpstate.Install(server, sealer, nil)
//
// It is receiving middleware (Server.AddReceivingMiddleware) on tools/call,
// prompts/get and resources/read, the methods that may answer input_required:
//
//   - inbound, a requestState is opened with the request's user
//     (req.Extra.TokenInfo.UserID by default), target and arguments before the
//     handler runs; the handler sees the verified state as a string, its own,
//     never the token. A refusal is answered without calling the handler: a tool
//     error on tools/call by default (isError, the reason code in _meta under
//     "io.github.mrtr-state/reason"), or a JSON-RPC -32602 error whose data is
//     {"reason": code}; prompts/get and resources/read always get the latter;
//   - outbound, the RequestState of every result the handler returns is sealed
//     into a token bound to the same user, target and arguments;
//   - inputResponses on a request without a requestState answer nothing this
//     server asked (profile, 8.2), so the handler never sees them;
//   - the arguments bound are the request's params.arguments, {} when absent
//     (profile 3.4, 8.2); a present "arguments": null, or any value that is not
//     an object, is unbindable: no state is sealed for it and a state bound to
//     arguments is refused wrong_request; on tools/call, arguments that are
//     neither an object nor null ("x", [1]) are answered -32602 before the
//     handler runs, on a first round and on a retry whose state opens, as the
//     Python, TypeScript and Java SDKs answer them (null reaches the handler,
//     as those SDKs read it as absent arguments, and is never bound);
//   - a requestState that is "" or not a string is refused malformed;
//   - a state presented to another target is refused wrong_tool;
//   - with no authenticated user it refuses to seal or open (an internal error)
//     unless a fixed principal was configured deliberately.
//
// The SDK decodes params into typed structs before middleware runs, so some of
// those inputs reach the middleware only through Handler (in front of the
// SDK's StreamableHTTPHandler) or Transport (around a stdio transport), which
// see each message first: an empty requestState reads as absent without them,
// a non-string one gets the SDK's own decoding error, and on prompts/get
// (arguments a map[string]string) "arguments": null is bound as {}. Give the
// server one of them:
//
//	handler := mcpstate.Handler(mcp.NewStreamableHTTPHandler(getServer, opts))
//	err := server.Run(ctx, mcpstate.Transport(&mcp.StdioTransport{}))
//
// The state string maps to the token's state claim as the Python and
// TypeScript boundaries map it: a string that is the JSON text of an object or
// array the profile can carry becomes that value, any other string is carried
// as a JSON string; on the way back a string claim is handed over verbatim and
// any other value as its compact JSON text. So a replica in another language
// reads structured state, and a string round-trips exactly unless it is
// object or array JSON, which round-trips as equal JSON.
package mcpstate
