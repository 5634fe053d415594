package benchmarks

import "testing"

// BenchmarkCases runs every case as a sub-benchmark op/size/alg/impl, with
// allocations: go test -run '^$' -bench . -benchmem. For ratios on a shared
// machine prefer cmd/ratios, which interleaves the implementations.
func BenchmarkCases(b *testing.B) {
	for _, c := range Cases() {
		b.Run(c.Group()+"/"+c.Impl, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.Run()
			}
		})
	}
}
