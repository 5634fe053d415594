"""A key ring read from a file, that picks up a rotated file without a restart.

A fleet that uses HS256 secrets (or EdDSA private keys) rotates by changing the
key file every replica reads: a mounted secret, or a file written by the deploy
tool. :class:`ReloadingKeyring` is a key source (:mod:`mrtr_state.keys.key_source`)
that follows that file::

    ring = ReloadingKeyring.from_env()            # the file named by MRTR_STATE_KEYS_FILE
    sealer = StateSealer(ring, issuer="https://tools.example.com")

- The file holds what ``MRTR_STATE_KEYS`` holds (a JWKS, one JWK, or an HS256
  secret in base64), read by :meth:`Keyring.from_env`'s own rules, so every check
  of a key loaded at start-up applies to a reloaded one. (An environment variable
  cannot change in a running process; that is why the reloading form reads a file.)
- At most every ``check_interval`` seconds (default 1), the next ``seal`` or
  ``open`` looks at the file's identity (device, inode, size, modification and
  change times): a file replaced by a rename, or rewritten, is read again. A
  token that names an unknown ``kid`` makes it look at once (another replica may
  already sign with the new key), and so does the next access after the signal
  :meth:`reload_on_signal` installs (``SIGHUP`` by default), which also rereads
  the contents whatever the identity says.
- A file that cannot be used (missing, empty, half written, not a key ring, a
  secret too short, ...) is refused: the last good ring stays in use and a
  WARNING says why (the file name and the rule, never key material), once per
  distinct bad content. Loading at start-up raises :class:`KeyringError` instead.
  A file found bad is not read again for ``cooldown`` seconds (default 5) unless
  it is replaced (a new file renamed over it), :meth:`reload` is called or the
  signal arrives: tokens with unknown ``kid`` values cannot make a replica reread
  and reparse a bad file for each of them.
- Only a regular file is read (a FIFO, a device or a directory at the path is
  refused at once, without waiting for a writer). A file that anyone may write
  (mode ``o+w``) is refused unless ``allow_world_writable=True``; a file that its
  group or others may read is loaded with a WARNING (Kubernetes mounts secrets
  0644 unless told ``defaultMode: 0400``). ``docs/operations.md`` says why.

Write the new file next to the old one and rename it over (``mrtr-state keygen
--add FILE --force`` does), so that no reader ever sees half a file. The rotation
steps are in ``docs/operations.md``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Final

from mrtr_state.errors import KeyringError
from mrtr_state.keys._key_file import read_key_file
from mrtr_state.keys.keys import DEFAULT_KEYS_VARIABLE, Key, Keyring
from mrtr_state.metrics import StateMetrics, record

__all__ = [
    "DEFAULT_CHECK_INTERVAL",
    "DEFAULT_COOLDOWN",
    "DEFAULT_KEYS_FILE_VARIABLE",
    "MAX_KEY_FILE_BYTES",
    "ReloadingKeyring",
]

logger = logging.getLogger("mrtr_state.reloading")  # the name logging was configured with before the move

#: The environment variable :meth:`ReloadingKeyring.from_env` reads: the key file's path.
DEFAULT_KEYS_FILE_VARIABLE: Final = "MRTR_STATE_KEYS_FILE"
#: Seconds between two looks at the file.
DEFAULT_CHECK_INTERVAL: Final = 1.0
#: Seconds before a file found bad is read again (unless it was replaced, or a reread was asked for).
DEFAULT_COOLDOWN: Final = 5.0
#: The largest key file read, in bytes.
MAX_KEY_FILE_BYTES: Final = 1 << 20

_Identity = tuple[int, int, int, int, int]


def _identity(path: str) -> _Identity:
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read(path: str, *, allow_world_writable: bool) -> tuple[bytes, int]:
    """The key file's bytes and its permission bits, read by the one key file reader."""
    data, mode = read_key_file(
        path,
        max_bytes=MAX_KEY_FILE_BYTES + 1,
        allow_world_writable=allow_world_writable,
        how_to_allow="pass allow_world_writable=True",
    )
    if len(data) > MAX_KEY_FILE_BYTES:
        raise KeyringError(f"it is larger than {MAX_KEY_FILE_BYTES} bytes")
    return data, mode


def _warn_if_readable_by_others(path: str, mode: int) -> None:
    if mode & 0o077 and os.name != "nt":
        logger.warning(
            "the key file %r may be read by its group or others (mode %04o): make it 0600 (chmod 600 FILE)",
            path,
            mode,
        )


