package keys

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mrtr-state/mrtr-state/go/metrics"
)

// DefaultKeysFileVariable is the environment variable LoadKeyFileFromEnv reads:
// the key file's path.
const DefaultKeysFileVariable = "MRTR_STATE_KEYS_FILE"

// DefaultCheckInterval is the time between two looks at a key file.
const DefaultCheckInterval = time.Second

// DefaultFileCooldown is the time before a key file found bad is read again,
// unless it is replaced or Reload is called.
const DefaultFileCooldown = 5 * time.Second

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
// whatever the identity says (for a SIGHUP handler).
//
// Only a regular file is read: a FIFO, a device or a directory at the path is
// refused at once (the file is opened without blocking and looked at with
// fstat), and Keyring never waits for a look another goroutine is making, so a
// seal or an open never stalls on the file. A file anyone may write (mode o+w)
// is refused unless WithWorldWritableFile allows it; one its group or others
// may read is loaded with a warning. A file that cannot be used (missing, half
// written, not a key ring, a weak secret, not a regular file...) is refused:
// the last good keys stay in use and a warning says why (the path and the
// rule, never key material), once per distinct bad content, and the same file
// is not read again for the cooldown (default 5 s) unless it is replaced or
// Reload is called. Safe for concurrent use.
type ReloadingFile struct {
	path          string
	interval      time.Duration
	cooldown      time.Duration
	worldWritable bool
	clock         func() time.Time
	logger        *slog.Logger
	metrics       metrics.Func

	ring      atomic.Pointer[Keyring]
	mu        sync.Mutex // held by a look at the file; Keyring only tries it
	info      os.FileInfo
	digest    [sha256.Size]byte // of the content the keys came from
	lastCheck time.Time
	// The last failure: its content's digest (or its reason's), the file it
	// was found in, why, and when that file may be read again.
	failed       bool
	failedDigest [sha256.Size]byte
	failedInfo   os.FileInfo
	failedReason string
	retryAt      time.Time
}

// FileOption configures a ReloadingFile.
type FileOption func(*ReloadingFile)

// WithCheckInterval sets the time between two looks at the file (default 1 s).
func WithCheckInterval(d time.Duration) FileOption { return func(f *ReloadingFile) { f.interval = d } }

// WithFileCooldown sets the time before a file found bad is read again unless
// it is replaced or Reload is called (default DefaultFileCooldown), so tokens
// with unknown kids cannot make a replica reread and reparse a bad file for
// each of them.
func WithFileCooldown(d time.Duration) FileOption { return func(f *ReloadingFile) { f.cooldown = d } }

// WithWorldWritableFile loads a key file that anyone may write (mode o+w),
// which is refused by default: any local user could put in a key of their own
// and mint tokens every replica accepts.
func WithWorldWritableFile() FileOption { return func(f *ReloadingFile) { f.worldWritable = true } }

// WithFileMetrics counts every reread as a key_refresh event (source
// key_file; outcome updated, unchanged, or failed once per distinct bad
// content; package metrics).
func WithFileMetrics(m metrics.Func) FileOption { return func(f *ReloadingFile) { f.metrics = m } }

// WithFileClock sets the clock of the checks (default time.Now).
func WithFileClock(clock func() time.Time) FileOption {
	return func(f *ReloadingFile) { f.clock = clock }
}

// WithFileLogger sets where refused contents are logged (default slog.Default()).
func WithFileLogger(l *slog.Logger) FileOption { return func(f *ReloadingFile) { f.logger = l } }

