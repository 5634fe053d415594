"""Single use across replicas: replay stores kept in Redis.

Every replica of a stateless fleet opens tokens against the same Redis, so a token
redeemed on one is refused as ``replayed`` on all. One redemption is one atomic
command::

    SET <prefix><sha256(iss "#" jti)> 1 NX PX <retention in ms>

``NX`` makes the first writer win and every later one see the key; ``PX`` makes
Redis forget the key once the token can no longer be accepted, so the keyspace
never grows beyond the tokens redeemed within one lifetime.

Deployments: a single Redis (:meth:`RedisReplayStore.from_url`), a primary with
replicas behind Sentinel (:meth:`RedisReplayStore.from_sentinel`) or a Redis
Cluster (:meth:`RedisReplayStore.from_cluster`); each builder gives its client the
same bounded timeouts and no retries. Replication is asynchronous: a primary that
fails right after the ``SET`` may lose it. The durability option
(``wait_replicas=N``) sends ``WAIT N <ms>`` on the same connection right after the
``SET`` and accepts only when ``N`` replicas acknowledged the write; otherwise the
redemption is refused with ``store_unavailable`` (fail closed).

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
read-only replica, out of memory, too few replica acknowledgements) raises
:class:`~mrtr_state.ReplayStoreError`, which the sealer refuses as
``store_unavailable``; never an acceptance. Messages name the failure's class
(and Redis's error code), never the URL, host or password.

Needs the ``redis`` extra: ``pip install 'mrtr-state[redis]'``.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, ClassVar, Final, NamedTuple, TypeVar

try:
    import redis
    import redis.asyncio
    import redis.asyncio.cluster
    import redis.asyncio.retry
    import redis.asyncio.sentinel
    import redis.backoff
    import redis.cluster
    import redis.connection
    import redis.retry
    import redis.sentinel
except ImportError as exc:  # only without the extra; tested in a subprocess
    raise ImportError(
        "mrtr_state.replay.replay_redis needs the Redis client: pip install 'mrtr-state[redis]'"
    ) from exc

from mrtr_state.replay.replay import ReplayStoreError
from mrtr_state.token import _b64

__all__ = [
    "DEFAULT_PREFIX",
    "DEFAULT_TIMEOUT",
    "DEFAULT_WAIT_TIMEOUT",
    "AsyncRedisReplayStore",
    "RedisReplayStore",
]

#: The default prefix of the store's keys (one per application sharing a Redis).
DEFAULT_PREFIX: Final = "mrtr-state:jti:"
#: The default connect and command timeout of the clients the builders make, in seconds.
DEFAULT_TIMEOUT: Final = 1.0
#: How long, by default, ``WAIT`` waits for replicas with the durability option, in seconds.
DEFAULT_WAIT_TIMEOUT: Final = 0.5

# redis-py leaves this untyped.
_PARSE_URL: Final[Any] = redis.connection.parse_url

_ERROR_CODE: Final = re.compile(r"[A-Z][A-Z_]{1,31}")

#: The clients :class:`RedisReplayStore` takes.
SyncClient = redis.Redis | redis.cluster.RedisCluster
#: The clients :class:`AsyncRedisReplayStore` takes.
AsyncClient = redis.asyncio.Redis | redis.asyncio.cluster.RedisCluster

#: Errors after which a cluster client's map of slots to nodes may be stale.
_TOPOLOGY_ERRORS: Final = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.MovedError,
    redis.exceptions.AskError,
    redis.exceptions.TryAgainError,
    redis.exceptions.ClusterDownError,
    redis.exceptions.SlotNotCoveredError,
)


# ---------------------------------------------------------------- checks of the options


def _check_options(prefix: object, clock: object) -> None:
    if not isinstance(prefix, str):
        raise TypeError(f"prefix must be a string, not {type(prefix).__name__}")
    if not callable(clock):
        raise TypeError("clock must be a callable")


def _check_timeout(timeout: object, name: str = "timeout") -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, not {type(timeout).__name__}")
    if not 0 < timeout <= 60:
        raise ValueError(f"{name} must be more than 0 and at most 60 seconds, got {timeout}")
    return float(timeout)


def _check_durability(wait_replicas: object, wait_timeout: object) -> tuple[int, int]:
    """``(replicas, WAIT timeout in ms)``; ``replicas`` 0 turns the option off."""
    if type(wait_replicas) is not int:
        raise TypeError(f"wait_replicas must be an int, not {type(wait_replicas).__name__}")
    if not 0 <= wait_replicas <= 100:
        raise ValueError(f"wait_replicas must be from 0 to 100, got {wait_replicas}")
    seconds = _check_timeout(wait_timeout, "wait_timeout")
    # WAIT 0 would mean "wait forever": never less than one millisecond.
    return wait_replicas, max(1, round(seconds * 1000))


def _builder_timeout(timeout: object, wait_replicas: object, wait_timeout: object) -> float:
    """The builders' ``timeout``; with ``wait_replicas`` it must leave room for the ``WAIT`` within it."""
    seconds = _check_timeout(timeout)
    if wait_replicas and _check_timeout(wait_timeout, "wait_timeout") >= seconds:
        raise ValueError(
            f"wait_timeout must be less than timeout ({seconds} s): the client gives up on a "
            "reply after timeout, and WAIT's own answer has to arrive before that"
        )
    return seconds


