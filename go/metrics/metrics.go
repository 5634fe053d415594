// Package metrics counts what a sealer and the key sources do: seals, opens
// by outcome, refusals by reason code, redemptions, store outages and key
// refreshes, as spec/metrics.json writes them for every language.
//
// A Func receives each event with its attributes; OpenTelemetry makes one that
// adds to OpenTelemetry counters (the API module go.opentelemetry.io/otel/metric
// only: the application's MeterProvider decides where they go, and without one
// nothing is made), and any plain function of the same shape does for a server
// that counts some other way:
//
//	counters, err := metrics.OpenTelemetry(provider) // e.g. otel.GetMeterProvider()
//	sealer, err := mrtrstate.New(ring, issuer, mrtrstate.WithMetrics(counters))
//
// An attribute value is always one of a small fixed set (a target method, a
// reason code of the profile, an outcome word, a kind of key source); never a
// token, a claim value, a kid or key material. A Func that panics never breaks
// a seal or an open: the panic is logged once and the count is lost.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Func receives one event (Seal, Open, ...) and its attributes, whose names
// Events lists. It may be called from many goroutines at once.
type Func func(event string, attrs map[string]string)

// The events.
const (
	// Seal: a token was minted (method).
	Seal = "seal"
	// Open: a token was presented (method; outcome "accepted" or "refused").
	Open = "open"
	// Refusal: a token was refused (method; reason, a code of the profile).
	Refusal = "refusal"
	// Redemption: a single-use token was redeemed for the first time (method).
	Redemption = "redemption"
	// StoreOutage: the replay store could not answer, so the token was
	// refused store_unavailable (method).
	StoreOutage = "store_outage"
	// KeyRefresh: a key source looked for new keys (source "remote_jwks" or
	// "key_file"; outcome "updated", "unchanged" or "failed").
	KeyRefresh = "key_refresh"
)

// Instrument is the OpenTelemetry counter of one event.
type Instrument struct {
	Name, Unit, Description string
	// Attributes are the attribute names the event carries.
	Attributes []string
}

// Events are the events and their counters, as spec/metrics.json has them.
var Events = map[string]Instrument{
	Seal:        {"mrtr_state.seals", "{token}", "requestState tokens minted", []string{"method"}},
	Open:        {"mrtr_state.opens", "{token}", "requestState tokens presented, by outcome", []string{"method", "outcome"}},
	Refusal:     {"mrtr_state.refusals", "{token}", "requestState tokens refused, by reason code", []string{"method", "reason"}},
	Redemption:  {"mrtr_state.redemptions", "{token}", "single-use requestState tokens redeemed", []string{"method"}},
	StoreOutage: {"mrtr_state.store_outages", "{token}", "requestState tokens refused because the replay store could not answer", []string{"method"}},
	KeyRefresh:  {"mrtr_state.key_refreshes", "{refresh}", "key source refreshes, by outcome", []string{"source", "outcome"}},
}

// Scope is the instrumentation scope (meter name) of the counters.
const Scope = "mrtr_state"

// OpenTelemetry returns a Func that adds 1 to the counter of each event, made
// with provider's meter Scope (a noop provider counts nothing and costs next to
// nothing).
func OpenTelemetry(provider metric.MeterProvider) (Func, error) {
	if provider == nil {
		return nil, fmt.Errorf("metrics: a MeterProvider is required (otel.GetMeterProvider() for the global one)")
	}
	meter := provider.Meter(Scope)
	counters := make(map[string]metric.Int64Counter, len(Events))
	for event, in := range Events {
		c, err := meter.Int64Counter(in.Name, metric.WithUnit(in.Unit), metric.WithDescription(in.Description))
		if err != nil {
			return nil, fmt.Errorf("metrics: the counter %s: %w", in.Name, err)
		}
		counters[event] = c
	}
	return func(event string, attrs map[string]string) {
		c, ok := counters[event]
		if !ok {
			return
		}
		kv := make([]attribute.KeyValue, 0, len(attrs))
		for k, v := range attrs {
			kv = append(kv, attribute.String(k, v))
		}
		c.Add(context.Background(), 1, metric.WithAttributes(kv...))
	}, nil
}

var (
	failedMu sync.Mutex
	failed   = map[string]bool{}
)

// Record reports event to f (nothing when f is nil) with attrs given as name,
// value pairs. A panicking f is logged once per event and never propagates.
func Record(f Func, event string, attrs ...string) {
	if f == nil {
		return
	}
	m := make(map[string]string, len(attrs)/2)
	for i := 0; i+1 < len(attrs); i += 2 {
		m[attrs[i]] = attrs[i+1]
	}
	defer func() {
		if r := recover(); r != nil {
			failedMu.Lock()
			first := !failed[event]
			failed[event] = true
			failedMu.Unlock()
			if first {
				slog.Default().Error("metrics: the metrics function panicked; counts are being lost", "event", event)
			}
		}
	}()
	f(event, m)
}
