"""Public keys read from a published JWKS: the key source of a verify-only replica.

A replica that only verifies (EdDSA; profile, section 7.5) can read the minting
replica's public JWKS from a URL instead of having it copied and redeployed at
every rotation::

    ring = RemoteJWKS.load("https://tools.example.com/.well-known/mrtr-state-jwks.json")
    sealer = StateSealer(ring, issuer="https://tools.example.com")

:class:`RemoteJWKS` is a key source (:mod:`mrtr_state.keys.key_source`):

- it fetches the JWKS once when loaded (a failure then is a :class:`KeyringError`:
  a replica should not start without keys), then again in the background every
  ``refresh_interval`` seconds (default 300), and when a token names a ``kid`` it
  does not hold, at most once per ``cooldown`` (default 30 s) so that tokens with
  random ``kid`` values cannot make it fetch;
- every fetch is bounded: ``https://`` only (``http://`` on a loopback address),
  no redirects, no credentials in the URL, at most ``max_bytes`` (default 64 KiB)
  and ``timeout`` seconds (default 5) for the whole fetch: resolving the host
  name, connecting, the TLS handshake, the headers and the body (a caller never
  waits longer, a resolver that hangs is abandoned at the deadline, and the
  connection is hung up at the deadline however slowly the server sends);
- the JWKS goes through :meth:`Keyring.from_jwks`, so every rule of a local key
  file holds, and then must hold only Ed25519 *public* keys: a JWKS with a
  private key or an HS256 secret is refused whole;
- a failed fetch keeps the last good keys, and says so in the log (WARNING, with
  the URL and the reason; never key material), and is retried after the cooldown.

The standard library does the HTTP (``urllib``), so the core gains no dependency.
It blocks, so every fetch runs in a short-lived thread: a synchronous caller waits
for it at most ``timeout`` seconds, and :meth:`RemoteJWKS.load_async` and
:meth:`refresh_for_unknown_key_async` wait for it without blocking the event loop.
Fetches are rare (one per interval, or per cooldown), so a thread each costs
nothing that matters, and it avoids writing an HTTP client on asyncio streams.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import http.client
import ipaddress
import logging
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any, Final

from mrtr_state.errors import KeyringError
from mrtr_state.keys.keys import Key, Keyring
from mrtr_state.metrics import StateMetrics, record

__all__ = [
    "DEFAULT_COOLDOWN",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_REFRESH_INTERVAL",
    "DEFAULT_TIMEOUT",
    "RemoteJWKS",
    "check_jwks_url",
]

logger = logging.getLogger("mrtr_state.remote_jwks")  # the name logging was configured with before the move

#: Seconds between scheduled fetches.
DEFAULT_REFRESH_INTERVAL: Final = 300.0
#: The fewest seconds between two fetches caused by unknown ``kid`` values (or after a failure).
DEFAULT_COOLDOWN: Final = 30.0
#: The longest a fetch may take, in seconds.
DEFAULT_TIMEOUT: Final = 5.0
#: The largest JWKS accepted, in bytes.
DEFAULT_MAX_BYTES: Final = 64 * 1024

_ACCEPT: Final = "application/jwk-set+json, application/json;q=0.9"


def check_jwks_url(url: str) -> str:
    """Return ``url`` if a JWKS may be fetched from it, else raise :class:`KeyringError`.

    ``https://`` anywhere; ``http://`` only on a loopback address (``127.0.0.0/8``,
    ``::1``, ``localhost``), since keys fetched in the clear could be swapped on
    the way. No user name or password in the URL: it would reach logs.
    """
    if not isinstance(url, str):
        raise TypeError(f"a JWKS URL is a string, not {type(url).__name__}")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError for a bad port)
    except ValueError:
        raise KeyringError("the JWKS URL is not a valid URL") from None
    if parts.scheme not in ("https", "http"):
        raise KeyringError("the JWKS URL must start with https:// (or http:// on a loopback address)")
    if not parts.hostname:
        raise KeyringError("the JWKS URL has no host")
    if parts.username is not None or parts.password is not None:
        raise KeyringError("the JWKS URL must not hold a user name or password")
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise KeyringError(
            "the JWKS URL must use https:// unless it is on a loopback address (127.0.0.1, ::1, localhost): "
            "public keys fetched in the clear could be replaced on the way"
        )
    return url


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuse redirects: the configured URL must be the JWKS itself."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        """Follow nothing; urllib then reports the 3xx as an HTTPError."""
        return None


class _FetchError(Exception):
    """A fetch failed; the message is safe to log (never the response body)."""


class _Deadline:
    """The end of one fetch: when it comes, the fetch's connection is hung up.

    A socket timeout bounds each read only, so a server that sends one byte of its
    headers every 0.1 s would hold a fetch for as long as it likes. A timer hangs
    the connection up at the deadline instead, wherever the fetch is waiting
    (connecting, reading the headers or the body), and the fetch then fails. The
    name lookup before the connect is waited for until the deadline only
    (:func:`_resolve`).
    """

    def __init__(self, seconds: float) -> None:
        self._end = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        """Seconds left (a small positive number once none are: a socket timeout must be positive)."""
        return max(self._end - time.monotonic(), 0.001)

    def over(self) -> bool:
        """Whether the deadline has come (even if its timer has not run yet)."""
        return self.expired or time.monotonic() >= self._end

    def watch(self, sock: socket.socket) -> None:
        """Hang ``sock`` up at the deadline (at once if it has passed)."""
        with self._lock:
            self._sockets.append(sock)
            if not self.expired:
                return
        _hang_up(sock)

    def cancel(self) -> None:
        """The fetch ended: stop the timer."""
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _hang_up(sock)


def _hang_up(sock: socket.socket) -> None:
    # Shut the connection down, not close it: the fetch's thread still owns the
    # socket object, and its blocked read returns (end of stream) at once. The
    # plain socket's shutdown, for a TLS socket too: no TLS state is touched.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


_AddressInfo = tuple[socket.AddressFamily, socket.SocketKind, int, str, tuple[Any, ...]]


class _Lookup:
    """One ``getaddrinfo`` call on a daemon thread of its own; fetches wait for it up to their deadline."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.addresses: Sequence[_AddressInfo] = ()
        self.error: Exception | None = None