def _check_url(url: object) -> str:
    # The URL may hold a password: no message here or below ever shows it.
    if not isinstance(url, str):
        raise TypeError(f"url must be a string, not {type(url).__name__}")
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError("the Redis URL must start with redis://, rediss:// or unix://")
    return url


def _check_sentinels(sentinels: object, service_name: object) -> list[tuple[str, int]]:
    if not isinstance(service_name, str) or not service_name:
        raise TypeError("service_name must be a non-empty string (the name the Sentinels monitor)")
    if isinstance(sentinels, (str, bytes)) or not isinstance(sentinels, Sequence) or not sentinels:
        raise TypeError("sentinels must be a non-empty sequence of (host, port) pairs")
    checked: list[tuple[str, int]] = []
    for entry in sentinels:
        if (
            not isinstance(entry, tuple)
            or len(entry) != 2
            or not isinstance(entry[0], str)
            or type(entry[1]) is not int
            or not 0 < entry[1] < 65536
        ):
            raise TypeError("each Sentinel must be a (host, port) pair: a string and a port number")
        checked.append((entry[0], entry[1]))
    return checked


def _check_cluster_urls(url: object) -> tuple[str, list[tuple[str, int]]]:
    """The first of ``from_cluster``'s URLs, and the host and port of every other one.

    The client logs in to every node as the first URL says, so the others may
    differ from it in their host and port only: no node is then reached with
    other credentials, or without TLS, by mistake.
    """
    urls = [url] if isinstance(url, str) else url
    if isinstance(urls, bytes) or not isinstance(urls, Sequence) or not urls:
        raise TypeError("url must be a Redis URL or a non-empty sequence of them (one per start-up node)")
    first, *others = (_check_url(each) for each in urls)
    if first.startswith("unix://"):
        raise ValueError("a Redis Cluster is reached over redis:// or rediss://, not unix://")
    try:
        common = _without_address(_PARSE_URL(first))
        parsed: list[dict[str, Any]] = [_PARSE_URL(other) for other in others]
    except (ValueError, TypeError):
        raise _bad_url() from None
    nodes: list[tuple[str, int]] = []
    for options in parsed:
        if not options.get("host") or _without_address(options) != common:
            raise ValueError(
                "every Redis Cluster URL must be the first one with another host and port (same scheme, "
                "user name, password and options; their text is not shown: it may hold a password)"
            )
        nodes.append((options["host"], options.get("port", 6379)))
    return first, nodes


def _without_address(options: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in options.items() if name not in ("host", "port")}


def _bad_url() -> ValueError:
    return ValueError("the Redis URL is not valid (its text is not shown: it may hold a password)")


def _no_retry() -> redis.retry.Retry:
    return redis.retry.Retry(redis.backoff.NoBackoff(), 0)


def _async_no_retry() -> redis.asyncio.retry.Retry:
    return redis.asyncio.retry.Retry(redis.backoff.NoBackoff(), 0)


