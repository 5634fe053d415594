// Package benchmarks measures the Go module's seal and open next to golang-jwt
// v5 and go-jose v4 minting and verifying the same token with their usual claim
// checks, at the three state sizes of benchmarks/bench_open_seal.py (200 bytes,
// 2 KiB, and the largest state that fits the 8192-byte cap). It is its own
// module, so the libraries it compares with never enter the module's go.mod.
//
//	cd go/benchmarks && go test -run '^$' -bench . -benchmem
package benchmarks
