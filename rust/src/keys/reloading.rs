//! A key ring that follows its key file (Python's `ReloadingKeyring`, Go's `keys.ReloadingFile`), so a
//! fleet rotates by replacing the file every replica reads (a mounted secret, or a file the deploy
//! tool writes next to the old one and renames over it).
//!
//! The file holds what `MRTR_STATE_KEYS` holds (a JWKS, one JWK, or an HS256 secret), read by the
//! crate's one key-file reader and [`Keyring::parse`], so every rule of a key loaded at start-up
//! applies to a reloaded one. At most once per check interval (default 1 s), [`KeySource::keyring`]
//! looks at the file's identity (the file itself, its size, its modification and change times) and
//! rereads it when it changed; a token naming a `kid` the keys do not hold makes it look at once
//! (another replica may already sign with a new key); [`ReloadingKeyring::reload`] rereads it
//! whatever the identity says (for a SIGHUP handler).
//!
//! Only a regular file is read: a FIFO, a device or a directory at the path is refused at once (the
//! file is opened without blocking and looked at on the opened file), and `keyring` never waits for
//! a look another thread is making, so a seal or an open never stalls on the file. A file anyone may
//! write (mode o+w) is refused unless [`KeyFileOptions::allow_world_writable`] allows it. A file that
//! cannot be used (missing, half written, not a key ring, a weak secret, not a regular file...) is
//! refused: the last good keys stay in use, one warning (through the `log` facade, target
//! `mrtr_state::keys`) names the path and the rule, never key material, once per distinct bad
//! content, and the same file is not read again for the cooldown (default 5 s) unless it is
//! replaced or `reload` is called. A file its group or others may read (mode `0o077` bits, on Unix) is
//! used, with one warning (once per mode: a Kubernetes secret is mounted 0644 by default) that says to make
//! it 0600. With [`ReloadingKeyring::metrics`], every look that reads the file is counted as the
//! `key_refresh` event of spec/metrics.json (`source` `key_file`; `outcome` `updated`, `unchanged`, or
//! `failed` once per distinct refusal, as the warning), the same counts as the Python and Go rings.

use std::fmt;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, TryLockError};
use std::time::{Duration, Instant, SystemTime};

use sha2::{Digest, Sha256};

use super::file::{KeyFileOptions, read_key_file};
use super::ring::Keyring;
use super::source::KeySource;
use crate::errors::KeyringError;
use crate::metrics::{KEY_REFRESH, MetricsFn, record};

/// The time between two looks at a key file (as in Python and Go).
pub const DEFAULT_CHECK_INTERVAL: Duration = Duration::from_secs(1);
/// The time before a key file found bad is read again unless it is replaced or reloaded (as in
/// Python and Go).
pub const DEFAULT_FILE_COOLDOWN: Duration = Duration::from_secs(5);

/// How a [`ReloadingKeyring`] follows its file.
#[derive(Clone, Copy, Debug)]
pub struct ReloadingOptions {
    /// The time between two looks at the file (default 1 s).
    pub interval: Duration,
    /// The time before a file found bad is read again unless it is replaced or `reload` is called
    /// (default 5 s), so a bad file is not reread and reparsed for every seal.
    pub cooldown: Duration,
    /// How the file is read (a world-writable file is refused unless allowed).
    pub file: KeyFileOptions,
}

impl Default for ReloadingOptions {
    fn default() -> Self {
        ReloadingOptions {
            interval: DEFAULT_CHECK_INTERVAL,
            cooldown: DEFAULT_FILE_COOLDOWN,
            file: KeyFileOptions::default(),
        }
    }
}

/// What says a file changed without reading it: the file itself, its size, its times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Identity {
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<SystemTime>,
    changed: (i64, i64),
}

impl Identity {
    fn of(meta: &Metadata) -> Identity {
        #[cfg(unix)]
        let (device, inode, changed) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino(), (meta.ctime(), meta.ctime_nsec()))
        };
        #[cfg(not(unix))]
        let (device, inode, changed) = (0, 0, (0, 0));
        Identity {
            device,
            inode,
            len: meta.len(),
            modified: meta.modified().ok(),
            changed,
        }
    }
}

/// The last refusal: its content's digest (or its reason's), the file it was found in, why, and
/// when that file may be read again.
struct Failure {
    digest: [u8; 32],
    identity: Option<Identity>,
    reason: String,
    retry_at: Instant,
}