class _ClientKind(NamedTuple):
    """The redis-py classes the builders (``from_*``) make clients of: blocking, or asyncio.

    The builders are one piece of code for both stores; this table is all that
    differs between them. (redis-py leaves the Sentinel and node classes untyped.)
    """

    redis: Any
    cluster: Any
    cluster_node: Any
    sentinel: Any
    no_retry: Callable[[], object]


_BLOCKING: Final = _ClientKind(
    redis=redis.Redis,
    cluster=redis.cluster.RedisCluster,
    cluster_node=redis.cluster.ClusterNode,
    sentinel=redis.sentinel.Sentinel,
    no_retry=_no_retry,
)
_ASYNCIO: Final = _ClientKind(
    redis=redis.asyncio.Redis,
    cluster=redis.asyncio.cluster.RedisCluster,
    cluster_node=redis.asyncio.cluster.ClusterNode,
    sentinel=redis.asyncio.sentinel.Sentinel,
    no_retry=_async_no_retry,
)


def _client_options(timeout: float) -> dict[str, Any]:
    """What every client the builders make gets: bounded waits and no retries.

    A retried ``SET NX`` whose first attempt was written would turn the first
    redemption into ``replayed``, and retries stretch the time to a refusal.
    """
    return {"socket_timeout": timeout, "socket_connect_timeout": timeout}


def _username(username: str | None) -> dict[str, Any]:
    if username is None:
        return {}
    if not isinstance(username, str):
        raise TypeError(f"username must be a string, not {type(username).__name__}")
    return {"username": username}


def _sentinel_options(timeout: float, password: str | None, retry: object) -> dict[str, Any]:
    options: dict[str, Any] = {**_client_options(timeout), "retry": retry}
    if password is not None:
        options["password"] = password
    return options


# ---------------------------------------------------------------- one redemption


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


def _durable_verdict(replies: Sequence[object], replicas: int) -> bool:
    """The verdict of ``SET NX`` followed by ``WAIT``: a win counts only once replicated.

    A replay is a replay whatever ``WAIT`` answered: it accepts nothing.
    """
    if len(replies) != 2:
        raise ReplayStoreError("Redis answered SET NX and WAIT with an unexpected number of replies")
    set_reply, acknowledged = replies
    for reply in replies:
        if isinstance(reply, Exception):
            raise _failure(reply)
    if not _verdict(set_reply):
        return False
    if type(acknowledged) is not int:
        raise ReplayStoreError(f"Redis answered WAIT with an unexpected {type(acknowledged).__name__}")
    if acknowledged < replicas:
        raise ReplayStoreError(
            f"Redis did not confirm the redemption on {replicas} replica(s) in time "
            f"({acknowledged} acknowledged)"
        )
    return True


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


def _failure(exc: BaseException) -> ReplayStoreError:
    """A message naming what failed: the exception's class and Redis's error code.

    The exception's own text is not used: a connection error names the host and
    port, and no part of a client's configuration belongs in a refusal.
    """
    if isinstance(exc, ReplayStoreError):
        return exc
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


def _unreachable(exc: Exception) -> ReplayStoreError:
    return ReplayStoreError(f"could not reach the Redis Cluster ({type(exc).__name__})")


# ---------------------------------------------------------------- what both stores share


_Store = TypeVar("_Store", bound="_RedisStoreBase")

#: One WARNING when an outage begins (with its cause: an exception class and Redis's error code, never a
#: host, a key or a token) and one INFO line when the store answers again, whatever the number of
#: redemptions refused in between.
logger = logging.getLogger(__name__)


def _pipeline(client: Any, commands: Sequence[tuple[object, ...]]) -> Any:
    """A pipeline (no ``MULTI``) on ``client``, with ``commands`` queued: they go down one connection."""
    pipe = client.pipeline(transaction=False)
    for command in commands:
        pipe.execute_command(*command)
    return pipe


def _map_is_stale(replies: Sequence[object]) -> bool:
    """Whether a reply says the cluster's map of slots to nodes is stale (``MOVED`` after a failover)."""
    return any(isinstance(reply, _TOPOLOGY_ERRORS) for reply in replies)