# The lookups under way, by (host, port). A fetch whose deadline came during a lookup
# abandons it (it cannot be interrupted, and is never joined); a later fetch of the same
# host waits for that lookup rather than start another, so a resolver that hangs holds
# at most one thread per host, however many fetches give up on it.
_lookups: dict[tuple[str, int], _Lookup] = {}
_lookups_lock = threading.Lock()


def _run_lookup(key: tuple[str, int], lookup: _Lookup) -> None:
    host, port = key
    try:
        lookup.addresses = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
    except Exception as exc:  # handed to the fetches waiting for it
        lookup.error = exc
    finally:
        with _lookups_lock:
            if _lookups.get(key) is lookup:
                del _lookups[key]
        lookup.done.set()


def _resolve(host: str, port: int, deadline: _Deadline) -> Sequence[_AddressInfo]:
    """The addresses of ``host`` (TCP); ``TimeoutError`` if the resolver has not answered by the deadline."""
    key = (host, port)
    with _lookups_lock:
        lookup = _lookups.get(key)
        if lookup is None:
            lookup = _lookups[key] = _Lookup()
            threading.Thread(
                target=_run_lookup, args=(key, lookup), name="mrtr-state-jwks-lookup", daemon=True
            ).start()
    if not lookup.done.wait(deadline.remaining()):
        raise TimeoutError("the host name was not resolved in time")
    if lookup.error is not None:
        raise lookup.error.with_traceback(None)
    return lookup.addresses


