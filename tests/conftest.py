"""Shared fixtures: a movable clock, key rings for both algorithms, and a sealer factory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mrtr_state import Keyring, StateSealer

NOW = 1_767_225_600  # 2026-01-01T00:00:00Z
ISSUER = "https://files.example.com"

#: The reasons a token with one character changed is refused with (rule AGT-18's check): which of them
#: depends on where the change falls (profile 5 and 5.1, steps 2 to 10).
ONE_CHANGE_REASONS = frozenset(
    {"malformed", "unsupported_header", "wrong_type", "unknown_key", "algorithm_mismatch", "bad_signature"}
)
_TOKEN_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."


def one_character_changes(token: str, steps: tuple[int, ...] = (1,)) -> Iterator[tuple[int, str]]:
    """Each position of ``token``, with a copy in which that character is replaced by the one ``step``
    places after it in the base64url alphabet followed by ``.`` (so a separator changes too), per step."""
    for i, char in enumerate(token):
        for step in steps:
            replacement = _TOKEN_ALPHABET[(_TOKEN_ALPHABET.index(char) + step) % len(_TOKEN_ALPHABET)]
            yield i, token[:i] + replacement + token[i + 1 :]


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