class _RedisStoreBase:
    """What the sync and async stores share: the options, the builders, the commands and the ``repr``.

    Each store keeps only what must differ: the clients it accepts, and its I/O
    (a blocking call in one, an awaited one in the other).
    """

    __slots__ = (
        "_client",
        "_clock",
        "_outage",
        "_outage_lock",
        "_owns_client",
        "_prefix",
        "_refreshing",
        "_replicas",
        "_sentinels",
        "_wait_ms",
    )

    #: The classes the builders make clients of.
    _kind: ClassVar[_ClientKind]

    _client: Any
    _sentinels: list[Any]
    _clock: Callable[[], float]
    _outage: bool
    _outage_lock: threading.Lock
    _owns_client: bool
    _prefix: str
    _refreshing: threading.Lock
    _replicas: int
    _wait_ms: int

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = DEFAULT_PREFIX,
        clock: Callable[[], float] = time.time,
        wait_replicas: int = 0,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
    ) -> None:
        """Check and keep the options; the subclass has checked ``client``."""
        _check_options(prefix, clock)
        self._replicas, self._wait_ms = _check_durability(wait_replicas, wait_timeout)
        self._client = client
        self._prefix = prefix
        self._clock = clock
        self._owns_client = False
        self._sentinels = []  # from_sentinel's clients of the Sentinels, closed with the store
        self._refreshing = threading.Lock()
        self._outage = False
        self._outage_lock = threading.Lock()

    def _outage_begins(self, failure: ReplayStoreError) -> ReplayStoreError:
        """Log the first failure of an outage (once, with its cause); return ``failure`` to raise."""
        with self._outage_lock:
            first, self._outage = not self._outage, True
        if first:
            logger.warning(
                "mrtr-state: the Redis replay store is unavailable: %s; redemptions are refused "
                "store_unavailable until it answers",
                failure,
            )
        return failure

    def _answered(self) -> None:
        """Log the end of an outage, once, when Redis answers a redemption again."""
        if not self._outage:
            return
        with self._outage_lock:
            ended, self._outage = self._outage, False
        if ended:
            logger.info("mrtr-state: the Redis replay store answers again")

    @classmethod
    def from_url(
        cls: type[_Store],
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        clock: Callable[[], float] = time.time,
        timeout: float = DEFAULT_TIMEOUT,
        wait_replicas: int = 0,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
    ) -> _Store:
        """A store with its own client for ``url`` (``redis://``, ``rediss://`` or ``unix://``).

        The client connects lazily, times out after ``timeout`` seconds (connect
        and command) and does not retry: a redemption Redis did not answer is
        refused at once instead of being repeated behind the server's back.
        With ``wait_replicas``, ``wait_timeout`` must be less than ``timeout``.
        :meth:`close` (``aclose`` for the async store) closes it.
        """
        url = _check_url(url)
        timeout = _builder_timeout(timeout, wait_replicas, wait_timeout)
        kind = cls._kind
        try:
            client = kind.redis.from_url(url, retry=kind.no_retry(), **_client_options(timeout))
        except (ValueError, TypeError):
            raise _bad_url() from None
        return cls(
            client, prefix=prefix, clock=clock, wait_replicas=wait_replicas, wait_timeout=wait_timeout
        )._owning()

    @classmethod
    def from_sentinel(
        cls: type[_Store],
        sentinels: Sequence[tuple[str, int]],
        service_name: str,
        *,
        username: str | None = None,
        password: str | None = None,
        sentinel_password: str | None = None,
        prefix: str = DEFAULT_PREFIX,
        clock: Callable[[], float] = time.time,
        timeout: float = DEFAULT_TIMEOUT,
        wait_replicas: int = 0,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
    ) -> _Store:
        """A store writing to the primary the Sentinels name for ``service_name``.

        ``sentinels`` are ``(host, port)`` pairs. The client asks the Sentinels
        for the primary before it connects, and again after a failover (a
        connection to a demoted primary is dropped, and that redemption is
        refused). The Sentinel and Redis connections both get ``timeout`` and no
        retries, as in :meth:`from_url`. ``username`` and ``password`` log in to
        Redis (an ACL user, or the default user's password), ``sentinel_password``
        to the Sentinels (if they have one).
        """
        checked = _check_sentinels(sentinels, service_name)
        timeout = _builder_timeout(timeout, wait_replicas, wait_timeout)
        kind = cls._kind
        sentinel: Any = kind.sentinel(
            checked,
            sentinel_kwargs=_sentinel_options(timeout, sentinel_password, kind.no_retry()),
            **_sentinel_options(timeout, password, kind.no_retry()),
            **_username(username),
        )
        store = cls(
            sentinel.master_for(service_name),
            prefix=prefix,
            clock=clock,
            wait_replicas=wait_replicas,
            wait_timeout=wait_timeout,
        )._owning()
        store._sentinels = list(sentinel.sentinels)
        return store

    @classmethod
    def from_cluster(
        cls: type[_Store],
        url: str | Sequence[str],
        *,
        prefix: str = DEFAULT_PREFIX,
        clock: Callable[[], float] = time.time,
        timeout: float = DEFAULT_TIMEOUT,
        wait_replicas: int = 0,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
    ) -> _Store:
        """A store on the Redis Cluster whose start-up nodes are at ``url`` (``redis://`` or ``rediss://``).

        ``url`` is one node's URL, or a sequence of several (the start-up nodes,
        as ``RedisCluster(startup_nodes=...)`` takes them; every one the first
        with another host and port). Give several: the client learns the cluster
        from any of them that answers, so a start-up node that is down
        (a primary that failed) does not keep the store down. Once it knows the
        cluster, it relearns it from any node. :class:`RedisReplayStore`'s client
        connects at once (:class:`~mrtr_state.ReplayStoreError` if no start-up
        node answers); :class:`AsyncRedisReplayStore`'s on the first redemption,
        and until it has learnt the cluster each redemption tries every start-up
        node (and is refused, ``store_unavailable``, if none answers).
        Timeouts and retries as in :meth:`from_url`: a command that times out or
        finds its node gone is refused, and the client relearns the cluster's map
        for the next one; a ``MOVED`` redirect (the command did not run) is followed.
        """
        first, others = _check_cluster_urls(url)
        timeout = _builder_timeout(timeout, wait_replicas, wait_timeout)
        kind = cls._kind
        try:
            client = kind.cluster.from_url(
                first,
                startup_nodes=[kind.cluster_node(host, port) for host, port in others],
                retry=kind.no_retry(),
                **_client_options(timeout),
            )
        except (ValueError, TypeError):
            raise _bad_url() from None
        except (redis.exceptions.RedisError, redis.exceptions.RedisClusterException) as exc:
            raise _unreachable(exc) from None
        return cls(
            client, prefix=prefix, clock=clock, wait_replicas=wait_replicas, wait_timeout=wait_timeout
        )._owning()

    def _owning(self: _Store) -> _Store:
        """Mark the client as the builder's: :meth:`close` (or ``aclose``) closes it."""
        self._owns_client = True
        return self

    def __repr__(self) -> str:
        # Never the client: its repr names the host, and its pool holds the password.
        durability = f", wait_replicas={self._replicas}" if self._replicas else ""
        return f"{type(self).__name__}(prefix={self._prefix!r}{durability})"

    @property
    def prefix(self) -> str:
        """The prefix of every key this store writes."""
        return self._prefix

    @property
    def wait_replicas(self) -> int:
        """How many replicas must acknowledge a redemption before it counts (0: not waited for)."""
        return self._replicas

    def redis_key(self, key: str) -> str:
        """The Redis key under which the redemption of ``key`` is recorded."""
        return _hashed(self._prefix, key)

    def _set_command(self, key: str, expires_at: int) -> tuple[str, int]:
        """The Redis key and the retention (ms) of one redemption."""
        return _hashed(self._prefix, key), _retention_ms(expires_at, self._clock())

    def _durable_commands(self, rkey: str, ms: int) -> list[tuple[object, ...]]:
        """``SET NX PX`` and the ``WAIT`` after it, for one connection.

        ``WAIT`` counts the replicas that have the writes of *its own connection*,
        so both go down one connection to the key's primary.
        """
        return [("SET", rkey, 1, "NX", "PX", ms), ("WAIT", self._replicas, self._wait_ms)]


