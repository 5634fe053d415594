"""A sealer's keys from a plain provider: a function returning the current Keyring."""

from __future__ import annotations

import logging

import pytest

from mrtr_state import InvalidRequestState, Key, Keyring, KeyringError, StateSealer, decode_unverified
from tests.conftest import ISSUER


class Current:
    """The application's own holder of the current ring."""

    def __init__(self, ring: Keyring) -> None:
        self.ring = ring
        self.calls = 0

    def __call__(self) -> Keyring:
        self.calls += 1
        return self.ring


def test_a_function_returning_the_current_ring_is_a_provider() -> None:
    first = Keyring.generate("HS256")
    current = Current(first)
    sealer = StateSealer(current, issuer=ISSUER)
    assert sealer.ring is current
    token = sealer.seal({"n": 1}, user="alice", tool="deploy")
    assert sealer.open(token, user="alice", tool="deploy") == {"n": 1}
    assert current.calls >= 3  # read at construction, on the seal and on the open


def test_seal_and_open_follow_the_ring_the_function_returns_now() -> None:
    first = Keyring.generate("HS256")
    current = Current(first)
    sealer = StateSealer(current, issuer=ISSUER)
    old_token = sealer.seal({}, user="alice", tool="deploy")
    current.ring = Keyring([Key.generate("HS256")])
    token = sealer.seal({}, user="alice", tool="deploy")
    assert decode_unverified(token)[0]["kid"] == current.ring.keys[0].kid
    assert sealer.open(token, user="alice", tool="deploy") == {}
    with pytest.raises(InvalidRequestState) as refused:
        sealer.open(old_token, user="alice", tool="deploy")
    assert refused.value.reason == "unknown_key"


def test_a_function_returning_something_else_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="not a Keyring"):
        StateSealer(lambda: Keyring.generate("HS256").keys, issuer=ISSUER)  # type: ignore[arg-type, return-value]


def test_a_function_whose_keys_cannot_be_used_is_refused_at_construction() -> None:
    key = Key.generate("HS256")

    class Twice(Keyring):
        @property
        def keys(self) -> tuple[Key, ...]:
            return (key, key)

    with pytest.raises(KeyringError):
        StateSealer(lambda: Twice([key]), issuer=ISSUER)


def test_later_unusable_keys_keep_the_last_good_generation(caplog: pytest.LogCaptureFixture) -> None:
    ring = Keyring.generate("HS256")
    key = ring.keys[0]

    class Twice(Keyring):
        @property
        def keys(self) -> tuple[Key, ...]:
            return self._twice

        _twice = (key, key)

    current = Current(ring)
    sealer = StateSealer(current, issuer=ISSUER)
    token = sealer.seal({}, user="alice", tool="deploy")
    current.ring = Twice([key])
    with caplog.at_level(logging.ERROR, logger="mrtr_state.sealer"):
        for _ in range(3):
            assert sealer.open(token, user="alice", tool="deploy") == {}
    assert len([r for r in caplog.records if "cannot be used" in r.getMessage()]) == 1
