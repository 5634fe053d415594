package mrtrstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/replay"
)

// A tool seals what it learned into the requestState of an input-required
// result, and opens it on the retry with the retry's user, target and arguments.
func Example() {
	key, _ := keys.Generate(keys.EdDSA, "")
	ring, _ := keys.NewKeyring(key)
	sealer, _ := mrtrstate.New(ring, "https://mcp.example.com")

	req := mrtrstate.Request{
		User:      "alice",
		Target:    binding.ToolTarget("delete_branch"),
		Arguments: json.RawMessage(`{"branch":"release-1.2"}`),
	}
	token, _ := sealer.Seal(map[string]string{"asked": "confirm"}, req)

	state, err := sealer.Open(context.Background(), token, req)
	fmt.Println(string(state), err)

	req.User = "mallory"
	_, err = sealer.Open(context.Background(), token, req)
	var refused *mrtrstate.InvalidRequestState
	if errors.As(err, &refused) {
		fmt.Println(refused.Reason, errors.Is(err, mrtrstate.ErrWrongUser))
	}
	// Output:
	// {"asked":"confirm"} <nil>
	// wrong_user true
}

// Keys come from MRTR_STATE_KEYS (a JWKS, one JWK, or a bare HS256 secret);
// replicas that only verify load the public JWKS.
func ExampleNew_verifyOnly() {
	key, _ := keys.Generate(keys.EdDSA, "signing-1")
	minting, _ := keys.NewKeyring(key)
	verifying, _ := keys.ParseJWKS(minting.PublicJWKS())

	minter, _ := mrtrstate.New(minting, "https://mcp.example.com")
	verifier, _ := mrtrstate.New(verifying, "https://mcp.example.com")
	req := mrtrstate.Request{User: "alice", Target: binding.ResourceTarget("file:///q3.csv")}
	token, _ := minter.Seal(1, req)
	state, err := verifier.Open(context.Background(), token, req)
	fmt.Println(string(state), err)
	_, err = verifier.Seal(1, req)
	fmt.Println(err != nil)
	// Output:
	// 1 <nil>
	// true
}

// The round that acts (deletes, pays, books) redeems its state once: a second
// presentation of the same token is refused as replayed.
func ExampleConsume() {
	key, _ := keys.Generate(keys.HS256, "")
	ring, _ := keys.NewKeyring(key)
	sealer, _ := mrtrstate.New(ring, "https://mcp.example.com",
		mrtrstate.WithReplayStore(replay.NewMemoryStore(0, nil))) // redisstore for a fleet
	req := mrtrstate.Request{User: "alice", Target: binding.ToolTarget("book_trip"), Arguments: json.RawMessage(`{}`)}
	token, _ := sealer.Seal(map[string]string{"seat": "2A"}, req)

	_, err := sealer.Open(context.Background(), token, req, mrtrstate.Consume())
	fmt.Println(err)
	_, err = sealer.Open(context.Background(), token, req, mrtrstate.Consume())
	fmt.Println(errors.Is(err, mrtrstate.ErrReplayed))
	// Output:
	// <nil>
	// true
}