class RedisReplayStore(_RedisStoreBase):
    """A :class:`~mrtr_state.ReplayStore` shared by every replica, kept in Redis.

    Args:
        client: a ``redis.Redis`` client (also one a ``redis.sentinel.Sentinel``
            manages) or a ``redis.cluster.RedisCluster``. Give it timeouts and no
            retries: without timeouts a stalled Redis stalls the request, and a
            retried ``SET NX`` may refuse the first redemption as ``replayed``.
            :meth:`from_url`, :meth:`from_sentinel` and :meth:`from_cluster`
            build clients that way.
        prefix: put before every key (default ``"mrtr-state:jti:"``); give each
            application sharing one Redis its own.
        clock: returns the current time in seconds since the epoch; give it the
            sealer's clock (it measures how long an id is kept).
        wait_replicas: the durability option. ``0`` (the default) accepts once the
            primary wrote the id. ``N`` sends ``WAIT N`` after a winning ``SET`` and
            accepts only when ``N`` replicas acknowledged within ``wait_timeout``;
            otherwise the redemption is refused (``store_unavailable``), and a retry
            meets ``replayed`` if the write survived. The client's command timeout
            must be longer than ``wait_timeout``.
        wait_timeout: how long ``WAIT`` waits for the replicas, in seconds (0.5).

    Thread-safe as the client is (``redis.Redis`` pools its connections).
    """

    __slots__ = ()

    _kind = _BLOCKING

    def __init__(
        self,
        client: SyncClient,
        *,
        prefix: str = DEFAULT_PREFIX,
        clock: Callable[[], float] = time.time,
        wait_replicas: int = 0,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
    ) -> None:
        if isinstance(client, (redis.asyncio.Redis, redis.asyncio.cluster.RedisCluster)):
            raise TypeError("this is an asyncio client: use AsyncRedisReplayStore")
        if not isinstance(client, (redis.Redis, redis.cluster.RedisCluster)):
            raise TypeError(f"client must be a redis.Redis client, not {type(client).__name__}")
        super().__init__(
            client, prefix=prefix, clock=clock, wait_replicas=wait_replicas, wait_timeout=wait_timeout
        )

    def __enter__(self) -> RedisReplayStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def redeem(self, key: str, *, expires_at: int) -> bool:
        """``SET NX PX``: ``True`` if this call recorded ``key``, ``False`` if it was there.

        With ``wait_replicas``, ``True`` only once that many replicas acknowledged.

        Raises:
            ReplayStoreError: Redis did not answer, answered with an error, too few
                replicas acknowledged, or the retention has already ended by the
                store's clock.
        """
        rkey, ms = self._set_command(key, expires_at)
        client: SyncClient = self._client
        try:
            if not self._replicas:
                first = _verdict(client.set(rkey, 1, nx=True, px=ms))
            elif isinstance(client, redis.cluster.RedisCluster):
                first = self._durable_on_cluster(client, rkey, ms)
            else:
                pipe = _pipeline(client, self._durable_commands(rkey, ms))
                first = _durable_verdict(pipe.execute(raise_on_error=False), self._replicas)
        except Exception as exc:
            raise self._outage_begins(_failure(exc)) from None
        self._answered()
        return first

    def _durable_on_cluster(self, client: redis.cluster.RedisCluster, rkey: str, ms: int) -> bool:
        cluster: Any = client  # redis-py leaves these methods untyped
        primary = cluster.get_redis_connection(cluster.get_node_from_key(rkey))
        pipe = _pipeline(primary, self._durable_commands(rkey, ms))
        try:
            replies = pipe.execute(raise_on_error=False)
        except _TOPOLOGY_ERRORS:
            self._relearn(client)
            raise
        if _map_is_stale(replies):
            self._relearn(client)  # MOVED after a failover: this one is refused, the next goes right
        return _durable_verdict(replies, self._replicas)

    def _relearn(self, client: redis.cluster.RedisCluster) -> None:
        """Reload the cluster's map of slots to nodes; one thread at a time, failures ignored."""
        if not self._refreshing.acquire(blocking=False):
            return
        try:
            client.nodes_manager.initialize()
        except Exception:  # noqa: S110  (the cluster is failing over: the next redemption tries again)
            pass
        finally:
            self._refreshing.release()

    def close(self) -> None:
        """Close the client if a builder (``from_*``) made it; a client passed in stays open."""
        if self._owns_client:
            self._client.close()
            for sentinel in self._sentinels:
                sentinel.close()


