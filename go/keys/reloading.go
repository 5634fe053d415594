package keys

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultKeysFileVariable is the environment variable LoadKeyFileFromEnv reads:
// the key file's path.
const DefaultKeysFileVariable = "MRTR_STATE_KEYS_FILE"

// DefaultCheckInterval is the time between two looks at a key file.
const DefaultCheckInterval = time.Second

// ReloadingFile is a key source that follows a key file, so a fleet rotates by
// replacing the file every replica reads (a mounted secret, or a file the
// deploy tool writes next to the old one and renames over it).
//
// The file holds what MRTR_STATE_KEYS holds (a JWKS, one JWK, or an HS256
// secret), read by Parse, so every rule of a key loaded at start-up applies to
// a reloaded one. At most every check interval, Keyring looks at the file's
// identity (the file itself, its size and modification time) and rereads it
// when it changed; a token naming a kid the keys do not hold makes it look at
// once (another replica may already sign with a new key); Reload rereads it
// whatever the identity says (for a SIGHUP handler). A file that cannot be used
// (missing, half written, not a key ring, a weak secret...) is refused: the
// last good keys stay in use and a warning says why (the path and the rule,
// never key material), once per distinct bad content. Safe for concurrent use.
type ReloadingFile struct {
	path     string
	interval time.Duration
	clock    func() time.Time
	logger   *slog.Logger

	ring      atomic.Pointer[Keyring]
	mu        sync.Mutex
	info      os.FileInfo
	lastCheck time.Time
	lastBad   [sha256.Size]byte
}

// FileOption configures a ReloadingFile.
type FileOption func(*ReloadingFile)

// WithCheckInterval sets the time between two looks at the file (default 1 s).
func WithCheckInterval(d time.Duration) FileOption { return func(f *ReloadingFile) { f.interval = d } }

// WithFileClock sets the clock of the checks (default time.Now).
func WithFileClock(clock func() time.Time) FileOption {
	return func(f *ReloadingFile) { f.clock = clock }
}

// WithFileLogger sets where refused contents are logged (default slog.Default()).
func WithFileLogger(l *slog.Logger) FileOption { return func(f *ReloadingFile) { f.logger = l } }

// LoadKeyFile reads the key file at path and follows it; an error when it
// cannot be used at start-up (a replica should not start without keys).
func LoadKeyFile(path string, opts ...FileOption) (*ReloadingFile, error) {
	f := &ReloadingFile{path: path, interval: DefaultCheckInterval, clock: time.Now, logger: slog.Default()}
	for _, opt := range opts {
		opt(f)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, keyringErrorf("the key file %s cannot be read: %s", path, err.Error())
	}
	ring, err := FromFile(path)
	if err != nil {
		return nil, err
	}
	f.ring.Store(ring)
	f.info, f.lastCheck = info, f.clock()
	return f, nil
}

// LoadKeyFileFromEnv is LoadKeyFile of the path in MRTR_STATE_KEYS_FILE.
func LoadKeyFileFromEnv(opts ...FileOption) (*ReloadingFile, error) {
	path := os.Getenv(DefaultKeysFileVariable)
	if path == "" {
		return nil, keyringErrorf("the environment variable %s is not set: set it to the path of a key file", DefaultKeysFileVariable)
	}
	return LoadKeyFile(path, opts...)
}

// Keyring returns the keys, after rereading the file if the check interval has
// passed and the file changed.
func (f *ReloadingFile) Keyring() *Keyring {
	f.mu.Lock()
	if f.clock().Sub(f.lastCheck) >= f.interval {
		f.check(false)
	}
	f.mu.Unlock()
	return f.ring.Load()
}

// RefreshForUnknownKey looks at the file at once, for a token whose kid the
// keys do not hold, and tells whether new keys were loaded.
func (f *ReloadingFile) RefreshForUnknownKey(context.Context) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.check(false)
}

// Reload rereads the file whatever its identity says; an error when its
// content cannot be used (the last good keys then stay).
func (f *ReloadingFile) Reload() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.check(true) && f.lastBad != ([sha256.Size]byte{}) {
		return keyringErrorf("the key file %s cannot be used; the last good keys stay", f.path)
	}
	return nil
}

// check rereads the file if it changed (or if force); true when new keys were
// loaded. f.mu is held.
func (f *ReloadingFile) check(force bool) bool {
	f.lastCheck = f.clock()
	info, err := os.Stat(f.path)
	if err != nil {
		f.refuse([]byte(err.Error()), "it cannot be read")
		return false
	}
	if !force && f.info != nil && os.SameFile(f.info, info) && info.Size() == f.info.Size() && info.ModTime().Equal(f.info.ModTime()) {
		return false
	}
	ring, err := FromFile(f.path)
	if err != nil {
		data, _ := os.ReadFile(f.path)
		f.refuse(data, err.Error())
		return false
	}
	f.info = info
	f.lastBad = [sha256.Size]byte{}
	f.ring.Store(ring)
	return true
}

// refuse logs a content that cannot be used, once per distinct content.
func (f *ReloadingFile) refuse(content []byte, reason string) {
	sum := sha256.Sum256(content)
	if sum == f.lastBad {
		return
	}
	f.lastBad = sum
	f.logger.Warn("keys: the key file cannot be used; the last good keys stay in use", "path", f.path, "reason", reason)
}

// String names the path only.
func (f *ReloadingFile) String() string { return "ReloadingFile(" + f.path + ")" }
