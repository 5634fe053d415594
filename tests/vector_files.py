"""The profile's vector files as the vector tests read them: a vector opened as its file says, its verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mrtr_state import InvalidRequestState, Keyring, StateSealer

VECTORS = Path(__file__).resolve().parent.parent / "spec" / "vectors"


def load(name: str) -> Any:
    """One file of ``spec/vectors``, parsed."""
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def open_vector(document: dict[str, Any], ring: Keyring, vector: dict[str, Any]) -> Any:
    """Open ``vector``'s token with a sealer set as the file's defaults, overridden by the vector, say."""
    defaults = document["defaults"]
    settings = {**defaults, **{k: vector[k] for k in defaults if k in vector}}
    sealer = StateSealer(
        ring,
        issuer=settings["issuer"],
        max_lifetime=settings["max_lifetime"],
        leeway=settings["leeway"],
        max_token_bytes=settings["max_token_bytes"],
        clock=lambda: vector["now"],
        # encrypted.json names no require_arguments: the sealer's default (False) applies.
        require_arguments=settings.get("require_arguments", False),
    )
    target = {k: vector[k] for k in ("tool", "prompt", "resource") if k in vector}
    return sealer.open(vector["token"], user=vector["user"], arguments=vector.get("arguments", {}), **target)


def assert_verdict(document: dict[str, Any], ring: Keyring, vector: dict[str, Any]) -> None:
    """The vector opens to its expected state, or is refused with its expected reason."""
    expected = vector["expected"]
    if expected["valid"]:
        assert open_vector(document, ring, vector) == expected["state"]
    else:
        with pytest.raises(InvalidRequestState) as refusal:
            open_vector(document, ring, vector)
        assert refusal.value.reason == expected["reason"]