class AsyncRedisReplayStore(_RedisStoreBase):
    """:class:`RedisReplayStore` for async servers: an :class:`~mrtr_state.AsyncReplayStore`.

    Redeem through ``await sealer.open_async(..., consume=True)``. Args as for
    :class:`RedisReplayStore`, with a ``redis.asyncio.Redis`` (also Sentinel-managed)
    or ``redis.asyncio.cluster.RedisCluster`` client. Use it from one event loop:
    a ``redis.asyncio`` client belongs to the loop it first ran in. The builders
    (``from_*``) are :class:`RedisReplayStore`'s, with ``redis.asyncio`` clients;
    :meth:`aclose` closes the client they make.
    """

    __slots__ = ()

    _kind = _ASYNCIO

    def __init__(
        self,
        client: AsyncClient,
        *,
        prefix: str = DEFAULT_PREFIX,
        clock: Callable[[], float] = time.time,
        wait_replicas: int = 0,
        wait_timeout: float = DEFAULT_WAIT_TIMEOUT,
    ) -> None:
        if not isinstance(client, (redis.asyncio.Redis, redis.asyncio.cluster.RedisCluster)):
            raise TypeError(
                f"client must be a redis.asyncio.Redis client, not {type(client).__name__}"
                + (
                    " (use RedisReplayStore for it)"
                    if isinstance(client, (redis.Redis, redis.cluster.RedisCluster))
                    else ""
                )
            )
        super().__init__(
            client, prefix=prefix, clock=clock, wait_replicas=wait_replicas, wait_timeout=wait_timeout
        )

    async def __aenter__(self) -> AsyncRedisReplayStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def redeem(self, key: str, *, expires_at: int) -> bool:
        """``SET NX PX``, awaited; as :meth:`RedisReplayStore.redeem`.

        Cancelling the call may leave the id recorded (Redis may have run the
        command): the token then counts as redeemed, which fails closed.
        """
        rkey, ms = self._set_command(key, expires_at)
        client: AsyncClient = self._client
        try:
            if isinstance(client, redis.asyncio.cluster.RedisCluster):
                # Learn the cluster before the first command: coroutines that all
                # connect while the client is still learning it lose connections.
                await client.initialize()  # a no-op once it knows the cluster
            if not self._replicas:
                first = _verdict(await client.set(rkey, 1, nx=True, px=ms))
            elif isinstance(client, redis.asyncio.cluster.RedisCluster):
                first = await self._durable_on_cluster(client, rkey, ms)
            else:
                pipe = _pipeline(client, self._durable_commands(rkey, ms))
                first = _durable_verdict(await pipe.execute(raise_on_error=False), self._replicas)
        except Exception as exc:
            raise self._outage_begins(_failure(exc)) from None
        self._answered()
        return first

    async def _durable_on_cluster(
        self, client: redis.asyncio.cluster.RedisCluster, rkey: str, ms: int
    ) -> bool:
        # The async cluster client has no pipeline for one node: its commands are queued by hand.
        primary = client.get_node_from_key(rkey)
        if primary is None:
            raise ReplayStoreError("the Redis Cluster has no primary for the key's slot")
        commands = [
            redis.asyncio.cluster.PipelineCommand(position, *command)
            for position, command in enumerate(self._durable_commands(rkey, ms))
        ]
        try:
            await primary.execute_pipeline(commands)
        except _TOPOLOGY_ERRORS:
            await self._relearn(client)
            raise
        replies = [command.result for command in commands]
        if _map_is_stale(replies):
            await self._relearn(client)
        return _durable_verdict(replies, self._replicas)

    async def _relearn(self, client: redis.asyncio.cluster.RedisCluster) -> None:
        """As :meth:`RedisReplayStore._relearn`, awaited."""
        if not self._refreshing.acquire(blocking=False):
            return
        try:
            await client.nodes_manager.initialize()
        except Exception:  # noqa: S110  (failing over: the next redemption tries again)
            pass
        finally:
            self._refreshing.release()

    async def aclose(self) -> None:
        """Close the client if a builder (``from_*``) made it; a client passed in stays open."""
        if self._owns_client:
            await self._client.aclose()
            for sentinel in self._sentinels:
                await sentinel.aclose()
