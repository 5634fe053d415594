"""Single use: remember redeemed tokens so a ``requestState`` opens at most once.

Signing, binding and a short lifetime stop tampering and cross-user or
cross-request reuse, but not a second use of the same token within its lifetime
(profile, section 8.4). A server that needs at-most-once (a person's yes on a risky
action, a payment) opens with ``consume=True`` and a store that remembers each
token's id until the token expires.

The store's key is the token's ``jti`` scoped by its issuer (:func:`replay_key`),
never the token text, so two encodings of one token are one redemption. A store
that cannot answer raises :class:`ReplayStoreError`; the sealer then refuses with
``store_unavailable`` (fail closed).
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable
from typing import Final, Protocol, runtime_checkable

__all__ = ["MemoryReplayStore", "ReplayStore", "ReplayStoreError", "replay_key"]


class ReplayStoreError(Exception):
    """A replay store could not record a redemption (unreachable, full, erroring).

    Its message says what failed and never holds connection secrets.
    """


@runtime_checkable
class ReplayStore(Protocol):
    """Where redeemed token ids are remembered until their tokens expire."""

    def redeem(self, key: str, *, expires_at: int) -> bool:
        """Record ``key`` until ``expires_at`` (seconds since the epoch).

        Return ``True`` if ``key`` was not recorded before (this redemption wins),
        ``False`` if it was (a replay). Raise :class:`ReplayStoreError` if the
        answer cannot be known. Must be atomic: of many concurrent calls with one
        key, exactly one returns ``True``.
        """
        ...


def replay_key(issuer: str, jti: str) -> str:
    """The store key of a token: its ``jti`` scoped by its ``iss`` (profile, 8.4).

    ``jti`` holds base64url characters only, so the last ``#`` separates the two
    and no two (issuer, jti) pairs share a key.
    """
    return f"{issuer}#{jti}"


#: The default bound of :class:`MemoryReplayStore`.
DEFAULT_MAX_ENTRIES: Final = 1_000_000


class MemoryReplayStore:
    """A thread-safe, bounded replay store for one process.

    Entries are forgotten once their token has expired, so the store holds at most
    the tokens redeemed within one lifetime. When ``max_entries`` unexpired entries
    are held, a further redemption raises :class:`ReplayStoreError` (and is
    refused as ``store_unavailable``) rather than forgetting a live entry.
    For several replicas use a shared store such as Redis.
    """

    __slots__ = ("_clock", "_expiries", "_lock", "_max_entries", "_seen")

    def __init__(
        self, *, max_entries: int = DEFAULT_MAX_ENTRIES, clock: Callable[[], float] = time.time
    ) -> None:
        if type(max_entries) is not int or max_entries < 1:
            raise ValueError("max_entries must be a positive int")
        self._max_entries = max_entries
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, int] = {}
        self._expiries: list[tuple[int, str]] = []

    def __repr__(self) -> str:
        return f"MemoryReplayStore(entries={len(self)}, max_entries={self._max_entries})"

    def __len__(self) -> int:
        with self._lock:
            return len(self._seen)

    def redeem(self, key: str, *, expires_at: int) -> bool:
        """Record ``key`` until ``expires_at``; ``True`` the first time, ``False`` after."""
        now = self._clock()
        with self._lock:
            self._forget_expired(now)
            if key in self._seen:
                return False
            if len(self._seen) >= self._max_entries:
                raise ReplayStoreError("the in-memory replay store is full")
            self._seen[key] = expires_at
            heapq.heappush(self._expiries, (expires_at, key))
            return True

    def _forget_expired(self, now: float) -> None:
        expiries, seen = self._expiries, self._seen
        while expiries and expiries[0][0] <= now:
            _, key = heapq.heappop(expiries)
            del seen[key]
