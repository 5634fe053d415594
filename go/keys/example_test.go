package keys_test

import (
	"fmt"

	"github.com/mrtr-state/mrtr-state/go/keys"
)

// Rotation without downtime (profile, 7.3): the new key is added after the
// signing key, then moved first, and the old key is removed once every token
// it signed has expired.
func ExampleKeyring_Rotated() {
	old, _ := keys.Generate(keys.EdDSA, "2026-11")
	ring, _ := keys.NewKeyring(old)
	next, _ := keys.Generate(keys.EdDSA, "2026-12")

	rotated, _ := ring.Rotated(next) // next signs; tokens of old still open
	signing, _ := rotated.SigningKey()
	fmt.Println(signing.Kid(), rotated.Get("2026-11") != nil)

	pruned, _ := rotated.Without("2026-11") // after the maximum lifetime
	fmt.Println(pruned.Len(), pruned.Get("2026-11") == nil)
	// Output:
	// 2026-12 true
	// 1 true
}
