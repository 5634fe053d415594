"""The interop examples as fixtures: each one built at most once per test session."""

from __future__ import annotations

import pytest

from tests.interop import harness

PROGRAMS = harness.discover()
_BUILT: set[str] = set()


def built(program: harness.Program) -> harness.Program:
    """Build ``program`` from its own build file, unless this session already did."""
    if program.name not in _BUILT:
        harness.build(program)
        _BUILT.add(program.name)
    return program


@pytest.fixture(scope="session", params=PROGRAMS, ids=[p.name for p in PROGRAMS])
def program(request: pytest.FixtureRequest) -> harness.Program:
    """One example, built once for the whole session."""
    return built(request.param)


@pytest.fixture(scope="session")
def typescript() -> harness.Program:
    """The TypeScript example, built with the package it uses (typescript/, whose node_modules hold jose)."""
    (example,) = [p for p in PROGRAMS if p.name == "typescript"]
    return built(example)
