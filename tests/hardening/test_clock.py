"""Time comes only from the injected clock, and its boundaries are exact."""

from __future__ import annotations

import time

import pytest

from mrtr_state import InvalidRequestState, Keyring, StateSealer
from tests.conftest import ISSUER, NOW, Clock

REQUEST = {"user": "alice", "tool": "deploy"}


def test_seal_and_open_never_read_the_system_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, clock=clock)

    def forbidden() -> float:
        raise AssertionError("the system clock was read")

    monkeypatch.setattr(time, "time", forbidden)
    monkeypatch.setattr(time, "time_ns", forbidden)
    monkeypatch.setattr(time, "monotonic", forbidden)
    token = sealer.seal({"step": 1}, **REQUEST)
    assert sealer.open(token, **REQUEST) == {"step": 1}
    clock.advance(600)
    with pytest.raises(InvalidRequestState):
        sealer.open(token, **REQUEST)


@pytest.mark.parametrize("leeway", [0, 1, 60, 300])
def test_exp_and_iat_boundaries_with_each_leeway(leeway: int) -> None:
    clock = Clock()
    minter = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, clock=clock)
    verifier = StateSealer(minter.ring, issuer=ISSUER, clock=clock, leeway=leeway)
    token = minter.seal(1, **REQUEST)  # iat = NOW, exp = NOW + 600

    def opens_at(now: int) -> bool:
        clock.now = now
        try:
            verifier.open(token, **REQUEST)
        except InvalidRequestState:
            return False
        return True

    assert opens_at(NOW + 600 + leeway - 1)
    assert not opens_at(NOW + 600 + leeway)
    assert opens_at(NOW - leeway)
    assert not opens_at(NOW - leeway - 1)
