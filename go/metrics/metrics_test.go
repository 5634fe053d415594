package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/metrics"
	"github.com/mrtr-state/mrtr-state/go/replay"
)

// The counters contract every language's tests read (spec/metrics.json).
type contract struct {
	Scope      string              `json:"scope"`
	Attributes map[string][]string `json:"attributes"`
	Events     map[string]struct {
		Instrument  string            `json:"instrument"`
		Unit        string            `json:"unit"`
		Description string            `json:"description"`
		Attributes  map[string]string `json:"attributes"`
	} `json:"events"`
}

func readContract(t *testing.T) contract {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "spec", "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c contract
	if err := json.Unmarshal(text, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTheInstrumentsAreTheContracts(t *testing.T) {
	c := readContract(t)
	if metrics.Scope != c.Scope {
		t.Errorf("scope %q, the contract says %q", metrics.Scope, c.Scope)
	}
	if len(metrics.Events) != len(c.Events) {
		t.Errorf("%d events, the contract has %d", len(metrics.Events), len(c.Events))
	}
	for event, want := range c.Events {
		got, ok := metrics.Events[event]
		if !ok {
			t.Errorf("the event %s is not counted", event)
			continue
		}
		if got.Name != want.Instrument || got.Unit != want.Unit || got.Description != want.Description {
			t.Errorf("%s: %+v, the contract says %+v", event, got, want)
		}
		names := slices.Sorted(func(yield func(string) bool) {
			for name := range want.Attributes {
				if !yield(name) {
					return
				}
			}
		})
		if !slices.Equal(slices.Sorted(slices.Values(got.Attributes)), names) {
			t.Errorf("%s: attributes %v, the contract says %v", event, got.Attributes, names)
		}
	}
}

// failingStore cannot answer.
type failingStore struct{}

func (failingStore) Redeem(context.Context, string, int64) (bool, error) {
	return false, replay.ErrUnavailable
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestTheSealersCountsAreReadBackAsTheContractSays drives a sealer through
// every outcome and reads the counters back with the OpenTelemetry SDK's
// ManualReader: their names, units, descriptions, counts and attribute values
// are the contract's, and no attribute holds a value outside its list.
func TestTheSealersCountsAreReadBackAsTheContractSays(t *testing.T) {
	c := readContract(t)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	counters, err := metrics.OpenTelemetry(provider)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	plain := map[string]int{}
	both := func(event string, attrs map[string]string) {
		counters(event, attrs)
		mu.Lock()
		plain[event]++
		mu.Unlock()
	}
	k, _ := keys.Generate(keys.EdDSA, "")
	ring, _ := keys.NewKeyring(k)
	sealer, err := mrtrstate.New(ring, "https://tools.example.com", mrtrstate.WithMetrics(both),
		mrtrstate.WithReplayStore(replay.NewMemoryStore(0, nil)))
	if err != nil {
		t.Fatal(err)
	}
	broken, _ := mrtrstate.New(ring, "https://tools.example.com", mrtrstate.WithMetrics(both),
		mrtrstate.WithReplayStore(failingStore{}))
	ctx := context.Background()
	req := mrtrstate.Request{User: "alice", Target: binding.ToolTarget("delete_branch"), Arguments: []byte(`{"b":"x"}`)}
	tok, err := sealer.Seal("asked", req)
	if err != nil {
		t.Fatal(err)
	}
	prompt := mrtrstate.Request{User: "alice", Target: binding.PromptTarget("summary"), Arguments: []byte(`{}`)}
	if _, err := sealer.Seal("asked", prompt); err != nil {
		t.Fatal(err)
	}
	if _, err := sealer.Open(ctx, tok, req, mrtrstate.Consume()); err != nil {
		t.Fatal(err)
	}
	if _, err := sealer.Open(ctx, tok, req, mrtrstate.Consume()); !errors.Is(err, mrtrstate.ErrReplayed) {
		t.Fatal(err)
	}
	bob := req
	bob.User = "bob"
	if _, err := sealer.Open(ctx, tok, bob); !errors.Is(err, mrtrstate.ErrWrongUser) {
		t.Fatal(err)
	}
	if _, err := broken.Open(ctx, tok, req, mrtrstate.Consume()); !errors.Is(err, mrtrstate.ErrStoreUnavailable) {
		t.Fatal(err)
	}
	var data metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &data); err != nil {
		t.Fatal(err)
	}
	type point struct{ instrument, attrs string }
	got := map[point]int64{}
	for _, scope := range data.ScopeMetrics {
		if scope.Scope.Name != c.Scope {
			t.Errorf("scope %q", scope.Scope.Name)
		}
		for _, m := range scope.Metrics {
			var event string
			for name, e := range c.Events {
				if e.Instrument == m.Name {
					event = name
				}
			}
			want := c.Events[event]
			if event == "" || m.Unit != want.Unit || m.Description != want.Description {
				t.Errorf("the instrument %s (%s, %q) is not the contract's", m.Name, m.Unit, m.Description)
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok || !sum.IsMonotonic {
				t.Errorf("%s is not a monotonic counter", m.Name)
				continue
			}
			for _, dp := range sum.DataPoints {
				if dp.Attributes.Len() != len(want.Attributes) {
					t.Errorf("%s: attributes %v", m.Name, dp.Attributes.ToSlice())
				}
				for _, kv := range dp.Attributes.ToSlice() {
					list, named := want.Attributes[string(kv.Key)]
					if !named || !slices.Contains(c.Attributes[list], kv.Value.AsString()) {
						t.Errorf("%s: the attribute %s=%q is not in the contract", m.Name, kv.Key, kv.Value.AsString())
					}
				}
				got[point{m.Name, dp.Attributes.Encoded(attribute.DefaultEncoder())}] += dp.Value
			}
		}
	}
	want := map[point]int64{
		{"mrtr_state.seals", "method=tools/call"}:                             1,
		{"mrtr_state.seals", "method=prompts/get"}:                            1,
		{"mrtr_state.opens", "method=tools/call,outcome=accepted"}:            1,
		{"mrtr_state.opens", "method=tools/call,outcome=refused"}:             3,
		{"mrtr_state.redemptions", "method=tools/call"}:                       1,
		{"mrtr_state.refusals", "method=tools/call,reason=replayed"}:          1,
		{"mrtr_state.refusals", "method=tools/call,reason=wrong_user"}:        1,
		{"mrtr_state.refusals", "method=tools/call,reason=store_unavailable"}: 1,
		{"mrtr_state.store_outages", "method=tools/call"}:                     1,
	}
	for p, n := range want {
		if got[p] != n {
			t.Errorf("%s{%s} = %d, want %d", p.instrument, p.attrs, got[p], n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("counted %v, want %v", got, want)
	}
	if plain["seal"] != 2 || plain["open"] != 4 || plain["refusal"] != 3 {
		t.Errorf("the plain callback saw %v", plain)
	}
}

func TestAPanickingMetricsFunctionNeverBreaksAnOpen(t *testing.T) {
	k, _ := keys.Generate(keys.HS256, "")
	ring, _ := keys.NewKeyring(k)
	sealer, _ := mrtrstate.New(ring, "https://tools.example.com",
		mrtrstate.WithMetrics(func(string, map[string]string) { panic("a broken exporter") }))
	req := mrtrstate.Request{User: "alice", Target: binding.ResourceTarget("file:///q3.csv")}
	tok, err := sealer.Seal("s", req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sealer.Open(context.Background(), tok, req); err != nil {
		t.Errorf("the open failed with a panicking metrics function: %v", err)
	}
}

// The key sources count their refreshes: the key file and the remote JWKS,
// updated, unchanged and failed.
func TestKeySourcesCountTheirRefreshes(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	count := func(event string, attrs map[string]string) {
		mu.Lock()
		seen[event+" "+attrs["source"]+" "+attrs["outcome"]]++
		mu.Unlock()
	}
	path := filepath.Join(t.TempDir(), "keys.json")
	a, _ := keys.Generate(keys.HS256, "a")
	ringA, _ := keys.NewKeyring(a)
	if err := os.WriteFile(path, ringA.PrivateJWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := keys.LoadKeyFile(path, keys.WithFileMetrics(count), keys.WithFileLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	_ = file.Reload() // the same content: unchanged
	b, _ := keys.Generate(keys.HS256, "b")
	ringB, _ := keys.NewKeyring(b, a)
	if err := os.WriteFile(path, ringB.PrivateJWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = file.Reload() // updated
	if err := os.WriteFile(path, []byte("not a key ring"), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = file.Reload() // failed

	e1, _ := keys.Generate(keys.EdDSA, "e1")
	e2, _ := keys.Generate(keys.EdDSA, "e2")
	r1, _ := keys.NewKeyring(e1)
	r2, _ := keys.NewKeyring(e2, e1)
	var served atomic.Pointer[[]byte]
	first := r1.PublicJWKS()
	served.Store(&first)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		body := served.Load()
		if body == nil {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(*body)
	}))
	defer server.Close()
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	remote, err := keys.LoadRemoteJWKS(context.Background(), server.URL, keys.WithRemoteMetrics(count),
		keys.WithRemoteClock(clock), keys.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	refresh := func() {
		now = now.Add(keys.DefaultCooldown)
		remote.RefreshForUnknownKey(context.Background())
	}
	refresh() // unchanged
	second := r2.PublicJWKS()
	served.Store(&second)
	refresh() // updated
	served.Store(nil)
	refresh() // failed
	want := map[string]int{
		"key_refresh key_file unchanged": 1, "key_refresh key_file updated": 1, "key_refresh key_file failed": 1,
		"key_refresh remote_jwks unchanged": 1, "key_refresh remote_jwks updated": 1, "key_refresh remote_jwks failed": 1,
	}
	mu.Lock()
	defer mu.Unlock()
	if !maps.Equal(seen, want) {
		t.Errorf("counted %v, want %v", seen, want)
	}
}