struct Watch {
    last_check: Instant,
    identity: Option<Identity>,
    digest: [u8; 32],
    failure: Option<Failure>,
    /// The mode last warned about as readable by group or others (`None`: no warning yet).
    readable_warned: Option<u32>,
}

/// A key ring that follows a key file; a [`KeySource`] for
/// [`StateSealer::builder_with_source`](crate::StateSealer::builder_with_source). Safe to share
/// between threads. `Debug` shows the path and the key ids, never key material.
pub struct ReloadingKeyring {
    path: PathBuf,
    options: ReloadingOptions,
    ring: RwLock<Arc<Keyring>>,
    watch: Mutex<Watch>,
    metrics: Option<MetricsFn>,
}

impl fmt::Debug for ReloadingKeyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReloadingKeyring")
            .field("path", &self.path)
            .field("keys", &self.current())
            .finish_non_exhaustive()
    }
}

fn digest(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

impl ReloadingKeyring {
    /// Reads the key file at `path` and follows it with the default options; an error when it
    /// cannot be used now (a replica should not start without keys).
    pub fn load(path: impl AsRef<Path>) -> Result<ReloadingKeyring, KeyringError> {
        ReloadingKeyring::load_with(path, ReloadingOptions::default())
    }

    /// As [`load`](Self::load), with these options.
    pub fn load_with(
        path: impl AsRef<Path>,
        options: ReloadingOptions,
    ) -> Result<ReloadingKeyring, KeyringError> {
        let path = path.as_ref().to_path_buf();
        let meta = std::fs::metadata(&path).map_err(|e| cannot_read(&path, &e))?;
        let data = read_key_file(&path, options.file)?;
        let ring = Keyring::parse_key_file(&path, &data)?;
        let mut watch = Watch {
            last_check: Instant::now(),
            identity: Some(Identity::of(&meta)),
            digest: digest(&data),
            failure: None,
            readable_warned: None,
        };
        warn_if_readable(&path, &meta, &mut watch);
        Ok(ReloadingKeyring {
            options,
            ring: RwLock::new(Arc::new(ring)),
            watch: Mutex::new(watch),
            path,
            metrics: None,
        })
    }

    /// Counts every look that reads the file as a `key_refresh` event (spec/metrics.json): `f(event,
    /// attributes)` with `source` `key_file` and `outcome` `updated`, `unchanged` or `failed`, as
    /// [`StateSealerBuilder::metrics`](crate::StateSealerBuilder::metrics) counts seals and opens
    /// (`metrics::opentelemetry(&provider)` makes OpenTelemetry counters of them). A look that finds
    /// the file's identity unchanged reads nothing and counts nothing; a refusal counts once per
    /// distinct bad content, as it warns. A function that panics loses the count, nothing else.
    pub fn metrics(mut self, f: impl Fn(&str, &[(&str, &str)]) + Send + Sync + 'static) -> Self {
        self.metrics = Some(Arc::new(f));
        self
    }

    fn count(&self, outcome: &str) {
        record(
            &self.metrics,
            KEY_REFRESH,
            &[("source", "key_file"), ("outcome", outcome)],
        );
    }

    /// The path followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rereads the file whatever its identity says (and whatever the cooldown): `Ok(true)` when new
    /// keys were loaded, an error when the file cannot be used (the last good keys then stay).
    pub fn reload(&self) -> Result<bool, KeyringError> {
        let mut watch = self.watch.lock().unwrap_or_else(|p| p.into_inner());
        self.check(&mut watch, true)
    }

    fn current(&self) -> Arc<Keyring> {
        Arc::clone(&self.ring.read().unwrap_or_else(|p| p.into_inner()))
    }

    fn try_watch(&self) -> Option<MutexGuard<'_, Watch>> {
        match self.watch.try_lock() {
            Ok(watch) => Some(watch),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Rereads the file if it changed (or if `force`); `Ok(true)` when new keys were loaded.
    fn check(&self, watch: &mut Watch, force: bool) -> Result<bool, KeyringError> {
        let now = Instant::now();
        watch.last_check = now;
        // A stat never waits for a FIFO's writer.
        let meta = match std::fs::metadata(&self.path) {
            Ok(meta) => meta,
            Err(e) => {
                let reason = cannot_read(&self.path, &e).message().to_owned();
                return Err(self.refuse(watch, reason, None, None, now));
            }
        };
        let identity = Identity::of(&meta);
        if !force {
            match &watch.failure {
                None if watch.identity == Some(identity) => return Ok(false),
                // The same bad file, still cooling down.
                Some(f) if f.identity == Some(identity) && now < f.retry_at => return Ok(false),
                _ => {}
            }
        }
        let data = match read_key_file(&self.path, self.options.file) {
            Ok(data) => data,
            Err(e) => {
                return Err(self.refuse(watch, e.message().to_owned(), None, Some(identity), now));
            }
        };
        let content = digest(&data);
        if content == watch.digest {
            watch.identity = Some(identity);
            watch.failure = None;
            self.count("unchanged");
            return Ok(false);
        }
        if let Some(known) = watch.failure.as_ref().filter(|f| f.digest == content) {
            // Known to be bad: not parsed again.
            let reason = known.reason.clone();
            return Err(self.refuse(watch, reason, Some(content), Some(identity), now));
        }
        let ring = match Keyring::parse_key_file(&self.path, &data) {
            Ok(ring) => ring,
            Err(e) => {
                let reason = e.message().to_owned();
                return Err(self.refuse(watch, reason, Some(content), Some(identity), now));
            }
        };
        let count = ring.keys().len();
        warn_if_readable(&self.path, &meta, watch);
        *self.ring.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(ring);
        watch.identity = Some(identity);
        watch.digest = content;
        watch.failure = None;
        log::info!(
            target: "mrtr_state::keys",
            "the key file {} changed: {count} key(s) loaded",
            self.path.display()
        );
        self.count("updated");
        Ok(true)
    }

    /// Remembers a file that cannot be used, warns once per distinct content (or reason), and
    /// returns the refusal. `reason` names the path and the rule, never key material.
    fn refuse(
        &self,
        watch: &mut Watch,
        reason: String,
        content: Option<[u8; 32]>,
        identity: Option<Identity>,
        now: Instant,
    ) -> KeyringError {
        let failure = content.unwrap_or_else(|| digest(reason.as_bytes()));
        if watch.failure.as_ref().map(|f| f.digest) != Some(failure) {
            log::warn!(
                target: "mrtr_state::keys",
                "{reason}; the last good keys stay in use"
            );
            self.count("failed");
        }
        let error = KeyringError::new(format!("{reason}; the last good keys stay in use"));
        watch.failure = Some(Failure {
            digest: failure,
            identity,
            reason,
            retry_at: now + self.options.cooldown,
        });
        error
    }
}

/// Warns, once per mode, that the key file at `path` may be read by its group or others (as Python and
/// Go do): the keys are used, but anyone who can read them can mint states. Not on Windows, whose
/// permissions the mode does not describe.
fn warn_if_readable(path: &Path, meta: &Metadata, watch: &mut Watch) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 == 0 {
            watch.readable_warned = None;
            return;
        }
        if watch.readable_warned == Some(mode) {
            return;
        }
        watch.readable_warned = Some(mode);
        log::warn!(
            target: "mrtr_state::keys",
            "the key file {} may be read by its group or others (mode {mode:04o}): make it 0600 (chmod 600 FILE)",
            path.display()
        );
    }
    #[cfg(not(unix))]
    let _ = (path, meta, watch);
}

fn cannot_read(path: &Path, error: &std::io::Error) -> KeyringError {
    KeyringError::new(format!(
        "the key file {} cannot be used: it cannot be read: {}",
        path.display(),
        error.kind()
    ))
}

impl KeySource for ReloadingKeyring {
    /// The keys, after rereading the file if the check interval has passed and the file changed.
    /// Never waits: while another thread looks at the file, the keys held are returned.
    fn keyring(&self) -> Arc<Keyring> {
        if let Some(mut watch) = self.try_watch()
            && watch.last_check.elapsed() >= self.options.interval
        {
            let _ = self.check(&mut watch, false);
        }
        self.current()
    }

    /// Looks at the file at once, whatever the interval (a bad file still cools down), and tells
    /// whether new keys were loaded. Never waits: while another thread looks, `false`.
    fn refresh_for_unknown_key(&self) -> bool {
        match self.try_watch() {
            Some(mut watch) => self.check(&mut watch, false).unwrap_or(false),
            None => false,
        }
    }
}