def _connect(
    addresses: Sequence[_AddressInfo], deadline: _Deadline, source_address: tuple[str, int] | None
) -> socket.socket:
    """A socket connected to the first of ``addresses`` that accepts, within the deadline.

    As ``socket.create_connection`` does: each address in turn, the first error
    raised if none accepts.
    """
    first_error: OSError | None = None
    for family, kind, proto, _, sockaddr in addresses:
        if deadline.over():
            break
        sock: socket.socket | None = None
        try:
            sock = socket.socket(family, kind, proto)
            sock.settimeout(deadline.remaining())
            if source_address is not None:
                sock.bind(source_address)
            sock.connect(sockaddr)
        except OSError as exc:
            if sock is not None:
                sock.close()
            first_error = first_error or exc
            continue
        # A TLS handshake that follows takes the socket's timeout for the whole
        # handshake: give it only what is left.
        sock.settimeout(deadline.remaining())
        return sock
    if first_error is not None:
        raise first_error
    if deadline.over():
        raise TimeoutError("no address answered in time")
    raise OSError("the host name has no address")


class _WatchedConnection(http.client.HTTPConnection):
    """An HTTP(S) connection that connects within a :class:`_Deadline`, which then watches its socket."""

    def __init__(self, *args: Any, deadline: _Deadline, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline
        self._create_connection = self._open_socket

    def _open_socket(
        self, address: tuple[str, int], timeout: float, source_address: tuple[str, int] | None = None
    ) -> socket.socket:
        # Resolving the name, the connect, and a TLS handshake get only what is left
        # of the deadline. Not socket.create_connection: its getaddrinfo takes no
        # timeout, and a hung resolver would hold the fetch past the deadline. The
        # address is only connected to: TLS still sends and checks the URL's host
        # name (http.client passes self.host as server_hostname).
        del timeout
        host, port = address
        return _connect(_resolve(host, port, self._deadline), self._deadline, source_address)

    def connect(self) -> None:
        """Connect (and, over TLS, shake hands), then have the deadline watch the socket."""
        super().connect()
        self._deadline.watch(self.sock)


class _HTTPConnection(_WatchedConnection):
    """Plain HTTP (loopback only), within a deadline."""


class _HTTPSConnection(_WatchedConnection, http.client.HTTPSConnection):
    """HTTPS within a deadline."""


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection: Any = _HTTPConnection  # its constructor also takes the deadline
        return self.do_open(connection, req, deadline=self._deadline)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, context: ssl.SSLContext, deadline: _Deadline) -> None:
        super().__init__(context=context)
        self._tls = context
        self._deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection: Any = _HTTPSConnection
        return self.do_open(connection, req, context=self._tls, deadline=self._deadline)


def _download(
    url: str, *, timeout: float, max_bytes: int, context: ssl.SSLContext | None
) -> tuple[bytes, str]:
    """GET ``url``: the body (at most ``max_bytes``) and its media type, within ``timeout`` seconds.

    The deadline covers the whole fetch: resolving the host name, connecting, the
    TLS handshake, the headers and the body.
    """
    deadline = _Deadline(timeout)
    try:
        body, media_type = _get(url, timeout=timeout, max_bytes=max_bytes, context=context, deadline=deadline)
    except _FetchError:
        if deadline.over():
            raise _FetchError(f"no answer within {timeout:g} s") from None
        raise
    finally:
        deadline.cancel()
    if deadline.expired:  # what was read before the hang-up is not trusted
        raise _FetchError(f"no answer within {timeout:g} s")
    return body, media_type


