//go:build unix

package keys

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// returnsWithin runs fn and fails the test if it has not returned after a
// generous bound: the bound only turns a hang (today's fault: os.Open of a
// FIFO without a writer blocks for ever) into a failure; it measures no speed.
// Each of these tests takes a few milliseconds.
func returnsWithin(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return: it waits on the file", what)
	}
}

func TestAFIFOAtTheKeyPathIsRefusedWithoutWaitingForAWriter(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "keys.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	returnsWithin(t, "LoadKeyFile of a FIFO", func() {
		if _, err := LoadKeyFile(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file (a FIFO)") {
			t.Errorf("a FIFO loaded, or the refusal does not say why: %v", err)
		}
	})
	returnsWithin(t, "FromFile of a FIFO", func() {
		if _, err := FromFile(fifo); err == nil {
			t.Error("FromFile read a FIFO")
		}
	})
	if _, err := LoadKeyFile(dir); err == nil || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("a directory loaded, or the refusal does not say why: %v", err)
	}

	// A FIFO renamed over a followed key file: every look returns, the last
	// good keys stay, and Reload says why.
	path := filepath.Join(dir, "keys.json")
	good, _ := Generate(HS256, "good")
	writeRing(t, path, good)
	now := time.Unix(1000, 0)
	f, err := LoadKeyFile(path, WithFileClock(func() time.Time { return now }), WithFileLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fifo, path); err != nil {
		t.Fatal(err)
	}
	now = now.Add(DefaultCheckInterval)
	returnsWithin(t, "Keyring with a FIFO at the path", func() {
		if f.Keyring().Get("good") == nil {
			t.Error("a FIFO at the path dropped the last good keys")
		}
	})
	returnsWithin(t, "Reload with a FIFO at the path", func() {
		if err := f.Reload(); err == nil || !strings.Contains(err.Error(), "a FIFO") {
			t.Errorf("Reload of a FIFO: %v", err)
		}
	})
}

func TestAKeyFileAnyoneMayWriteIsRefusedUnlessAllowed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	old, _ := Generate(HS256, "old")
	writeRing(t, path, old)
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKeyFile(path, WithFileLogger(quiet)); err == nil || !strings.Contains(err.Error(), "anyone may write it (mode 0666)") {
		t.Errorf("a world-writable key file loaded, or the refusal does not say why: %v", err)
	}
	if _, err := FromFile(path); err == nil {
		t.Error("FromFile read a world-writable key file")
	}
	if _, err := LoadKeyFile(path, WithWorldWritableFile(), WithFileLogger(quiet)); err != nil {
		t.Errorf("WithWorldWritableFile did not allow it: %v", err)
	}

	// At a reload: a world-writable replacement is refused, the last good keys stay.
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	f, err := LoadKeyFile(path, WithFileClock(func() time.Time { return now }), WithFileLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	planted, _ := Generate(HS256, "planted")
	writeRing(t, path, planted)
	if err := os.Chmod(path, 0o606); err != nil {
		t.Fatal(err)
	}
	now = now.Add(DefaultCheckInterval)
	if f.Keyring().Get("planted") != nil || f.Keyring().Get("old") == nil {
		t.Error("keys from a world-writable file were installed")
	}
}

func TestABadKeyFileIsNotReadAgainUntilTheCooldownHasPassed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	old, _ := Generate(HS256, "old")
	writeRing(t, path, old)
	now := time.Unix(1000, 0)
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	f, err := LoadKeyFile(path, WithFileClock(func() time.Time { return now }), WithFileLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	next, _ := Generate(HS256, "next")
	r, _ := NewKeyring(next)
	good := r.PrivateJWKS()
	bad := []byte(`{"keys": [{"kty": "oct", "k": "short"}]}`)
	bad = append(bad, bytes.Repeat([]byte(" "), len(good)-len(bad))...) // the same size as the good one
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	now = now.Add(DefaultCheckInterval)
	if f.Keyring().Get("old") == nil {
		t.Fatal("a bad file dropped the last good keys")
	}
	// The good ring written in place: the same file, size and modification
	// time, so only a reread can find it, and the cooldown holds that back.
	stat, _ := os.Stat(path)
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, stat.ModTime(), stat.ModTime()); err != nil {
		t.Fatal(err)
	}
	now = now.Add(DefaultFileCooldown - time.Millisecond)
	if f.Keyring().Get("next") != nil {
		t.Error("the bad file was read again within the cooldown")
	}
	now = now.Add(DefaultCheckInterval) // the next look, after the cooldown
	if f.Keyring().Get("next") == nil {
		t.Error("the file was not read again after the cooldown")
	}
	if n := strings.Count(logged.String(), "cannot be used"); n != 1 {
		t.Errorf("the bad file was logged %d times; want once", n)
	}
	if strings.Contains(logged.String(), `"k"`) || strings.Contains(logged.String(), "short") {
		t.Error("the warning shows key material")
	}
}
