package keys

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeRing(t *testing.T, path string, ks ...*Key) {
	t.Helper()
	r, _ := NewKeyring(ks...)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, r.PrivateJWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil { // replaced by a rename, as a deploy does
		t.Fatal(err)
	}
}

func TestAKeyFileIsFollowedThroughARotationAndABadFileKeepsTheLastGoodKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	old, _ := Generate(HS256, "old")
	writeRing(t, path, old)
	now := time.Unix(1000, 0)
	f, err := LoadKeyFile(path, WithFileClock(func() time.Time { return now }), WithFileLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	next, _ := Generate(HS256, "next")
	writeRing(t, path, next, old)
	if f.Keyring().Get("next") != nil {
		t.Error("the file was reread within the check interval")
	}
	now = now.Add(DefaultCheckInterval)
	if f.Keyring().Get("next") == nil {
		t.Error("the rotated file was not picked up after the interval")
	}
	newer, _ := Generate(HS256, "newer")
	writeRing(t, path, newer, next)
	if !f.RefreshForUnknownKey(context.Background()) || f.Keyring().Get("newer") == nil {
		t.Error("an unknown kid did not make it look at once")
	}
	if err := os.WriteFile(path, []byte(`{"keys": [{"kty": "oct", "k": "short"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if f.Reload() == nil || f.Keyring().Get("newer") == nil {
		t.Error("a bad file replaced the last good keys, or Reload did not say so")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	now = now.Add(DefaultCheckInterval)
	if f.Keyring().Get("newer") == nil {
		t.Error("a missing file dropped the last good keys")
	}
	if _, err := LoadKeyFile(path); err == nil {
		t.Error("a missing file loaded at start-up")
	}
}
