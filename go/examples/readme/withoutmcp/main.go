// Command withoutmcp is go/README.md's "Without MCP": seal a state for alice, open it
// for her, then see it refused for bob and refused the second time it is redeemed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/replay"
)

func main() {
	ctx := context.Background()
	key, err := keys.Generate(keys.EdDSA, "") // or keys.FromEnv("") for MRTR_STATE_KEYS
	if err != nil {
		log.Fatal(err)
	}
	ring, err := keys.NewKeyring(key)
	if err != nil {
		log.Fatal(err)
	}
	sealer, err := mrtrstate.New(ring, "https://tools.example.com",
		mrtrstate.WithReplayStore(replay.NewMemoryStore(0, nil)))
	if err != nil {
		log.Fatal(err)
	}

	req := mrtrstate.Request{User: "alice", Target: binding.ToolTarget("deploy"), Arguments: json.RawMessage(`{"env":"prod"}`)}
	token, err := sealer.Seal(map[string]any{"step": "confirm"}, req)
	if err != nil {
		log.Fatal(err) // a programming error: unbindable arguments, a state that is not I-JSON
	}
	state, err := sealer.Open(ctx, token, req) // json.RawMessage
	fmt.Println(string(state), err)

	bob := req
	bob.User = "bob"
	_, err = sealer.Open(ctx, token, bob)
	var refused *mrtrstate.InvalidRequestState
	if errors.As(err, &refused) {
		fmt.Println(refused.Reason, "|", refused.Error()) // Detail is for your log, never the client
	}

	_, err = sealer.Open(ctx, token, req, mrtrstate.Consume()) // single use (step 20)
	fmt.Println(err)
	_, err = sealer.Open(ctx, token, req, mrtrstate.Consume())
	fmt.Println(errors.Is(err, mrtrstate.ErrReplayed))
}