def _get(
    url: str, *, timeout: float, max_bytes: int, context: ssl.SSLContext | None, deadline: _Deadline
) -> tuple[bytes, str]:
    # The default context verifies the server's certificate and host name.
    tls = context if context is not None else ssl.create_default_context()
    handlers: list[urllib.request.BaseHandler] = [
        _NoRedirect(),
        _HTTPHandler(deadline),
        _HTTPSHandler(tls, deadline),
    ]
    if urllib.parse.urlsplit(url).scheme == "http":  # loopback only: never through a proxy
        handlers.append(urllib.request.ProxyHandler({}))
    opener = urllib.request.build_opener(*handlers)
    request = urllib.request.Request(url, headers={"Accept": _ACCEPT})  # noqa: S310  (scheme checked)
    try:
        with opener.open(request, timeout=timeout) as response:
            media_type = response.headers.get_content_type()
            length = response.headers.get("Content-Length")
            if length is not None and length.isdigit() and int(length) > max_bytes:
                raise _FetchError(f"the answer is {int(length)} bytes, over the limit of {max_bytes}")
            body = bytearray()
            while True:
                chunk = response.read1(16384)
                if not chunk:
                    break
                body += chunk
                if len(body) > max_bytes:
                    raise _FetchError(f"the answer is over the limit of {max_bytes} bytes")
            return bytes(body), media_type
    except urllib.error.HTTPError as exc:
        exc.close()
        hint = " (redirects are not followed: configure the final URL)" if 300 <= exc.code < 400 else ""
        raise _FetchError(f"the server answered HTTP {exc.code}{hint}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        text = reason.strerror if isinstance(reason, OSError) and reason.strerror else str(reason)
        raise _FetchError(f"cannot connect: {text}") from None
    except TimeoutError:
        raise _FetchError(f"no answer within {timeout:g} s") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise _FetchError(f"the connection failed ({type(exc).__name__})") from None


def _parse(body: bytes, media_type: str) -> Keyring:
    """The keys of a fetched JWKS: only Ed25519 public keys, every local rule applied."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise KeyringError(f"the answer ({media_type}) is not UTF-8 text") from None
    if not text.lstrip().startswith("{"):
        raise KeyringError(f"the answer ({media_type}) is not a JSON object")
    ring = Keyring.from_jwks(text)
    for key in ring:
        if key.alg != "EdDSA":
            raise KeyringError(
                f"the JWKS holds a secret key (alg {key.alg}): a published JWKS must hold Ed25519 public "
                "keys only (replace the secret, it is no longer one)"
            )
        if key.can_sign:
            raise KeyringError(
                "the JWKS holds an Ed25519 private key ('d'): a published JWKS must hold public keys only "
                "(replace the key, it is no longer private)"
            )
    return ring


class RemoteJWKS:
    """A key source that reads a published JWKS of Ed25519 public keys from a URL.

    Make one with :meth:`load` (or ``await`` :meth:`load_async`), which fetches
    the JWKS once and raises :class:`KeyringError` if it cannot. Give it to
    :class:`~mrtr_state.StateSealer` as the ring; it can only verify.

    Args:
        url: ``https://...`` (or ``http://`` on a loopback address).
        refresh_interval: seconds between scheduled fetches (background thread).
        cooldown: the fewest seconds between fetches caused by an unknown ``kid``,
            and before a retry after a failed fetch (at most ``refresh_interval``).
        timeout: the longest a whole fetch may take (name lookup, connect, TLS, headers,
            body), in seconds.
        max_bytes: the largest JWKS accepted.
        clock: monotonic seconds, for the schedule and the cooldown.
        ssl_context: for ``https://``, e.g. to trust a private CA; by default
            the system's trusted CAs, with the host name checked.
        metrics: counts every fetch as a ``key_refresh`` event
            (:mod:`mrtr_state.metrics`; ``source`` ``remote_jwks``).
    """

    def __init__(
        self,
        url: str,
        *,
        refresh_interval: float = DEFAULT_REFRESH_INTERVAL,
        cooldown: float = DEFAULT_COOLDOWN,
        timeout: float = DEFAULT_TIMEOUT,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
        ssl_context: ssl.SSLContext | None = None,
        metrics: StateMetrics | None = None,
    ) -> None:
        self._url = check_jwks_url(url)
        if ssl_context is not None and not isinstance(ssl_context, ssl.SSLContext):
            raise TypeError("ssl_context must be an ssl.SSLContext")
        self._ssl_context = ssl_context
        for name, value in (
            ("refresh_interval", refresh_interval),
            ("cooldown", cooldown),
            ("timeout", timeout),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1024:
            raise ValueError(f"max_bytes must be an int of at least 1024, got {max_bytes!r}")
        if not callable(clock):
            raise TypeError("clock must be a callable")
        self._refresh_interval = float(refresh_interval)
        self._cooldown = float(min(cooldown, refresh_interval))
        self._timeout = float(timeout)
        self._max_bytes = max_bytes
        self._clock = clock
        self._metrics = metrics
        self._lock = threading.Lock()
        self._ring: Keyring | None = None
        self._fetched_at: float | None = None
        self._last_attempt = float("-inf")
        self._next_due = float("-inf")
        self._inflight: concurrent.futures.Future[bool] | None = None
        self._closed = False
        self._last_error: str | None = None

    @classmethod
    def load(
        cls,
        url: str,
        *,
        refresh_interval: float = DEFAULT_REFRESH_INTERVAL,
        cooldown: float = DEFAULT_COOLDOWN,
        timeout: float = DEFAULT_TIMEOUT,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
        ssl_context: ssl.SSLContext | None = None,
        metrics: StateMetrics | None = None,
    ) -> RemoteJWKS:
        """Make a :class:`RemoteJWKS` (the constructor's options) and fetch the JWKS once.

        Raises:
            KeyringError: the URL is not allowed, or the first fetch failed or
                returned a JWKS that is refused (the message says why).
        """
        source = cls(
            url,
            refresh_interval=refresh_interval,
            cooldown=cooldown,
            timeout=timeout,
            max_bytes=max_bytes,
            clock=clock,
            ssl_context=ssl_context,
            metrics=metrics,
        )
        source.refresh()
        return source

    @classmethod
    async def load_async(
        cls,
        url: str,
        *,
        refresh_interval: float = DEFAULT_REFRESH_INTERVAL,
        cooldown: float = DEFAULT_COOLDOWN,
        timeout: float = DEFAULT_TIMEOUT,
        max_bytes: int = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
        ssl_context: ssl.SSLContext | None = None,
        metrics: StateMetrics | None = None,
    ) -> RemoteJWKS:
        """:meth:`load` without blocking the event loop (the fetch runs in a thread)."""
        source = cls(
            url,
            refresh_interval=refresh_interval,
            cooldown=cooldown,
            timeout=timeout,
            max_bytes=max_bytes,
            clock=clock,
            ssl_context=ssl_context,
            metrics=metrics,
        )
        await source.refresh_async()
        return source

    def __repr__(self) -> str:
        count = 0 if self._ring is None else len(self._ring)
        return f"RemoteJWKS(url={self._url!r}, keys={count})"

    @property
    def url(self) -> str:
        """Where the JWKS is read from."""
        return self._url

    @property
    def keyring(self) -> Keyring:
        """The keys of the last good fetch."""
        ring = self._ring
        if ring is None:
            raise KeyringError(f"no JWKS has been fetched from {self._url} yet; use RemoteJWKS.load()")
        return ring

    @property
    def keys(self) -> tuple[Key, ...]:
        """The current keys; starts a background fetch when one is due, never waits for it."""
        if not self._closed and self._clock() >= self._next_due:
            self._start()
        return self.keyring.keys

    @property
    def last_error(self) -> str | None:
        """Why the last fetch failed (or a refresh gave up waiting for it), or ``None`` if it succeeded."""
        return self._last_error

    def close(self) -> None:
        """Stop scheduled fetches (a fetch under way finishes on its own)."""
        self._closed = True

    def refresh(self) -> bool:
        """Fetch the JWKS now, whatever the schedule; ``True`` if the keys changed.

        Waits at most ``timeout`` seconds. Raises :class:`KeyringError` if the
        fetch fails or its JWKS is refused; the last good keys stay in use.
        """
        future = self._start(force=True)
        return self._wait(future)

    async def refresh_async(self) -> bool:
        """:meth:`refresh` without blocking the event loop."""
        future = self._start(force=True)
        return await asyncio.to_thread(self._wait, future)

    def refresh_for_unknown_key(self) -> bool:
        """Fetch now for a token whose ``kid`` is not held, unless the cooldown forbids it.

        ``True`` if the keys changed. Never raises: a failed fetch is logged and
        the last good keys stay. Callers that arrive while a fetch is under way
        wait for that one (at most ``timeout`` seconds) instead of starting another.
        """
        future = self._start(unknown_key=True)
        if future is None:
            return False
        try:
            return self._wait(future)
        except KeyringError:
            return False

    async def refresh_for_unknown_key_async(self) -> bool:
        """:meth:`refresh_for_unknown_key` without blocking the event loop."""
        return await asyncio.to_thread(self.refresh_for_unknown_key)

    def _wait(self, future: concurrent.futures.Future[bool] | None) -> bool:
        if future is None:  # only when closed and not forced; nothing to wait for
            return False
        try:
            return future.result(timeout=self._timeout)
        except concurrent.futures.TimeoutError:
            message = f"could not fetch the JWKS from {self._url}: no answer within {self._timeout:g} s"
            # The fetch ends by itself at its own deadline; until then this is the news.
            with self._lock:
                self._last_error = message
            raise KeyringError(message) from None

    def _start(
        self, *, force: bool = False, unknown_key: bool = False
    ) -> concurrent.futures.Future[bool] | None:
        """The fetch under way, or a new one if allowed now; ``None`` if not allowed."""
        with self._lock:
            if self._inflight is not None:
                return self._inflight
            now = self._clock()
            if not force:
                if unknown_key and now - self._last_attempt < self._cooldown:
                    return None
                if not unknown_key and (self._closed or now < self._next_due):
                    return None
            future: concurrent.futures.Future[bool] = concurrent.futures.Future()
            self._inflight = future
            self._last_attempt = now
            # Until this fetch ends, no other scheduled one starts.
            self._next_due = now + self._refresh_interval
        threading.Thread(target=self._fetch, args=(future,), name="mrtr-state-jwks", daemon=True).start()
        return future

    def _fetch(self, future: concurrent.futures.Future[bool]) -> None:
        try:
            body, media_type = _download(
                self._url, timeout=self._timeout, max_bytes=self._max_bytes, context=self._ssl_context
            )
            ring = _parse(body, media_type)
        except (_FetchError, KeyringError) as exc:
            self._failed(future, str(exc))
            return
        except Exception as exc:  # never let the thread die silently
            self._failed(future, f"unexpected {type(exc).__name__}")
            return
        old = self._ring
        changed = old is None or [k.public_jwk() for k in old] != [k.public_jwk() for k in ring]
        with self._lock:
            if changed:
                self._ring = ring
            self._fetched_at = self._clock()
            self._next_due = self._fetched_at + self._refresh_interval
            self._last_error = None
            self._inflight = None
        if changed:
            logger.info(
                "the JWKS from %s %s: %d keys, kid %s",
                self._url,
                "loaded" if old is None else "changed",
                len(ring),
                ", ".join(key.kid for key in ring),
            )
        record(
            self._metrics, "key_refresh", source="remote_jwks", outcome="updated" if changed else "unchanged"
        )
        future.set_result(changed)

    def _failed(self, future: concurrent.futures.Future[bool], reason: str) -> None:
        message = f"could not fetch the JWKS from {self._url}: {reason}"
        with self._lock:
            self._last_error = message
            # Retry after the cooldown, not a whole interval later.
            self._next_due = self._clock() + self._cooldown
            self._inflight = None
            ring, fetched_at = self._ring, self._fetched_at
        if ring is not None and fetched_at is not None:
            logger.warning(
                "%s; keeping the %d keys fetched %.0f s ago", message, len(ring), self._clock() - fetched_at
            )
        else:
            logger.warning("%s", message)
        record(self._metrics, "key_refresh", source="remote_jwks", outcome="failed")
        future.set_exception(KeyringError(message))
