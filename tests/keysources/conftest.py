from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.keysources.jwks_server import JWKSServer, jwks_server


@pytest.fixture
def server() -> Iterator[JWKSServer]:
    with jwks_server() as running:
        yield running


class Monotonic:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def monotonic() -> Monotonic:
    return Monotonic()
