"""Shared fixtures: a movable clock, key rings for both algorithms, and a sealer factory."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mrtr_state import Keyring, StateSealer

NOW = 1_767_225_600  # 2026-01-01T00:00:00Z
ISSUER = "https://files.example.com"


class Clock:
    """An injected clock that tests move by hand: no sleeping."""

    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


_RINGS = {alg: Keyring.generate(alg) for alg in ("HS256", "EdDSA")}


@pytest.fixture(params=["HS256", "EdDSA"])
def ring(request: pytest.FixtureRequest) -> Keyring:
    """One ring per algorithm (made once: Ed25519 key generation is not free)."""
    return _RINGS[request.param]


SealerFactory = Callable[..., StateSealer]


@pytest.fixture
def make_sealer(ring: Keyring, clock: Clock) -> SealerFactory:
    def make(**options: Any) -> StateSealer:
        return StateSealer(options.pop("ring", ring), **{"issuer": ISSUER, "clock": clock, **options})

    return make


@pytest.fixture
def sealer(make_sealer: SealerFactory) -> StateSealer:
    return make_sealer()
