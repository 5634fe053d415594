package mrtrstate_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/keys"
)

func TestAVerifyOnlyReplicaOnARemoteJWKSOpensATokenOfANewKeyAtOnce(t *testing.T) {
	old, _ := keys.Generate(keys.EdDSA, "old")
	minting, _ := keys.NewKeyring(old)
	var mu sync.Mutex
	published := minting.PublicJWKS()
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = w.Write(published)
	}))
	defer server.Close()
	c := newClock()
	remote, err := keys.LoadRemoteJWKS(context.Background(), server.URL, keys.WithCooldown(0),
		keys.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	verifier := sealer(t, remote, c)
	next, _ := keys.Generate(keys.EdDSA, "next")
	rotated, _ := minting.Rotated(next)
	tok, _ := sealer(t, rotated, c).Seal(1, deploy)
	if _, err := verifier.Open(context.Background(), tok, deploy); !errors.Is(err, mrtrstate.ErrUnknownKey) {
		t.Fatalf("a key not yet published: %v", err)
	}
	mu.Lock()
	published = rotated.PublicJWKS()
	mu.Unlock()
	if _, err := verifier.Open(context.Background(), tok, deploy); err != nil {
		t.Errorf("the new key, once published: %v", err)
	}
}
