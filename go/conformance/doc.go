// Package conformance lets a Go server built on this module claim the strict
// conformance class of the mrtr-state profile (spec/profile.md, section 12.6)
// in one call: Serve answers the JSON-lines protocol that `mrtr-state
// conformance` speaks (docs/conformance.md) with the module's public API, so
// the runner drives the very code the server runs.
//
//	func main() {
//		if err := conformance.Serve(os.Stdin, os.Stdout); err != nil {
//			log.Fatal(err)
//		}
//	}
//
// and then, from the shell:
//
//	mrtr-state conformance --class strict -- ./my-adapter
//
// The operations are answered as follows: verify opens the token with a
// mrtrstate.Sealer made of the request's settings (VerifyJob.Verify), digest is
// binding.Digest, and load_key is keys.ParseJWK for one key or keys.ParseJWKS
// for a ring (LoadKey). CheckVectors runs every vector file of spec/vectors
// through the same code and prints one line per vector.
//
// Command cmd/conformance of this module is Serve on stdin and stdout; the Go
// interop example (examples/interop/go) serves the same function.
package conformance