// LoadKeyFile reads the key file at path and follows it; an error when it
// cannot be used at start-up (a replica should not start without keys).
func LoadKeyFile(path string, opts ...FileOption) (*ReloadingFile, error) {
	f := &ReloadingFile{path: path, interval: DefaultCheckInterval, cooldown: DefaultFileCooldown,
		clock: time.Now, logger: slog.Default()}
	for _, opt := range opts {
		opt(f)
	}
	if f.interval < 0 || f.cooldown < 0 {
		return nil, keyringErrorf("the check interval and the cooldown of a key file must not be negative")
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, keyringErrorf("the key file %s cannot be read: %s", path, reasonOf(err))
	}
	data, perm, err := readKeyFile(path, f.worldWritable)
	if err != nil {
		return nil, err
	}
	ring, err := parseKeyFile(path, data)
	if err != nil {
		return nil, err
	}
	f.warnIfReadable(perm)
	f.ring.Store(ring)
	f.info, f.digest, f.lastCheck = info, sha256.Sum256(data), f.clock()
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
// passed and the file changed. It never waits: while another goroutine looks
// at the file, it returns the keys held.
func (f *ReloadingFile) Keyring() *Keyring {
	if f.mu.TryLock() {
		if f.clock().Sub(f.lastCheck) >= f.interval {
			f.check(false)
		}
		f.mu.Unlock()
	}
	return f.ring.Load()
}

// RefreshForUnknownKey looks at the file at once, for a token whose kid the
// keys do not hold, and tells whether new keys were loaded.
func (f *ReloadingFile) RefreshForUnknownKey(context.Context) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	changed, _ := f.check(false)
	return changed
}

// Reload rereads the file whatever its identity says (and whatever the
// cooldown); an error when it cannot be used (the last good keys then stay).
func (f *ReloadingFile) Reload() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, err := f.check(true)
	return err
}

// check rereads the file if it changed (or if force); true when new keys were
// loaded, and the refusal when the file cannot be used. f.mu is held.
func (f *ReloadingFile) check(force bool) (bool, error) {
	now := f.clock()
	f.lastCheck = now
	info, err := os.Stat(f.path) // a stat never waits for a FIFO's writer
	if err != nil {
		return false, f.refuse("it cannot be read: "+reasonOf(err), nil, nil)
	}
	if !force {
		if !f.failed && sameFile(f.info, info) {
			return false, nil
		}
		if f.failed && sameFile(f.failedInfo, info) && now.Before(f.retryAt) {
			return false, nil // the same bad file, still cooling down
		}
	}
	data, perm, reason := readRegularFile(f.path, f.worldWritable)
	if reason != "" {
		return false, f.refuse(reason, nil, info)
	}
	digest := sha256.Sum256(data)
	if digest == f.digest {
		f.info, f.failed = info, false
		metrics.Record(f.metrics, metrics.KeyRefresh, "source", "key_file", "outcome", "unchanged")
		return false, nil
	}
	if f.failed && digest == f.failedDigest { // known to be bad: not parsed again
		return false, f.refuse(f.failedReason, &digest, info)
	}
	ring, err := parseKeyFile(f.path, data)
	if err != nil {
		return false, f.refuse(err.Error(), &digest, info)
	}
	f.warnIfReadable(perm)
	f.ring.Store(ring)
	f.info, f.digest, f.failed = info, digest, false
	f.logger.Info("keys: the key file changed", "path", f.path, "keys", ring.Len())
	metrics.Record(f.metrics, metrics.KeyRefresh, "source", "key_file", "outcome", "updated")
	return true, nil
}

func sameFile(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// refuse remembers a file that cannot be used, logs it once per distinct
// content (or reason), and returns the refusal.
func (f *ReloadingFile) refuse(reason string, digest *[sha256.Size]byte, info os.FileInfo) error {
	failure := sha256.Sum256([]byte(reason))
	if digest != nil {
		failure = *digest
	}
	if !f.failed || failure != f.failedDigest {
		f.logger.Warn("keys: the key file cannot be used; the last good keys stay in use", "path", f.path, "reason", reason)
		metrics.Record(f.metrics, metrics.KeyRefresh, "source", "key_file", "outcome", "failed")
	}
	f.failed, f.failedDigest, f.failedInfo, f.failedReason = true, failure, info, reason
	f.retryAt = f.clock().Add(f.cooldown)
	return keyringErrorf("the key file %s cannot be used: %s; the last good keys stay", f.path, reason)
}

// warnIfReadable warns of a key file its group or others may read.
func (f *ReloadingFile) warnIfReadable(perm fs.FileMode) {
	if perm&0o077 != 0 && runtime.GOOS != "windows" {
		f.logger.Warn("keys: the key file may be read by its group or others: make it 0600 (chmod 600 FILE)",
			"path", f.path, "mode", fmt.Sprintf("%04o", uint32(perm)))
	}
}

// String names the path only.
func (f *ReloadingFile) String() string { return "ReloadingFile(" + f.path + ")" }