def _parse(data: bytes) -> Keyring:
    """The ring in a key file's bytes, by the rules of ``MRTR_STATE_KEYS``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise KeyringError("it is not UTF-8 text") from None
    if not text.strip():
        raise KeyringError("it is empty")
    return Keyring.from_env(DEFAULT_KEYS_VARIABLE, environ={DEFAULT_KEYS_VARIABLE: text})


class ReloadingKeyring:
    """A key source that reads a key file, and reads it again when it changes.

    Make one with :meth:`from_file` or :meth:`from_env`; both load the file at
    once and raise :class:`KeyringError` if it cannot be used.

    Args:
        path: the key file.
        check_interval: the most seconds between two looks at the file.
        cooldown: after the file is found bad, the fewest seconds before it is
            read again (default 5), unless it is replaced by another file,
            :meth:`reload` is called or the signal arrives.
        allow_world_writable: load a file that anyone may write (mode ``o+w``);
            refused by default (anyone could put their key in it).
        clock: monotonic seconds, for the schedule and the cooldown.
        metrics: counts every reread as a ``key_refresh`` event
            (:mod:`mrtr_state.metrics`; ``source`` ``key_file``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        check_interval: float = DEFAULT_CHECK_INTERVAL,
        cooldown: float = DEFAULT_COOLDOWN,
        allow_world_writable: bool = False,
        clock: Callable[[], float] = time.monotonic,
        metrics: StateMetrics | None = None,
    ) -> None:
        for name, value in (("check_interval", check_interval), ("cooldown", cooldown)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} must be a number of seconds")
            if not value >= 0:
                raise ValueError(f"{name} must not be negative, got {value!r}")
        if not callable(clock):
            raise TypeError("clock must be a callable")
        self._path = os.fspath(path)
        self._check_interval = float(check_interval)
        self._cooldown = float(cooldown)
        self._allow_world_writable = bool(allow_world_writable)
        self._clock = clock
        self._metrics = metrics
        self._lock = threading.Lock()
        self._poked = False
        self._identity: _Identity | None = None
        self._digest = b""
        # The last failure: its content's digest (or its reason), the file it was
        # found in, why, and when the file may be read again.
        self._failed_digest: bytes | None = None
        self._failed_identity: _Identity | None = None
        self._failed_reason = ""
        self._retry_at = float("-inf")
        try:
            identity = _identity(self._path)
            data, mode = _read(self._path, allow_world_writable=self._allow_world_writable)
            self._ring = _parse(data)
        except OSError as exc:
            raise KeyringError(f"the key file {self._path!r} cannot be read: {exc.strerror}") from None
        except KeyringError as exc:
            raise KeyringError(
                f"the key file {self._path!r} (read as {DEFAULT_KEYS_VARIABLE} is) cannot be used: {exc}"
            ) from None
        _warn_if_readable_by_others(self._path, mode)
        self._identity = identity
        self._digest = hashlib.sha256(data).digest()
        self._next_check = clock() + self._check_interval

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        check_interval: float = DEFAULT_CHECK_INTERVAL,
        cooldown: float = DEFAULT_COOLDOWN,
        allow_world_writable: bool = False,
        clock: Callable[[], float] = time.monotonic,
        metrics: StateMetrics | None = None,
    ) -> ReloadingKeyring:
        """Load the key file at ``path`` (KeyringError if it cannot be used) and follow it."""
        return cls(
            path,
            check_interval=check_interval,
            cooldown=cooldown,
            allow_world_writable=allow_world_writable,
            clock=clock,
            metrics=metrics,
        )

    @classmethod
    def from_env(
        cls,
        name: str = DEFAULT_KEYS_FILE_VARIABLE,
        *,
        environ: Mapping[str, str] | None = None,
        check_interval: float = DEFAULT_CHECK_INTERVAL,
        cooldown: float = DEFAULT_COOLDOWN,
        allow_world_writable: bool = False,
        clock: Callable[[], float] = time.monotonic,
        metrics: StateMetrics | None = None,
    ) -> ReloadingKeyring:
        """Load and follow the key file whose path is in ``name`` (default ``MRTR_STATE_KEYS_FILE``)."""
        env = os.environ if environ is None else environ
        path = env.get(name, "").strip()
        if not path:
            raise KeyringError(
                f"the environment variable {name} is not set: set it to the path of a key file "
                f"(what {DEFAULT_KEYS_VARIABLE} would hold: `mrtr-state keygen --alg EdDSA -o FILE`)"
            )
        return cls(
            path,
            check_interval=check_interval,
            cooldown=cooldown,
            allow_world_writable=allow_world_writable,
            clock=clock,
            metrics=metrics,
        )

    def __repr__(self) -> str:
        return f"ReloadingKeyring(path={self._path!r}, keys={len(self._ring)})"

    @property
    def path(self) -> str:
        """The key file."""
        return self._path

    @property
    def keyring(self) -> Keyring:
        """The last good ring read from the file."""
        return self._ring

    @property
    def keys(self) -> tuple[Key, ...]:
        """The current keys; looks at the file first when a look is due (never waits for one)."""
        if (self._poked or self._clock() >= self._next_check) and self._lock.acquire(blocking=False):
            try:
                self._check(reread=self._poked)
            finally:
                self._lock.release()
        return self._ring.keys

    def reload(self) -> bool:
        """Read the file now; ``True`` if the keys changed.

        Raises :class:`KeyringError` (the last good ring stays) if it cannot be used.
        """
        with self._lock:
            return self._check(reread=True, quiet=False)

    def refresh_for_unknown_key(self) -> bool:
        """Look at the file now (a ``stat``; a read only if it changed); ``True`` if the keys changed."""
        with self._lock:
            return self._check(reread=False)

    async def refresh_for_unknown_key_async(self) -> bool:
        """:meth:`refresh_for_unknown_key`: a ``stat`` of a local file, done inline."""
        return self.refresh_for_unknown_key()

    def reload_on_signal(self, signum: int | None = None) -> None:
        """Reread the file on the next access after ``signum`` (default ``SIGHUP``) arrives.

        Call it from the main thread (Python's rule for signal handlers). The
        handler only sets a flag; the reading happens on the next ``seal`` or
        ``open``, or at once with :meth:`reload`.
        """
        number = signum if signum is not None else getattr(signal, "SIGHUP", None)
        if number is None:
            raise ValueError("this platform has no SIGHUP; give another signal number")

        def poke(_signum: int, _frame: FrameType | None) -> None:
            self._poked = True

        signal.signal(number, poke)

    def _check(self, *, reread: bool, quiet: bool = True) -> bool:
        """Look at the file (lock held); read it if it changed or ``reread``; ``True`` if the keys changed."""
        self._poked = False
        now = self._clock()
        self._next_check = now + self._check_interval
        try:
            identity = _identity(self._path)
        except OSError as exc:
            return self._refuse(f"it cannot be read: {exc.strerror}", None, None, quiet)
        if not reread:
            if self._failed_digest is None and identity == self._identity:
                return False
            if self._failed_digest is not None and identity == self._failed_identity and now < self._retry_at:
                return False  # the same bad file, still cooling down
        try:
            data, mode = _read(self._path, allow_world_writable=self._allow_world_writable)
        except OSError as exc:
            return self._refuse(f"it cannot be read: {exc.strerror}", None, identity, quiet)
        except KeyringError as exc:
            return self._refuse(str(exc), None, identity, quiet)
        digest = hashlib.sha256(data).digest()
        if digest == self._digest:
            self._identity, self._failed_digest = identity, None
            record(self._metrics, "key_refresh", source="key_file", outcome="unchanged")
            return False
        if digest == self._failed_digest:  # known to be bad: not parsed again
            return self._refuse(self._failed_reason, digest, identity, quiet)
        try:
            ring = _parse(data)
        except KeyringError as exc:
            return self._refuse(str(exc), digest, identity, quiet)
        _warn_if_readable_by_others(self._path, mode)
        self._ring, self._identity, self._digest, self._failed_digest = ring, identity, digest, None
        logger.info("the key file %r changed: %d keys, kid %r signs", self._path, len(ring), ring.keys[0].kid)
        record(self._metrics, "key_refresh", source="key_file", outcome="updated")
        return True

    def _refuse(self, reason: str, digest: bytes | None, identity: _Identity | None, quiet: bool) -> bool:
        message = f"the key file {self._path!r} (read as {DEFAULT_KEYS_VARIABLE} is) cannot be used: {reason}"
        failure = digest if digest is not None else reason.encode()
        if failure != self._failed_digest:  # once per distinct bad content, not every look
            logger.warning("%s; keeping the %d keys read before", message, len(self._ring))
            record(self._metrics, "key_refresh", source="key_file", outcome="failed")
        # Remember the failure: the same file is not read again until the cooldown
        # has passed, and then it is, even if its identity has not changed (a write
        # finished within one timestamp tick).
        self._failed_digest, self._failed_identity, self._failed_reason = failure, identity, reason
        self._retry_at = self._clock() + self._cooldown
        if not quiet:
            raise KeyringError(message)
        return False
