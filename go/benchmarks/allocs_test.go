package benchmarks

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// baselineFile holds the allocations per operation of main, one entry per case
// (op/size/alg/impl). Allocation counts do not move with the machine's load, so
// unlike a timing they can fail a check: a change that makes the module's seal
// or open allocate more updates the file in the same commit, with
//
//	MRTR_UPDATE_ALLOCS=1 go test -run TestAllocationsWithinBaseline .
const baselineFile = "allocs-baseline.json"

// tolerance is how far above its baseline an operation of the module may go.
const tolerance = 0.03

// runs is how many calls each figure averages over.
const runs = 100

// allocFigures are one case's allocations and bytes per call.
type allocFigures struct {
	Allocs float64 `json:"allocs"`
	Bytes  float64 `json:"bytes"`
}

// measure counts what one call of run allocates, averaged over runs calls after
// a warm-up call, on one P so that no other goroutine's allocations are counted
// (as testing.AllocsPerRun does).
func measure(run func()) allocFigures {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	run()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		run()
	}
	runtime.ReadMemStats(&after)
	return allocFigures{
		Allocs: float64(after.Mallocs-before.Mallocs) / runs,
		Bytes:  float64(after.TotalAlloc-before.TotalAlloc) / runs,
	}
}

// TestAllocationsWithinBaseline measures every case and fails when an operation
// of the module (impl mrtrstate) allocates more than tolerance above the
// baseline, in count or in bytes. The peers' figures are printed for comparison
// and never fail it.
func TestAllocationsWithinBaseline(t *testing.T) {
	got := map[string]allocFigures{}
	for _, c := range Cases() {
		got[c.Group()+"/"+c.Impl] = measure(c.Run)
	}
	names := make([]string, 0, len(got))
	for name := range got {
		names = append(names, name)
	}
	sort.Strings(names)
	if os.Getenv("MRTR_UPDATE_ALLOCS") == "1" {
		text, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(baselineFile, append(text, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", baselineFile)
		return
	}
	text, err := os.ReadFile(baselineFile)
	if err != nil {
		t.Fatalf("no baseline: %v (run with MRTR_UPDATE_ALLOCS=1)", err)
	}
	var baseline map[string]allocFigures
	if err := json.Unmarshal(text, &baseline); err != nil {
		t.Fatalf("%s: %v", baselineFile, err)
	}
	for _, name := range names {
		now := got[name]
		was, ok := baseline[name]
		t.Logf("%-40s %7.1f allocs %9.0f B  (baseline %7.1f allocs %9.0f B)", name, now.Allocs, now.Bytes, was.Allocs, was.Bytes)
		if !strings.HasSuffix(name, "/mrtrstate") {
			continue
		}
		if !ok {
			t.Errorf("%s: not in %s (run with MRTR_UPDATE_ALLOCS=1)", name, baselineFile)
			continue
		}
		if msg := rise(now, was); msg != "" {
			t.Errorf("%s: %s; a change that allocates more updates %s in the same commit", name, msg, baselineFile)
		}
	}
}

// rise says how now exceeds was beyond the tolerance, or "" when it does not.
// A count may rise by the tolerance rounded up to a whole allocation.
func rise(now, was allocFigures) string {
	var found []string
	if now.Allocs > math.Ceil(was.Allocs*(1+tolerance)) {
		found = append(found, fmt.Sprintf("%.1f allocations per call, baseline %.1f", now.Allocs, was.Allocs))
	}
	if now.Bytes > was.Bytes*(1+tolerance) {
		found = append(found, fmt.Sprintf("%.0f bytes per call, baseline %.0f", now.Bytes, was.Bytes))
	}
	return strings.Join(found, ", ")
}

func TestRiseFlagsOnlyWhatExceedsTheTolerance(t *testing.T) {
	was := allocFigures{Allocs: 40, Bytes: 10000}
	for _, c := range []struct {
		now  allocFigures
		want string
	}{
		{allocFigures{40, 10000}, ""},
		{allocFigures{42, 10300}, ""},
		{allocFigures{43, 10000}, "43.0 allocations per call, baseline 40.0"},
		{allocFigures{40, 10301}, "10301 bytes per call, baseline 10000"},
	} {
		if got := rise(c.now, was); got != c.want {
			t.Errorf("rise(%v) = %q, want %q", c.now, got, c.want)
		}
	}
}
