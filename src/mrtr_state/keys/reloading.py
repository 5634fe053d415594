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
from mrtr_state.keys.keys import DEFAULT_KEYS_VARIABLE, Key, Keyring
from mrtr_state.metrics import StateMetrics, record

__all__ = ["DEFAULT_CHECK_INTERVAL", "DEFAULT_KEYS_FILE_VARIABLE", "MAX_KEY_FILE_BYTES", "ReloadingKeyring"]

logger = logging.getLogger("mrtr_state.reloading")  # the name logging was configured with before the move

#: The environment variable :meth:`ReloadingKeyring.from_env` reads: the key file's path.
DEFAULT_KEYS_FILE_VARIABLE: Final = "MRTR_STATE_KEYS_FILE"
#: Seconds between two looks at the file.
DEFAULT_CHECK_INTERVAL: Final = 1.0
#: The largest key file read, in bytes.
MAX_KEY_FILE_BYTES: Final = 1 << 20

_Identity = tuple[int, int, int, int, int]


def _identity(path: str) -> _Identity:
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        data = file.read(MAX_KEY_FILE_BYTES + 1)
    if len(data) > MAX_KEY_FILE_BYTES:
        raise KeyringError(f"it is larger than {MAX_KEY_FILE_BYTES} bytes")
    return data


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
        clock: monotonic seconds, for the schedule.
        metrics: counts every reread as a ``key_refresh`` event
            (:mod:`mrtr_state.metrics`; ``source`` ``key_file``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        check_interval: float = DEFAULT_CHECK_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        metrics: StateMetrics | None = None,
    ) -> None:
        if isinstance(check_interval, bool) or not isinstance(check_interval, (int, float)):
            raise TypeError("check_interval must be a number of seconds")
        if not check_interval >= 0:
            raise ValueError(f"check_interval must not be negative, got {check_interval!r}")
        if not callable(clock):
            raise TypeError("clock must be a callable")
        self._path = os.fspath(path)
        self._check_interval = float(check_interval)
        self._clock = clock
        self._metrics = metrics
        self._lock = threading.Lock()
        self._poked = False
        self._identity: _Identity | None = None
        self._digest = b""
        self._failed_digest: bytes | None = None
        try:
            identity = _identity(self._path)
            data = _read(self._path)
            self._ring = _parse(data)
        except OSError as exc:
            raise KeyringError(f"the key file {self._path!r} cannot be read: {exc.strerror}") from None
        except KeyringError as exc:
            raise KeyringError(
                f"the key file {self._path!r} (read as {DEFAULT_KEYS_VARIABLE} is) cannot be used: {exc}"
            ) from None
        self._identity = identity
        self._digest = hashlib.sha256(data).digest()
        self._next_check = clock() + self._check_interval

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        check_interval: float = DEFAULT_CHECK_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        metrics: StateMetrics | None = None,
    ) -> ReloadingKeyring:
        """Load the key file at ``path`` (KeyringError if it cannot be used) and follow it."""
        return cls(path, check_interval=check_interval, clock=clock, metrics=metrics)

    @classmethod
    def from_env(
        cls,
        name: str = DEFAULT_KEYS_FILE_VARIABLE,
        *,
        environ: Mapping[str, str] | None = None,
        check_interval: float = DEFAULT_CHECK_INTERVAL,
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
        return cls(path, check_interval=check_interval, clock=clock, metrics=metrics)

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
        self._next_check = self._clock() + self._check_interval
        try:
            identity = _identity(self._path)
            if not reread and identity == self._identity and self._failed_digest is None:
                return False
            data = _read(self._path)
        except OSError as exc:
            return self._refuse(f"it cannot be read: {exc.strerror}", None, quiet)
        except KeyringError as exc:
            return self._refuse(str(exc), None, quiet)
        digest = hashlib.sha256(data).digest()
        if digest == self._digest:
            self._identity, self._failed_digest = identity, None
            record(self._metrics, "key_refresh", source="key_file", outcome="unchanged")
            return False
        try:
            ring = _parse(data)
        except KeyringError as exc:
            return self._refuse(str(exc), digest, quiet)
        self._ring, self._identity, self._digest, self._failed_digest = ring, identity, digest, None
        logger.info("the key file %r changed: %d keys, kid %r signs", self._path, len(ring), ring.keys[0].kid)
        record(self._metrics, "key_refresh", source="key_file", outcome="updated")
        return True

    def _refuse(self, reason: str, digest: bytes | None, quiet: bool) -> bool:
        message = f"the key file {self._path!r} (read as {DEFAULT_KEYS_VARIABLE} is) cannot be used: {reason}"
        failure = digest if digest is not None else reason.encode()
        if failure != self._failed_digest:  # once per distinct bad content, not every look
            logger.warning("%s; keeping the %d keys read before", message, len(self._ring))
            record(self._metrics, "key_refresh", source="key_file", outcome="failed")
        # Remember the failure so the next look rereads even if the file's identity
        # does not change again (a write finished within one timestamp tick).
        self._failed_digest = failure
        if not quiet:
            raise KeyringError(message)
        return False
