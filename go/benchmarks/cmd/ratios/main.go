// Command ratios measures the Go module's seal and open against golang-jwt v5
// and go-jose v4, interleaved: every round times each implementation of a
// group (one operation, size and algorithm) one after the other, so a machine
// that slows down during the run slows all of them alike; the figure of a pair
// is the median over the rounds of the ratio within a round.
//
//	cd go/benchmarks && go run ./cmd/ratios [-rounds 15] [-slice 20ms] [-only 'seal/near-cap']
//
// It prints a Markdown table: the median time per operation and the
// allocations of each implementation, and the module's ratio to each peer.
package main

import (
	"flag"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/mrtr-state/mrtr-state/go/benchmarks"
)

func main() {
	rounds := flag.Int("rounds", 15, "rounds per group")
	slice := flag.Duration("slice", 20*time.Millisecond, "time per implementation per round")
	only := flag.String("only", "", "a regular expression: only the groups (op/size/alg) it matches")
	flag.Parse()
	match := regexp.MustCompile(*only)
	groups := map[string][]benchmarks.Case{}
	var order []string
	for _, c := range benchmarks.Cases() {
		if !match.MatchString(c.Group()) {
			continue
		}
		if groups[c.Group()] == nil {
			order = append(order, c.Group())
		}
		groups[c.Group()] = append(groups[c.Group()], c)
	}
	for _, size := range benchmarks.Sizes() {
		fmt.Printf("%s: %d bytes of state JSON; ", size.Name, size.Size)
	}
	fmt.Println()
	fmt.Println()
	fmt.Println("| operation | size | alg | mrtrstate µs (allocs) | golang-jwt µs (allocs) | go-jose µs (allocs) | x golang-jwt | x go-jose |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, group := range order {
		cases := groups[group]
		perOp := map[string][]float64{}
		ratios := map[string][]float64{}
		iterations := map[string]int{}
		for _, c := range cases { // calibrate: how many runs fill a slice
			n := 1
			for start := time.Now(); time.Since(start) < *slice/4; n *= 2 {
				for range n {
					c.Run()
				}
			}
			iterations[c.Impl] = max(1, n)
		}
		for range *rounds {
			times := map[string]float64{}
			for _, c := range cases {
				start := time.Now()
				for range iterations[c.Impl] {
					c.Run()
				}
				times[c.Impl] = float64(time.Since(start).Nanoseconds()) / float64(iterations[c.Impl])
				perOp[c.Impl] = append(perOp[c.Impl], times[c.Impl])
			}
			for impl, t := range times {
				if impl != "mrtrstate" {
					ratios[impl] = append(ratios[impl], times["mrtrstate"]/t)
				}
			}
		}
		cell := func(impl string) string {
			for _, c := range cases {
				if c.Impl == impl {
					allocs := testing.AllocsPerRun(20, c.Run)
					return fmt.Sprintf("%.1f (%.0f)", median(perOp[impl])/1000, allocs)
				}
			}
			return "—"
		}
		ratio := func(impl string) string {
			if ratios[impl] == nil {
				return "—"
			}
			return fmt.Sprintf("%.2f", median(ratios[impl]))
		}
		c := cases[0]
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Op, c.Size, c.Alg, cell("mrtrstate"), cell("golang-jwt"),
			cell("go-jose"), ratio("golang-jwt"), ratio("go-jose"))
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
