"""open(consume=True) and open_async: a token opens at most once, and only a valid one costs a store write."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mrtr_state import (
    AsyncReplayStore,
    InvalidRequestState,
    Keyring,
    MemoryReplayStore,
    ReplayStoreError,
    StateSealer,
    decode_unverified,
)
from mrtr_state.replay import replay_key
from mrtr_state.token import _b64, jws
from tests.conftest import Clock

ISSUER = "https://files.example.com"
REQUEST: dict[str, Any] = {"user": "alice", "tool": "deploy", "arguments": {"env": "prod"}}
STATE = {"step": "confirm"}


class RecordingStore:
    """A store that answers ``answer`` (or raises it) and remembers every call."""

    def __init__(self, answer: object = True) -> None:
        self.answer = answer
        self.calls: list[tuple[str, int]] = []

    def redeem(self, key: str, *, expires_at: int) -> Any:
        self.calls.append((key, expires_at))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


class AsyncMemoryStore:
    """An AsyncReplayStore over a MemoryReplayStore, yielding to the loop on every call."""

    def __init__(self, clock: Clock) -> None:
        self.inner = MemoryReplayStore(clock=clock)
        self.calls = 0

    async def redeem(self, key: str, *, expires_at: int) -> bool:
        self.calls += 1
        await asyncio.sleep(0)
        return self.inner.redeem(key, expires_at=expires_at)


def sealer_with(store: object, clock: Clock, **options: Any) -> StateSealer:
    return StateSealer(
        Keyring.generate("HS256"),
        issuer=ISSUER,
        clock=clock,
        replay_store=store,  # type: ignore[arg-type]
        **options,
    )


def refusal(call: Any) -> InvalidRequestState:
    with pytest.raises(InvalidRequestState) as caught:
        call()
    return caught.value


def test_a_consumed_token_opens_once_and_is_replayed_after(clock: Clock) -> None:
    sealer = sealer_with(MemoryReplayStore(clock=clock), clock)
    token = sealer.seal(STATE, **REQUEST)
    assert sealer.open(token, **REQUEST, consume=True) == STATE
    replay = refusal(lambda: sealer.open(token, **REQUEST, consume=True))
    assert replay.reason == "replayed"
    assert str(replay) == "The request state has already been used."


def test_opening_without_consume_neither_checks_nor_records(clock: Clock) -> None:
    store = MemoryReplayStore(clock=clock)
    sealer = sealer_with(store, clock)
    token = sealer.seal(STATE, **REQUEST)
    assert sealer.open(token, **REQUEST) == STATE
    assert sealer.open(token, **REQUEST) == STATE
    assert len(store) == 0
    assert sealer.open(token, **REQUEST, consume=True) == STATE


def test_the_store_key_is_the_issuer_scoped_jti_and_retention_is_exp_plus_twice_the_leeway(
    clock: Clock,
) -> None:
    store = RecordingStore()
    sealer = sealer_with(store, clock, leeway=30)
    token = sealer.seal(STATE, **REQUEST)
    sealer.open(token, **REQUEST, consume=True)
    _, claims = decode_unverified(token)
    assert store.calls == [(f"{ISSUER}#{claims['jti']}", claims["exp"] + 60)]
    assert store.calls[0][0] == replay_key(ISSUER, claims["jti"])


def test_with_no_leeway_the_retention_is_exp(clock: Clock) -> None:
    store = RecordingStore()
    sealer = sealer_with(store, clock)
    token = sealer.seal(STATE, **REQUEST)
    sealer.open(token, **REQUEST, consume=True)
    assert store.calls[0][1] == decode_unverified(token)[1]["exp"]


def test_another_encoding_of_the_same_token_is_the_same_redemption(clock: Clock) -> None:
    # The same claims under a header with its members reordered: different text,
    # same signer, same jti. Single use counts tokens, not strings.
    ring = Keyring.generate("HS256")
    sealer = StateSealer(ring, issuer=ISSUER, clock=clock, replay_store=MemoryReplayStore(clock=clock))
    token = sealer.seal(STATE, **REQUEST)
    header, payload, _ = token.split(".")
    key = ring.signing_key
    reordered = _b64.encode(json.dumps({"kid": key.kid, "typ": "mrtr-state+jwt", "alg": "HS256"}).encode())
    assert reordered != header
    other_text = jws.sign(key, reordered, _b64.decode_checked(payload))
    assert other_text != token
    assert sealer.open(other_text, **REQUEST) == STATE  # a valid token in its own right
    assert sealer.open(token, **REQUEST, consume=True) == STATE
    assert refusal(lambda: sealer.open(other_text, **REQUEST, consume=True)).reason == "replayed"


def test_the_same_jti_from_two_issuers_is_two_redemptions(clock: Clock) -> None:
    store = MemoryReplayStore(clock=clock)
    ring = Keyring.generate("HS256")

    def same_jti(n: int) -> bytes:
        return b"\x01" * n

    one = StateSealer(ring, issuer=ISSUER, clock=clock, entropy=same_jti, replay_store=store)
    two = StateSealer(
        ring, issuer="https://other.example.com", clock=clock, entropy=same_jti, replay_store=store
    )
    t1, t2 = one.seal(STATE, **REQUEST), two.seal(STATE, **REQUEST)
    assert decode_unverified(t1)[1]["jti"] == decode_unverified(t2)[1]["jti"]
    assert one.open(t1, **REQUEST, consume=True) == STATE
    assert two.open(t2, **REQUEST, consume=True) == STATE


@pytest.mark.parametrize(
    ("reason", "spoil"),
    [
        ("bad_signature", lambda t, r: (t[:-2] + ("AA" if not t.endswith("AA") else "BA"), r)),
        ("wrong_user", lambda t, r: (t, {**r, "user": "mallory"})),
        ("wrong_tool", lambda t, r: (t, {**r, "tool": "delete_repo"})),
        ("wrong_request", lambda t, r: (t, {**r, "arguments": {"env": "staging"}})),
        ("malformed", lambda t, r: ("not a token", r)),
    ],
)
def test_an_invalid_token_is_refused_for_its_own_reason_before_the_store_is_touched(
    clock: Clock, reason: str, spoil: Any
) -> None:
    store = RecordingStore()
    sealer = sealer_with(store, clock)
    token, request = spoil(sealer.seal(STATE, **REQUEST), REQUEST)
    assert refusal(lambda: sealer.open(token, **request, consume=True)).reason == reason
    assert store.calls == []


def test_an_expired_token_is_refused_as_expired_before_the_store_is_touched(clock: Clock) -> None:
    store = RecordingStore()
    sealer = sealer_with(store, clock)
    token = sealer.seal(STATE, **REQUEST)
    clock.now += 600
    assert refusal(lambda: sealer.open(token, **REQUEST, consume=True)).reason == "expired"
    assert store.calls == []


def test_a_replay_after_the_id_is_forgotten_is_still_refused_as_expired(clock: Clock) -> None:
    store = MemoryReplayStore(clock=clock)
    sealer = sealer_with(store, clock)
    token = sealer.seal(STATE, **REQUEST)
    sealer.open(token, **REQUEST, consume=True)
    clock.now += 600
    assert len(store) == 0
    assert refusal(lambda: sealer.open(token, **REQUEST, consume=True)).reason == "expired"


def test_a_store_error_refuses_as_store_unavailable_with_its_message(clock: Clock) -> None:
    sealer = sealer_with(RecordingStore(ReplayStoreError("Redis could not record the redemption")), clock)
    token = sealer.seal(STATE, **REQUEST)
    error = refusal(lambda: sealer.open(token, **REQUEST, consume=True))
    assert error.reason == "store_unavailable"
    assert error.detail == "Redis could not record the redemption"
    assert error.__cause__ is None
    assert error.__suppress_context__


def test_any_other_exception_of_a_store_fails_closed_naming_only_its_class(clock: Clock) -> None:
    sealer = sealer_with(RecordingStore(RuntimeError("redis://:hunter2@db:6379 broke")), clock)
    token = sealer.seal(STATE, **REQUEST)
    error = refusal(lambda: sealer.open(token, **REQUEST, consume=True))
    assert error.reason == "store_unavailable"
    assert error.detail == "the replay store raised RuntimeError"
    assert "hunter2" not in repr(error)


@pytest.mark.parametrize("answer", [None, 1, "yes", "OK", [True]])
def test_a_store_answer_that_is_not_a_bool_never_opens(clock: Clock, answer: object) -> None:
    sealer = sealer_with(RecordingStore(answer), clock)
    token = sealer.seal(STATE, **REQUEST)
    assert refusal(lambda: sealer.open(token, **REQUEST, consume=True)).reason == "store_unavailable"


def test_consume_without_a_store_is_a_configuration_error(clock: Clock) -> None:
    sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, clock=clock)
    token = sealer.seal(STATE, **REQUEST)
    with pytest.raises(ValueError, match="replay_store"):
        sealer.open(token, **REQUEST, consume=True)
    with pytest.raises(ValueError, match="replay_store"):
        asyncio.run(sealer.open_async(token, **REQUEST, consume=True))


def test_an_async_store_in_the_sync_open_is_a_type_error_before_any_work(clock: Clock) -> None:
    store = AsyncMemoryStore(clock)
    sealer = sealer_with(store, clock)
    token = sealer.seal(STATE, **REQUEST)
    with pytest.raises(TypeError, match="open_async"):
        sealer.open(token, **REQUEST, consume=True)
    with pytest.raises(TypeError, match="open_async"):
        sealer.open("not even a token", **REQUEST, consume=True)
    assert store.calls == 0
    assert sealer.open(token, **REQUEST) == STATE  # without consume it is just a sealer


def test_a_redeem_that_returns_an_awaitable_in_the_sync_open_is_a_type_error(clock: Clock) -> None:
    # A store the constructor cannot recognise as async (redeem is a plain function
    # returning a coroutine) must still not be taken for a yes.
    inner = AsyncMemoryStore(clock)

    class Disguised:
        def redeem(self, key: str, *, expires_at: int) -> Any:
            return inner.redeem(key, expires_at=expires_at)

    sealer = sealer_with(Disguised(), clock)
    token = sealer.seal(STATE, **REQUEST)
    with pytest.raises(TypeError, match="open_async"):
        sealer.open(token, **REQUEST, consume=True)
    assert len(inner.inner) == 0


def test_an_async_store_is_a_replay_store_of_the_async_protocol(clock: Clock) -> None:
    assert isinstance(AsyncMemoryStore(clock), AsyncReplayStore)


def test_open_async_with_an_async_store_opens_once(clock: Clock) -> None:
    store = AsyncMemoryStore(clock)
    sealer = sealer_with(store, clock)
    token = sealer.seal(STATE, **REQUEST)

    async def twice() -> tuple[Any, InvalidRequestState]:
        first = await sealer.open_async(token, **REQUEST, consume=True)
        with pytest.raises(InvalidRequestState) as second:
            await sealer.open_async(token, **REQUEST, consume=True)
        return first, second.value

    first, second = asyncio.run(twice())
    assert first == STATE
    assert second.reason == "replayed"
    assert store.calls == 2


def test_open_async_with_a_sync_store_opens_once(clock: Clock) -> None:
    sealer = sealer_with(MemoryReplayStore(clock=clock), clock)
    token = sealer.seal(STATE, **REQUEST)
    assert asyncio.run(sealer.open_async(token, **REQUEST, consume=True)) == STATE
    with pytest.raises(InvalidRequestState, match="already been used"):
        asyncio.run(sealer.open_async(token, **REQUEST, consume=True))


def test_open_async_runs_the_same_checks_before_the_store(clock: Clock) -> None:
    store = AsyncMemoryStore(clock)
    sealer = sealer_with(store, clock)
    token = sealer.seal(STATE, **REQUEST)
    with pytest.raises(InvalidRequestState) as caught:
        asyncio.run(sealer.open_async(token, **{**REQUEST, "user": "mallory"}, consume=True))
    assert caught.value.reason == "wrong_user"
    assert store.calls == 0
    assert asyncio.run(sealer.open_async(token, **REQUEST)) == STATE


def test_of_many_concurrent_open_async_calls_with_one_token_exactly_one_opens(clock: Clock) -> None:
    sealer = sealer_with(AsyncMemoryStore(clock), clock)
    token = sealer.seal(STATE, **REQUEST)

    async def race() -> list[Any]:
        calls = [sealer.open_async(token, **REQUEST, consume=True) for _ in range(32)]
        return await asyncio.gather(*calls, return_exceptions=True)

    results = asyncio.run(race())
    assert results.count(STATE) == 1
    assert sorted({r.reason for r in results if isinstance(r, InvalidRequestState)}) == ["replayed"]


def test_open_async_fails_closed_when_the_async_store_raises(clock: Clock) -> None:
    class Broken:
        async def redeem(self, key: str, *, expires_at: int) -> bool:
            raise ConnectionError("redis://:hunter2@db down")

    sealer = sealer_with(Broken(), clock)
    token = sealer.seal(STATE, **REQUEST)
    with pytest.raises(InvalidRequestState) as caught:
        asyncio.run(sealer.open_async(token, **REQUEST, consume=True))
    assert caught.value.reason == "store_unavailable"
    assert caught.value.detail == "the replay store raised ConnectionError"


def test_cancelling_open_async_cancels_it_and_never_opens(clock: Clock) -> None:
    class Stalled:
        async def redeem(self, key: str, *, expires_at: int) -> bool:
            await asyncio.sleep(3600)
            return True

    sealer = sealer_with(Stalled(), clock)
    token = sealer.seal(STATE, **REQUEST)

    async def cancel() -> None:
        task = asyncio.ensure_future(sealer.open_async(token, **REQUEST, consume=True))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel())


def test_the_sealer_shows_its_replay_store(clock: Clock) -> None:
    store = MemoryReplayStore(clock=clock)
    assert sealer_with(store, clock).replay_store is store
    assert StateSealer(Keyring.generate("HS256"), issuer=ISSUER).replay_store is None
