"""Single use: remember redeemed tokens so a ``requestState`` opens at most once.

Signing, binding and a short lifetime stop tampering and cross-user or
cross-request reuse, but not a second use of the same token within its lifetime
(profile, section 9.5, step 20). A server that needs at-most-once (a person's yes on a risky
action, a payment) opens with ``consume=True`` and a store that remembers each
token's id until no verifier would accept the token any more.

The store's key is the token's ``jti`` scoped by its issuer (:func:`replay_key`),
never the token text, so two encodings of one token are one redemption. A store
that cannot answer raises :class:`ReplayStoreError`; the sealer then refuses with
``store_unavailable`` (fail closed).

This module holds the protocols and the in-memory store for one process. A store
shared by replicas lives in :mod:`mrtr_state.replay.replay_redis` (the ``redis`` extra).
"""

from __future__ import annotations

import heapq
import inspect
import threading
import time
from collections.abc import Callable
from typing import Final, Protocol, runtime_checkable

__all__ = [
    "DEFAULT_MAX_ENTRIES",
    "AsyncReplayStore",
    "MemoryReplayStore",
    "ReplayStore",
    "ReplayStoreError",
    "is_async_store",
    "replay_key",
]


class ReplayStoreError(Exception):
    """A replay store could not record a redemption (unreachable, full, erroring).

    Its message says what failed and never holds connection secrets: the sealer
    copies it into the refusal's ``detail``, which is meant for logs.
    """


@runtime_checkable
class ReplayStore(Protocol):
    """Where redeemed token ids are remembered until their tokens expire."""

    def redeem(self, key: str, *, expires_at: int) -> bool:
        """Record ``key`` until ``expires_at`` (seconds since the epoch).

        Return ``True`` if ``key`` was not recorded before (this redemption wins),
        ``False`` if it was (a replay). Raise :class:`ReplayStoreError` if the
        answer cannot be known. Must be atomic: of many concurrent calls with one
        key, exactly one returns ``True``. The entry must outlive ``expires_at`` as
        the store's clock measures it, and may be forgotten after it.
        """
        ...


@runtime_checkable
class AsyncReplayStore(Protocol):
    """A :class:`ReplayStore` for async servers: ``redeem`` is a coroutine.

    Used with :meth:`StateSealer.open_async <mrtr_state.StateSealer.open_async>`;
    the synchronous ``open(consume=True)`` refuses such a store with ``TypeError``.
    """

    async def redeem(self, key: str, *, expires_at: int) -> bool:
        """Like :meth:`ReplayStore.redeem`, awaited."""
        ...


def is_async_store(store: object) -> bool:
    """Whether ``store.redeem`` is a coroutine function (an :class:`AsyncReplayStore`).

    Both protocols name one method, so ``isinstance`` cannot tell them apart; this
    can, before any token is opened.
    """
    return inspect.iscoroutinefunction(getattr(store, "redeem", None))


def replay_key(issuer: str, jti: str) -> str:
    """The store key of a token: its ``jti`` scoped by its ``iss`` (profile, section 9.5).

    ``jti`` holds base64url characters only, so the last ``#`` separates the two
    and no two (issuer, jti) pairs share a key.
    """
    return f"{issuer}#{jti}"


#: The default bound of :class:`MemoryReplayStore`: about 25 MB when full
#: (roughly 140 bytes per entry plus the key, which is the issuer plus 23
#: characters). Entries live one token lifetime, so the default holds 166
#: redemptions a second sustained over a 600-second lifetime.
DEFAULT_MAX_ENTRIES: Final = 100_000


class MemoryReplayStore:
    """A thread-safe, bounded replay store for one process.

    Entries are forgotten once their retention has passed by ``clock`` (give it
    the sealer's clock), so the store holds only the tokens redeemed within one
    lifetime. Each entry costs about 140 bytes plus its key (the issuer and the
    ``jti``); ``max_entries`` caps the total. When that many unexpired entries are
    held, a further redemption raises :class:`ReplayStoreError` (and is refused as
    ``store_unavailable``) rather than forgetting a live entry, which would let
    its token be replayed. ``len(store)`` is the number of unexpired entries.

    The memory is the process's: a restart forgets every redemption, and another
    replica never sees them. For several replicas use a shared store such as
    :class:`~mrtr_state.replay.replay_redis.RedisReplayStore`.
    """

    __slots__ = ("_clock", "_expiries", "_lock", "_max_entries", "_seen")

    def __init__(
        self, *, max_entries: int = DEFAULT_MAX_ENTRIES, clock: Callable[[], float] = time.time
    ) -> None:
        if type(max_entries) is not int:
            raise TypeError(f"max_entries must be an int, not {type(max_entries).__name__}")
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        if not callable(clock):
            raise TypeError("clock must be a callable")
        self._max_entries = max_entries
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, int] = {}
        # (expires_at, key), smallest first: forgetting is a pop per expired entry.
        self._expiries: list[tuple[int, str]] = []

    def __repr__(self) -> str:
        return f"MemoryReplayStore(entries={len(self)}, max_entries={self._max_entries})"

    def __len__(self) -> int:
        now = self._clock()
        with self._lock:
            self._forget_expired(now)
            return len(self._seen)

    @property
    def max_entries(self) -> int:
        """The most unexpired entries the store holds before it refuses."""
        return self._max_entries

    def redeem(self, key: str, *, expires_at: int) -> bool:
        """Record ``key`` until ``expires_at``; ``True`` the first time, ``False`` after.

        Raises:
            ReplayStoreError: the store is full, or ``expires_at`` has already
                passed by the store's clock (it cannot be remembered; usually the
                store and the sealer were given different clocks).
        """
        now = self._clock()
        with self._lock:
            self._forget_expired(now)
            if key in self._seen:
                return False
            if expires_at <= now:
                raise ReplayStoreError(
                    "the redemption's retention has already ended by the store's clock; "
                    "give the store the sealer's clock"
                )
            if len(self._seen) >= self._max_entries:
                raise ReplayStoreError(f"the in-memory replay store is full ({self._max_entries} entries)")
            self._seen[key] = expires_at
            heapq.heappush(self._expiries, (expires_at, key))
            return True

    def _forget_expired(self, now: float) -> None:
        expiries, seen = self._expiries, self._seen
        while expiries and expiries[0][0] <= now:
            _, key = heapq.heappop(expiries)
            del seen[key]
