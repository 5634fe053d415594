"""The Python library against the profile's test vectors (spec/vectors/)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import rfc8785

from mrtr_state import InvalidRequestState, Keyring, StateSealer, arguments_digest, canonicalize

ROOT = Path(__file__).resolve().parent.parent
VECTORS = ROOT / "spec" / "vectors"
KEYS = json.loads((VECTORS / "keys.json").read_text(encoding="utf-8"))
TOKENS = json.loads((VECTORS / "tokens.json").read_text(encoding="utf-8"))
ARGUMENTS = json.loads((VECTORS / "arguments.json").read_text(encoding="utf-8"))
RING = Keyring.from_jwks(KEYS["verifier_jwks"])


def verify(vector: dict[str, Any]) -> Any:
    settings = {**TOKENS["defaults"], **{k: vector[k] for k in TOKENS["defaults"] if k in vector}}
    sealer = StateSealer(
        RING,
        issuer=settings["issuer"],
        max_lifetime=settings["max_lifetime"],
        leeway=settings["leeway"],
        max_token_bytes=settings["max_token_bytes"],
        clock=lambda: vector["now"],
    )
    target = {k: vector[k] for k in ("tool", "prompt", "resource") if k in vector}
    return sealer.open(vector["token"], user=vector["user"], arguments=vector.get("arguments", {}), **target)


@pytest.mark.parametrize("vector", TOKENS["vectors"], ids=lambda v: v["id"])
def test_each_token_vector_gets_its_expected_verdict_and_reason(vector: dict[str, Any]) -> None:
    expected = vector["expected"]
    if expected["valid"]:
        assert verify(vector) == expected["state"]
    else:
        with pytest.raises(InvalidRequestState) as refusal:
            verify(vector)
        assert refusal.value.reason == expected["reason"]


@pytest.mark.parametrize("case", ARGUMENTS["vectors"], ids=lambda c: c["id"])
def test_each_argument_vector_canonicalizes_and_digests_as_written(case: dict[str, Any]) -> None:
    assert canonicalize(case["arguments"]).decode("utf-8") == case["canonical"]
    assert arguments_digest(case["arguments"]) == case["digest"]


def as_doubles(value: Any) -> Any:
    """JCS reads every number as an IEEE 754 double; the rfc8785 package refuses
    integers beyond 2**53 instead, so hand it the doubles the profile means."""
    if isinstance(value, dict):
        return {k: as_doubles(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_doubles(v) for v in value]
    if type(value) is int and abs(value) > 2**53 - 1:
        return float(value)
    return value


@pytest.mark.parametrize("case", ARGUMENTS["vectors"], ids=lambda c: c["id"])
def test_argument_vectors_agree_with_an_independent_rfc8785_implementation(case: dict[str, Any]) -> None:
    assert rfc8785.dumps(as_doubles(case["arguments"])).decode("utf-8") == case["canonical"]


def test_every_reason_code_of_steps_1_to_19_has_a_vector() -> None:
    from mrtr_state import REASONS

    covered = {v["expected"].get("reason") for v in TOKENS["vectors"]}
    stateless = set(REASONS) - {"replayed", "store_unavailable"}  # step 20 needs a store, not a vector
    assert stateless <= covered


def test_there_are_valid_and_invalid_vectors_for_both_algorithms() -> None:
    headers = {json.dumps(v["id"]) for v in TOKENS["vectors"]}
    assert any("hs256" in h and "valid-" in h for h in headers)
    assert any("eddsa" in h and "valid-" in h for h in headers)
    assert len([v for v in TOKENS["vectors"] if not v["expected"]["valid"]]) >= 30


def test_committed_vectors_equal_the_regenerated_ones() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "spec" / "generate_vectors.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
