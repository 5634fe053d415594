"""Single use across replicas: replay stores kept in Redis.

Every replica of a stateless fleet opens tokens against the same Redis, so a token
redeemed on one is refused as ``replayed`` on all. One redemption is one atomic
command::

    SET <prefix><sha256(iss "#" jti)> 1 NX PX <retention in ms>

``NX`` makes the first writer win and every later one see the key; ``PX`` makes
Redis forget the key once the token can no longer be accepted, so the keyspace
never grows beyond the tokens redeemed within one lifetime.

Clocks: the retention is sent as a duration (``PX``), computed from the store's
``clock`` (give it the sealer's clock), not as an absolute time (``PXAT``).
Whether a token is still accepted is decided by the verifying server's clock, so
that clock must also measure how long its id is remembered; an absolute time
would be measured by Redis's clock instead, and a Redis clock running ahead would
forget ids early, while servers still accept their tokens. A duration is immune
to any offset of the Redis clock.

Keys: the issuer-scoped id is hashed (SHA-256, base64url): every key has the same
length (the prefix plus 43 characters) however long the issuer is, and the
keyspace shows no issuer or token id. The hash keeps keys distinct because
:func:`~mrtr_state.replay.replay_key` is injective.

Failures: any error of the client (unreachable, timeout, authentication, a
read-only replica, out of memory) raises :class:`~mrtr_state.ReplayStoreError`,
which the sealer refuses as ``store_unavailable``; never an acceptance. Messages
name the failure's class (and Redis's error code), never the URL, host or
password.

Needs the ``redis`` extra: ``pip install 'mrtr-state[redis]'``.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Callable
from types import TracebackType
from typing import Final

try:
    import redis
    import redis.asyncio
    import redis.asyncio.cluster
    import redis.asyncio.retry
    import redis.backoff
    import redis.cluster
    import redis.retry
except ImportError as exc:  # only without the extra; tested in a subprocess
    raise ImportError(
        "mrtr_state.replay_redis needs the Redis client: pip install 'mrtr-state[redis]'"
    ) from exc

from mrtr_state import _b64
from mrtr_state.replay import ReplayStoreError

__all__ = ["DEFAULT_PREFIX", "DEFAULT_TIMEOUT", "AsyncRedisReplayStore", "RedisReplayStore"]

#: The default prefix of the store's keys (one per application sharing a Redis).
DEFAULT_PREFIX: Final = "mrtr-state:jti:"
#: The default connect and command timeout of ``from_url`` clients, in seconds.
DEFAULT_TIMEOUT: Final = 1.0

_ERROR_CODE: Final = re.compile(r"[A-Z][A-Z_]{1,31}")

#: The clients :class:`RedisReplayStore` takes.
SyncClient = redis.Redis | redis.cluster.RedisCluster
#: The clients :class:`AsyncRedisReplayStore` takes.
AsyncClient = redis.asyncio.Redis | redis.asyncio.cluster.RedisCluster


def _check_options(prefix: object, clock: object) -> None:
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a string, not {type(prefix).__name__}")
    if not callable(clock):
        raise TypeError("clock must be a callable")


def _check_timeout(timeout: object) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds, not {type(timeout).__name__}")
    if not 0 < timeout <= 60:
        raise ValueError(f"timeout must be more than 0 and at most 60 seconds, got {timeout}")
    return float(timeout)


def _check_url(url: object) -> str:
    # The URL may hold a password: no message here or below ever shows it.
    if not isinstance(url, str):
        raise TypeError(f"url must be a string, not {type(url).__name__}")
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError("the Redis URL must start with redis://, rediss:// or unix://")
    return url


def _bad_url() -> ValueError:
    return ValueError("the Redis URL is not valid (its text is not shown: it may hold a password)")


def _hashed(prefix: str, key: str) -> str:
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
    return prefix + _b64.encode(digest)


def _retention_ms(expires_at: int, now: float) -> int:
    """The time left until ``expires_at``, in whole milliseconds, rounded up."""
    ms = math.ceil((expires_at - now) * 1000)
    if ms < 1:
        raise ReplayStoreError(
            "the redemption's retention has already ended by the store's clock; "
            "give the store the sealer's clock"
        )
    return ms


def _verdict(reply: object) -> bool:
    """``SET ... NX`` answers OK (redis-py: ``True``) when it wrote, nil when the key existed."""
    if reply is True:
        return True
    if reply is None:
        return False
    raise ReplayStoreError(f"Redis answered SET NX with an unexpected {type(reply).__name__}")


def _error_code(exc: Exception) -> str:
    """`` CODE`` of an error reply (``ERR``, ``MISCONF``, ``BUSY``...), or ``""``.

    Recent redis-py keeps the code in ``status_code`` when it strips it from the
    message; otherwise a reply it has no class for keeps it as its first word.
    """
    status = getattr(exc, "status_code", None)
    if not isinstance(status, str):
        message = exc.args[0] if exc.args else None
        status = message.split(" ", 1)[0] if isinstance(message, str) else ""
    return f" {status}" if _ERROR_CODE.fullmatch(status) else ""


def _failure(exc: Exception) -> ReplayStoreError:
    """A message naming what failed: the exception's class and Redis's error code.

    The exception's own text is not used: a connection error names the host and
    port, and no part of a client's configuration belongs in a refusal.
    """
    name = type(exc).__name__
    if isinstance(exc, redis.exceptions.ResponseError):
        # redis-py names known error replies by class (ReadOnlyError, OutOfMemoryError);
        # for the others the class says little, so add Redis's code (ERR, MISCONF, ...).
        code = ""
        if type(exc) is redis.exceptions.ResponseError:
            code = _error_code(exc)
        return ReplayStoreError(f"Redis refused the redemption ({name}{code})")
    if isinstance(exc, redis.exceptions.RedisError):
        return ReplayStoreError(f"Redis could not record the redemption ({name})")
    return ReplayStoreError(f"the Redis client raised {name}")


class RedisReplayStore:
    """A :class:`~mrtr_state.ReplayStore` shared by every replica, kept in Redis.

    Args:
        client: a ``redis.Redis`` (or ``redis.cluster.RedisCluster``) client.
            Give it timeouts: without them a stalled Redis stalls the request.
            :meth:`from_url` builds one with sensible ones.
        prefix: put before every key (default ``"mrtr-state:jti:"``); give each
            application sharing one Redis its own.
        clock: returns the current time in seconds since the epoch; give it the
            sealer's clock (it measures how long an id is kept).

    Thread-safe as the client is (``redis.Redis`` pools its connections).
    """

    __slots__ = ("_client", "_clock", "_owns_client", "_prefix")

    def __init__(
        self,
        client: SyncClient,
        *,
        prefix: str = DEFAULT_PREFIX,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if isinstance(client, (redis.asyncio.Redis, redis.asyncio.cluster.RedisCluster)):
            raise TypeError("this is an asyncio client: use AsyncRedisReplayStore")
        if not isinstance(client, (redis.Redis, redis.cluster.RedisCluster)):
            raise TypeError(f"client must be a redis.Redis client, not {type(client).__name__}")
        _check_options(prefix, clock)
        self._client = client
        self._prefix = prefix
        self._clock = clock
        self._owns_client = False

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        clock: Callable[[], float] = time.time,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> RedisReplayStore:
        """A store with its own client for ``url`` (``redis://``, ``rediss://`` or ``unix://``).

        The client connects lazily, times out after ``timeout`` seconds (connect
        and command) and does not retry: a redemption Redis did not answer is
        refused at once instead of being repeated behind the server's back.
        :meth:`close` closes it.
        """
        url = _check_url(url)
        timeout = _check_timeout(timeout)
        try:
            client = redis.Redis.from_url(
                url,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                retry=redis.retry.Retry(redis.backoff.NoBackoff(), 0),
            )
        except (ValueError, TypeError):
            raise _bad_url() from None
        store = cls(client, prefix=prefix, clock=clock)
        store._owns_client = True
        return store

    def __repr__(self) -> str:
        # Never the client: its repr names the host, and its pool holds the password.
        return f"RedisReplayStore(prefix={self._prefix!r})"

    def __enter__(self) -> RedisReplayStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def prefix(self) -> str:
        """The prefix of every key this store writes."""
        return self._prefix

    def redis_key(self, key: str) -> str:
        """The Redis key under which the redemption of ``key`` is recorded."""
        return _hashed(self._prefix, key)

    def redeem(self, key: str, *, expires_at: int) -> bool:
        """``SET NX PX``: ``True`` if this call recorded ``key``, ``False`` if it was there.

        Raises:
            ReplayStoreError: Redis did not answer, answered with an error, or the
                retention has already ended by the store's clock.
        """
        ms = _retention_ms(expires_at, self._clock())
        try:
            reply = self._client.set(_hashed(self._prefix, key), 1, nx=True, px=ms)
        except Exception as exc:
            raise _failure(exc) from None
        return _verdict(reply)

    def close(self) -> None:
        """Close the client if :meth:`from_url` made it; a client passed in stays open."""
        if self._owns_client:
            self._client.close()


class AsyncRedisReplayStore:
    """:class:`RedisReplayStore` for async servers: an :class:`~mrtr_state.AsyncReplayStore`.

    Redeem through ``await sealer.open_async(..., consume=True)``. Args as for
    :class:`RedisReplayStore`, with a ``redis.asyncio.Redis`` (or
    ``redis.asyncio.cluster.RedisCluster``) client. Use it from one event loop:
    a ``redis.asyncio`` client belongs to the loop it first ran in.
    """

    __slots__ = ("_client", "_clock", "_owns_client", "_prefix")

    def __init__(
        self,
        client: AsyncClient,
        *,
        prefix: str = DEFAULT_PREFIX,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not isinstance(client, (redis.asyncio.Redis, redis.asyncio.cluster.RedisCluster)):
            raise TypeError(
                f"client must be a redis.asyncio.Redis client, not {type(client).__name__}"
                + (" (use RedisReplayStore for it)" if isinstance(client, redis.Redis) else "")
            )
        _check_options(prefix, clock)
        self._client = client
        self._prefix = prefix
        self._clock = clock
        self._owns_client = False

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        clock: Callable[[], float] = time.time,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> AsyncRedisReplayStore:
        """A store with its own ``redis.asyncio`` client; as :meth:`RedisReplayStore.from_url`.

        :meth:`aclose` closes it.
        """
        url = _check_url(url)
        timeout = _check_timeout(timeout)
        try:
            client = redis.asyncio.Redis.from_url(
                url,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                retry=redis.asyncio.retry.Retry(redis.backoff.NoBackoff(), 0),
            )
        except (ValueError, TypeError):
            raise _bad_url() from None
        store = cls(client, prefix=prefix, clock=clock)
        store._owns_client = True
        return store

    def __repr__(self) -> str:
        return f"AsyncRedisReplayStore(prefix={self._prefix!r})"

    async def __aenter__(self) -> AsyncRedisReplayStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def prefix(self) -> str:
        """The prefix of every key this store writes."""
        return self._prefix

    def redis_key(self, key: str) -> str:
        """The Redis key under which the redemption of ``key`` is recorded."""
        return _hashed(self._prefix, key)

    async def redeem(self, key: str, *, expires_at: int) -> bool:
        """``SET NX PX``, awaited; as :meth:`RedisReplayStore.redeem`.

        Cancelling the call may leave the id recorded (Redis may have run the
        command): the token then counts as redeemed, which fails closed.
        """
        ms = _retention_ms(expires_at, self._clock())
        try:
            reply = await self._client.set(_hashed(self._prefix, key), 1, nx=True, px=ms)
        except Exception as exc:
            raise _failure(exc) from None
        return _verdict(reply)

    async def aclose(self) -> None:
        """Close the client if :meth:`from_url` made it; a client passed in stays open."""
        if self._owns_client:
            await self._client.aclose()
