package mrtrstate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/replay"
)

const issuer = "https://mcp.example.com"

var start = time.Unix(1767225600, 0)

type clock struct{ now atomic.Int64 }

func newClock() *clock           { c := &clock{}; c.now.Store(start.Unix()); return c }
func (c *clock) Now() time.Time  { return time.Unix(c.now.Load(), 0) }
func (c *clock) advance(s int64) { c.now.Add(s) }
func ring(t *testing.T, alg keys.Algorithm) *keys.Keyring {
	t.Helper()
	k, err := keys.Generate(alg, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := keys.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func sealer(t *testing.T, r keys.Source, c *clock, opts ...mrtrstate.Option) *mrtrstate.Sealer {
	t.Helper()
	s, err := mrtrstate.New(r, issuer, append([]mrtrstate.Option{mrtrstate.WithClock(c.Now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var deploy = mrtrstate.Request{User: "alice", Target: binding.ToolTarget("deploy"), Arguments: json.RawMessage(`{"env":"staging"}`)}

func reasonOf(err error) mrtrstate.Reason {
	var refused *mrtrstate.InvalidRequestState
	if errors.As(err, &refused) {
		return refused.Reason
	}
	return ""
}

func TestAStateOpensForTheRequestItWasSealedForInEveryForm(t *testing.T) {
	for _, alg := range []keys.Algorithm{keys.HS256, keys.EdDSA, keys.A256GCM} {
		c := newClock()
		s := sealer(t, ring(t, alg), c)
		tok, err := s.Seal(map[string]any{"step": "confirm", "n": 1}, deploy)
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		if want := map[keys.Algorithm]int{keys.HS256: 2, keys.EdDSA: 2, keys.A256GCM: 4}[alg]; strings.Count(tok, ".") != want {
			t.Errorf("%s: a token of %d dots", alg, strings.Count(tok, "."))
		}
		state, err := s.Open(context.Background(), tok, deploy)
		if err != nil || string(state) != `{"n":1,"step":"confirm"}` {
			t.Errorf("%s: %s, %v", alg, state, err)
		}
	}
}

func TestRuleAGT18OneByteChangedTenMinutesAnotherUser(t *testing.T) {
	c := newClock()
	s := sealer(t, ring(t, keys.HS256), c)
	tok, _ := s.Seal("x", deploy)
	changed := []byte(tok)
	i := strings.LastIndexByte(tok, '.') + 3 // inside the signature, where every letter is canonical
	changed[i] = map[bool]byte{true: 'B', false: 'A'}[changed[i] == 'A']
	if _, err := s.Open(context.Background(), string(changed), deploy); !errors.Is(err, mrtrstate.ErrBadSignature) {
		t.Errorf("one byte changed: %v", err)
	}
	other := deploy
	other.User = "mallory"
	if _, err := s.Open(context.Background(), tok, other); !errors.Is(err, mrtrstate.ErrWrongUser) {
		t.Errorf("another user: %v", err)
	}
	c.advance(599)
	if _, err := s.Open(context.Background(), tok, deploy); err != nil {
		t.Errorf("at 599 s: %v", err)
	}
	c.advance(1)
	if _, err := s.Open(context.Background(), tok, deploy); !errors.Is(err, mrtrstate.ErrExpired) {
		t.Errorf("at 600 s: %v", err)
	}
}

func TestTheTargetAndTheArgumentsAreBound(t *testing.T) {
	c := newClock()
	s := sealer(t, ring(t, keys.EdDSA), c)
	tok, _ := s.Seal(1, deploy)
	for name, req := range map[string]mrtrstate.Request{
		"another tool":     {User: "alice", Target: binding.ToolTarget("destroy"), Arguments: deploy.Arguments},
		"a prompt":         {User: "alice", Target: binding.PromptTarget("deploy"), Arguments: deploy.Arguments},
		"other arguments":  {User: "alice", Target: deploy.Target, Arguments: json.RawMessage(`{"env":"prod"}`)},
		"no arguments":     {User: "alice", Target: deploy.Target},
		"null arguments":   {User: "alice", Target: deploy.Target, Arguments: json.RawMessage(`null`)},
		"an array of them": {User: "alice", Target: deploy.Target, Arguments: json.RawMessage(`[{"env":"staging"}]`)},
	} {
		want := mrtrstate.WrongRequest
		if strings.HasPrefix(name, "another") || strings.HasPrefix(name, "a prompt") {
			want = mrtrstate.WrongTool
		}
		if _, err := s.Open(context.Background(), tok, req); reasonOf(err) != want {
			t.Errorf("%s: %v, want %s", name, err, want)
		}
	}
	same := deploy
	same.Arguments = json.RawMessage(` { "env" : "staging" } `)
	if _, err := s.Open(context.Background(), tok, same); err != nil {
		t.Errorf("the same arguments written otherwise: %v", err)
	}
}

func TestRequireArgumentsRefusesAnUnboundTokenExceptForResources(t *testing.T) {
	c := newClock()
	r := ring(t, keys.HS256)
	loose := sealer(t, r, c)
	strict := sealer(t, r, c, mrtrstate.WithRequireArguments(true))
	unbound := mrtrstate.Request{User: "alice", Target: binding.ToolTarget("deploy")}
	tok, err := loose.Seal(1, unbound)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strict.Open(context.Background(), tok, deploy); !errors.Is(err, mrtrstate.ErrWrongRequest) {
		t.Errorf("an unbound token on a strict verifier: %v", err)
	}
	if _, err := loose.Open(context.Background(), tok, deploy, mrtrstate.RequireArgumentsThisCall(true)); !errors.Is(err, mrtrstate.ErrWrongRequest) {
		t.Errorf("the per-call override: %v", err)
	}
	if _, err := strict.Seal(1, unbound); err == nil {
		t.Error("a strict sealer minted an unbound token for a tool")
	}
	res := mrtrstate.Request{User: "alice", Target: binding.ResourceTarget("file:///a")}
	rt, err := strict.Seal(1, res)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strict.Open(context.Background(), rt, res); err != nil {
		t.Errorf("a resource read: %v", err)
	}
}

func TestUnbindableArgumentsAreNeverSealed(t *testing.T) {
	s := sealer(t, ring(t, keys.HS256), newClock())
	for _, args := range []string{`{"id":9007199254740993}`, `{"id":9007199254740991.5}`, `null`, `[1]`, `"x"`} {
		req := deploy
		req.Arguments = json.RawMessage(args)
		if _, err := s.Seal(1, req); !errors.Is(err, binding.ErrUnbindable) {
			t.Errorf("%s: %v", args, err)
		}
	}
}

func TestAStateTheProfileCannotCarryIsNeverSealed(t *testing.T) {
	s := sealer(t, ring(t, keys.HS256), newClock())
	deep := json.RawMessage(strings.Repeat("[", 33) + strings.Repeat("]", 33))
	for name, state := range map[string]any{
		"uint64 beyond 2^53": uint64(1) << 60, "33 levels": deep, "duplicates": json.RawMessage(`{"a":1,"a":2}`),
		"a channel": make(chan int), "too large": strings.Repeat("x", 9000),
	} {
		if _, err := s.Seal(state, deploy); err == nil || reasonOf(err) != "" {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := s.Seal(json.RawMessage(strings.Repeat("[", 32)+strings.Repeat("]", 32)), deploy); err != nil {
		t.Errorf("32 levels: %v", err)
	}
}

func TestConsumeOpensATokenOnceEvenUnderConcurrency(t *testing.T) {
	c := newClock()
	store := replay.NewMemoryStore(0, c.Now)
	s := sealer(t, ring(t, keys.HS256), c, mrtrstate.WithReplayStore(store))
	tok, _ := s.Seal(1, deploy)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			_, err := s.Open(context.Background(), tok, deploy, mrtrstate.Consume())
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, mrtrstate.ErrReplayed):
				t.Errorf("a concurrent redemption: %v", err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d redemptions won", wins.Load())
	}
	if _, err := s.Open(context.Background(), tok, deploy); err != nil {
		t.Errorf("without Consume a token still opens: %v", err)
	}
	noStore := sealer(t, ring(t, keys.HS256), c)
	if _, err := noStore.Open(context.Background(), tok, deploy, mrtrstate.Consume()); !errors.Is(err, mrtrstate.ErrConfig) {
		t.Errorf("Consume without a store: %v", err)
	}
}

type failingStore struct{}

func (failingStore) Redeem(context.Context, string, int64) (bool, error) {
	return false, errors.New("connection refused")
}

func TestAStoreThatCannotAnswerFailsClosed(t *testing.T) {
	c := newClock()
	s := sealer(t, ring(t, keys.HS256), c, mrtrstate.WithReplayStore(failingStore{}))
	tok, _ := s.Seal(1, deploy)
	if _, err := s.Open(context.Background(), tok, deploy, mrtrstate.Consume()); !errors.Is(err, mrtrstate.ErrStoreUnavailable) {
		t.Errorf("%v", err)
	}
	bad, _ := s.Seal(1, deploy)
	if _, err := s.Open(context.Background(), bad+"x", deploy, mrtrstate.Consume()); !errors.Is(err, mrtrstate.ErrBadSignature) && !errors.Is(err, mrtrstate.ErrMalformed) {
		t.Errorf("a bad token must fail before the store: %v", err)
	}
}

func TestRotationKeepsOldTokensOpenUntilTheKeyIsRemoved(t *testing.T) {
	c := newClock()
	old := ring(t, keys.HS256)
	tok, _ := sealer(t, old, c).Seal(1, deploy)
	next, _ := keys.Generate(keys.A256GCM, "")
	rotated, _ := old.Rotated(next)
	s := sealer(t, rotated, c)
	if _, err := s.Open(context.Background(), tok, deploy); err != nil {
		t.Errorf("an old token after rotation: %v", err)
	}
	fresh, _ := s.Seal(1, deploy)
	if strings.Count(fresh, ".") != 4 {
		t.Error("the new first key did not mint")
	}
	pruned, _ := rotated.Without(old.Keys()[0].Kid())
	if _, err := sealer(t, pruned, c).Open(context.Background(), tok, deploy); !errors.Is(err, mrtrstate.ErrUnknownKey) {
		t.Errorf("a removed key: %v", err)
	}
}

func TestARefusalNeverCarriesTheTokenOrTheState(t *testing.T) {
	c := newClock()
	s := sealer(t, ring(t, keys.HS256), c)
	tok, _ := s.Seal("secret-plan", deploy)
	c.advance(1000)
	_, err := s.Open(context.Background(), tok, deploy)
	var refused *mrtrstate.InvalidRequestState
	if !errors.As(err, &refused) || refused.Reason != mrtrstate.Expired {
		t.Fatalf("%v", err)
	}
	for _, text := range []string{err.Error(), refused.Detail, refused.String()} {
		if strings.Contains(text, tok[:20]) || strings.Contains(text, "secret-plan") {
			t.Errorf("a refusal shows the token or the state: %s", text)
		}
	}
	if errors.Is(err, mrtrstate.ErrWrongUser) {
		t.Error("errors.Is matched another reason")
	}
}

func TestTheSizeCapIsCheckedBeforeDecoding(t *testing.T) {
	s := sealer(t, ring(t, keys.HS256), newClock(), mrtrstate.WithMaxTokenBytes(512))
	if _, err := s.Open(context.Background(), strings.Repeat("a", 513), deploy); !errors.Is(err, mrtrstate.ErrTooLarge) {
		t.Errorf("%v", err)
	}
}

func TestOptionsAreChecked(t *testing.T) {
	r := ring(t, keys.HS256)
	for name, opts := range map[string][]mrtrstate.Option{
		"ttl over max": {mrtrstate.WithTTL(700 * time.Second)},
		"leeway 301":   {mrtrstate.WithLeeway(301 * time.Second)},
		"cap 511":      {mrtrstate.WithMaxTokenBytes(511)},
		"max 0":        {mrtrstate.WithMaxLifetime(0)},
		"nil clock":    {mrtrstate.WithClock(nil)},
		"nil entropy":  {mrtrstate.WithEntropy(nil)},
	} {
		if _, err := mrtrstate.New(r, issuer, opts...); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := mrtrstate.New(r, ""); err == nil {
		t.Error("an empty issuer")
	}
	s, err := mrtrstate.New(r, issuer, mrtrstate.WithMaxLifetime(60*time.Second))
	if err != nil || s.TTL() != 60*time.Second {
		t.Errorf("the ttl follows a shorter maximum lifetime: %v %v", s, err)
	}
}

func TestTheEntropyHookFeedsTheJTIButNeverTheIV(t *testing.T) {
	c := newClock()
	fixed := bytes.Repeat([]byte{7}, 64)
	s := sealer(t, ring(t, keys.A256GCM), c, mrtrstate.WithEntropy(bytes.NewReader(fixed)))
	a, err := s.Seal(1, deploy)
	if err != nil {
		t.Fatal(err)
	}
	s2 := sealer(t, s.Keys(), c, mrtrstate.WithEntropy(bytes.NewReader(fixed)))
	b, _ := s2.Seal(1, deploy)
	ivA, ivB := strings.Split(a, ".")[2], strings.Split(b, ".")[2]
	if ivA == ivB {
		t.Error("two tokens with one entropy hook share an IV (decision D6)")
	}
	claims, err := s.OpenClaims(context.Background(), a, deploy)
	if err != nil || claims.ID != "BwcHBwcHBwcHBwcHBwcHBw" {
		t.Errorf("the jti is not from the hook: %v %v", claims, err)
	}
}

func TestASealerPrintsNoKeyMaterial(t *testing.T) {
	k, _ := keys.Generate(keys.HS256, "")
	r, _ := keys.NewKeyring(k)
	s := sealer(t, r, newClock())
	secret := k.PrivateJWK()["k"]
	for _, shown := range []string{fmt.Sprintf("%v", s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s), fmt.Sprint(*s)} {
		if strings.Contains(shown, secret) || !strings.Contains(shown, k.Kid()) && !strings.Contains(shown, "0x") {
			t.Errorf("a sealer printed as %s", shown)
		}
	}
}
