"""MemoryReplayStore: atomic, forgets expired ids, bounded, fails closed when full."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from mrtr_state import MemoryReplayStore, ReplayStore, ReplayStoreError
from mrtr_state.replay import DEFAULT_MAX_ENTRIES, replay_key
from tests.conftest import Clock

ISSUER = "https://files.example.com"


def test_the_first_redemption_wins_and_every_later_one_is_a_replay(clock: Clock) -> None:
    store = MemoryReplayStore(clock=clock)
    key = replay_key(ISSUER, "A" * 22)
    assert store.redeem(key, expires_at=int(clock.now) + 600) is True
    assert store.redeem(key, expires_at=int(clock.now) + 600) is False
    assert store.redeem(key, expires_at=int(clock.now) + 600) is False


def test_different_ids_are_different_redemptions(clock: Clock) -> None:
    store = MemoryReplayStore(clock=clock)
    assert store.redeem(replay_key(ISSUER, "A" * 22), expires_at=int(clock.now) + 600)
    assert store.redeem(replay_key(ISSUER, "B" * 22), expires_at=int(clock.now) + 600)
    assert store.redeem(replay_key("https://other.example.com", "A" * 22), expires_at=int(clock.now) + 600)
    assert len(store) == 3


def test_an_id_is_remembered_until_its_retention_ends_and_then_forgotten(clock: Clock) -> None:
    store = MemoryReplayStore(clock=clock)
    key = replay_key(ISSUER, "A" * 22)
    expires_at = int(clock.now) + 600
    store.redeem(key, expires_at=expires_at)
    clock.now = expires_at - 0.001
    assert len(store) == 1
    assert store.redeem(key, expires_at=expires_at) is False
    clock.now = expires_at
    assert len(store) == 0


def test_a_full_store_refuses_rather_than_forget_a_live_id(clock: Clock) -> None:
    store = MemoryReplayStore(max_entries=2, clock=clock)
    store.redeem("k1", expires_at=int(clock.now) + 10)
    store.redeem("k2", expires_at=int(clock.now) + 20)
    with pytest.raises(ReplayStoreError, match="full"):
        store.redeem("k3", expires_at=int(clock.now) + 30)
    # Both live ids are still there: their tokens stay single-use.
    assert store.redeem("k1", expires_at=int(clock.now) + 10) is False
    assert store.redeem("k2", expires_at=int(clock.now) + 20) is False
    # Once one has expired there is room again.
    clock.now += 10
    assert store.redeem("k3", expires_at=int(clock.now) + 30) is True


def test_a_retention_already_over_by_the_stores_clock_is_refused_not_ignored(clock: Clock) -> None:
    # A sealer and a store on different clocks would otherwise record ids that are
    # forgotten at once, and every token could be replayed.
    store = MemoryReplayStore(clock=clock)
    with pytest.raises(ReplayStoreError, match="clock"):
        store.redeem("k", expires_at=int(clock.now))
    assert len(store) == 0


def test_max_entries_must_be_a_positive_int() -> None:
    with pytest.raises(TypeError):
        MemoryReplayStore(max_entries=True)
    with pytest.raises(TypeError):
        MemoryReplayStore(max_entries=10.0)
    with pytest.raises(ValueError, match="at least 1"):
        MemoryReplayStore(max_entries=0)
    assert MemoryReplayStore().max_entries == DEFAULT_MAX_ENTRIES


def test_the_repr_shows_counts_never_ids(clock: Clock) -> None:
    store = MemoryReplayStore(max_entries=5, clock=clock)
    store.redeem(replay_key(ISSUER, "SECRETJTI" * 3), expires_at=int(clock.now) + 5)
    assert repr(store) == "MemoryReplayStore(entries=1, max_entries=5)"


def test_it_is_a_replay_store() -> None:
    assert isinstance(MemoryReplayStore(), ReplayStore)


def test_of_32_threads_redeeming_one_id_exactly_one_wins(clock: Clock) -> None:
    store = MemoryReplayStore(clock=clock)
    start = threading.Barrier(32)

    def redeem(_: int) -> bool:
        start.wait()
        return store.redeem(replay_key(ISSUER, "A" * 22), expires_at=int(clock.now) + 600)

    with ThreadPoolExecutor(32) as pool:
        results = list(pool.map(redeem, range(32)))
    assert results.count(True) == 1
    assert results.count(False) == 31


def test_32_threads_redeeming_different_ids_all_win(clock: Clock) -> None:
    store = MemoryReplayStore(clock=clock)
    start = threading.Barrier(32)

    def redeem(i: int) -> bool:
        start.wait()
        return store.redeem(replay_key(ISSUER, f"{i:022d}"), expires_at=int(clock.now) + 600)

    with ThreadPoolExecutor(32) as pool:
        assert all(pool.map(redeem, range(32)))
    assert len(store) == 32
