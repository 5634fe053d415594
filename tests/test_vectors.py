"""The Python library against the profile's test vectors (spec/vectors/)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import rfc8785

from mrtr_state import (
    Key,
    Keyring,
    KeyringError,
    arguments_digest,
    canonicalize,
)
from tests.vector_files import VECTORS, assert_verdict, load

ROOT = Path(__file__).resolve().parent.parent
KEYS = load("keys.json")
TOKENS = load("tokens.json")
ARGUMENTS = load("arguments.json")
INVALID_KEYS = load("invalid-keys.json")
BINDABLE = [case for case in ARGUMENTS["vectors"] if not case.get("unbindable")]
UNBINDABLE = [case for case in ARGUMENTS["vectors"] if case.get("unbindable")]
RING = Keyring.from_jwks(KEYS["verifier_jwks"])


@pytest.mark.parametrize("vector", TOKENS["vectors"], ids=lambda v: v["id"])
def test_each_token_vector_gets_its_expected_verdict_and_reason(vector: dict[str, Any]) -> None:
    assert_verdict(TOKENS, RING, vector)


@pytest.mark.parametrize("case", BINDABLE, ids=lambda c: c["id"])
def test_each_argument_vector_canonicalizes_and_digests_as_written(case: dict[str, Any]) -> None:
    # A vector with arguments_text is read from its text, as a request would be (profile 12.3).
    arguments = json.loads(case["arguments_text"]) if "arguments_text" in case else case["arguments"]
    assert arguments == case["arguments"]
    assert canonicalize(arguments).decode("utf-8") == case["canonical"]
    assert arguments_digest(arguments) == case["digest"]


def test_a_repeated_member_name_in_arguments_is_read_last_wins() -> None:
    # Profile 3.4 (issue 32, D2): the digest is that of the object as I-JSON parsers read it.
    case = next(c for c in ARGUMENTS["vectors"] if c["id"] == "duplicate-member-last-wins")
    assert case["arguments_text"].count('"env"') == 2
    assert json.loads(case["arguments_text"])["env"] == "prod"
    assert arguments_digest(json.loads(case["arguments_text"])) == case["digest"]
    assert arguments_digest({"env": "staging", "options": {"force": True}}) != case["digest"]


def nesting(value: Any) -> int:
    """The depth of ``value`` as profile 3.3 counts it: a scalar 0, ``[]`` and ``{}`` 1."""
    if isinstance(value, dict):
        return 1 + max((nesting(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((nesting(v) for v in value), default=0)
    return 0


def test_arguments_nest_at_most_256_levels() -> None:
    # Profile 3.4 (issue 32, D3): 256 levels bind, 257 are unbindable.
    by_id = {c["id"]: c for c in ARGUMENTS["vectors"]}
    assert nesting(by_id["nested-256"]["arguments"]) == 256
    assert nesting(by_id["nested-257"]["arguments"]) == 257
    assert arguments_digest(by_id["nested-256"]["arguments"]) == by_id["nested-256"]["digest"]
    with pytest.raises(ValueError, match="deeper than 256 levels"):
        arguments_digest(by_id["nested-257"]["arguments"])


@pytest.mark.parametrize("case", UNBINDABLE, ids=lambda c: c["id"])
def test_arguments_with_an_integer_beyond_2_53_or_not_an_object_are_unbindable(case: dict[str, Any]) -> None:
    assert set(case) == {"id", "arguments", "unbindable"}
    if not isinstance(case["arguments"], dict):  # present but not an object (profile 3.4, 8.2)
        with pytest.raises(TypeError, match="must be a JSON object"):
            arguments_digest(case["arguments"])
        return
    if nesting(case["arguments"]) > 256:  # nested too deep (profile 3.4, issue 32 D3)
        with pytest.raises(ValueError, match="deeper than 256 levels"):
            arguments_digest(case["arguments"])
        return
    with pytest.raises(ValueError, match="pass such ids") as error:
        arguments_digest(case["arguments"])
    assert "as strings" in str(error.value)


def test_a_fraction_is_judged_by_the_double_nearest_it() -> None:
    # Profile 3.4 (issue 24, D1): 9007199254740991.5 reads as the double 2**53, which is unbindable.
    raw = (VECTORS / "arguments.json").read_text(encoding="utf-8")
    assert '"id": 9007199254740991.5' in raw
    assert json.loads("9007199254740991.5") == 2**53
    with pytest.raises(ValueError, match="pass such ids"):
        arguments_digest(json.loads('{"id": 9007199254740991.5}'))


def test_every_kind_of_arguments_that_is_not_an_object_has_a_vector() -> None:
    kinds = {
        type(case["arguments"]).__name__ for case in UNBINDABLE if not isinstance(case["arguments"], dict)
    }
    assert kinds == {"NoneType", "list", "str", "int", "bool"}


def test_the_unbindable_argument_vectors_cover_each_way_of_writing_a_large_integer() -> None:
    raw = (VECTORS / "arguments.json").read_text(encoding="utf-8")
    for literal in ("9007199254740992", "9007199254740993", "1e23", "1.152921504606847e+18"):
        assert f": {literal}" in raw or f": -{literal}" in raw, literal


@pytest.mark.parametrize("vector", INVALID_KEYS["vectors"], ids=lambda v: v["id"])
def test_each_invalid_key_vector_is_refused_at_load(vector: dict[str, Any]) -> None:
    assert ("jwk" in vector) != ("jwks" in vector)
    if "jwks" in vector:  # a ring whose keys each load alone (profile 12.4)
        for jwk in vector["jwks"]["keys"]:
            Key.from_jwk(jwk)
        with pytest.raises(KeyringError):
            Keyring.from_jwks(vector["jwks"])
        return
    with pytest.raises(KeyringError):
        Key.from_jwk(vector["jwk"])
    with pytest.raises(KeyringError):
        Keyring.from_jwks({"keys": [KEYS["hs256"], vector["jwk"]]})


def test_the_invalid_key_vectors_cover_weak_secrets_kids_and_shared_secrets() -> None:
    ids = [v["id"] for v in INVALID_KEYS["vectors"]]
    for prefix in ("weak-secret-hs256-", "weak-secret-a256gcm-", "kid-", "shared-secret-"):
        assert any(i.startswith(prefix) for i in ids), prefix
    assert "weak-secret-a256gcm-all-zero" in ids
    assert "kid-null" in ids


def test_an_empty_ring_is_refused() -> None:
    # Profile 7.3 (issue 32, D1).
    assert {"keys": []} in [v.get("jwks") for v in INVALID_KEYS["vectors"]]
    with pytest.raises(KeyringError, match="at least one key"):
        Keyring.from_jwks({"keys": []})


@pytest.mark.parametrize("form", ["hs256", "a256gcm"])
@pytest.mark.parametrize("part", ["x", "d"])
def test_an_ed25519_d_or_x_used_as_an_oct_secret_is_a_shared_secret(form: str, part: str) -> None:
    # Profile 7.6 (issue 32, D4): each key loads alone; the ring is refused.
    ring = next(v for v in INVALID_KEYS["vectors"] if v["id"] == f"shared-secret-{form}-eddsa-{part}")["jwks"]
    okp = next(jwk for jwk in ring["keys"] if jwk["kty"] == "OKP")
    octet = next(jwk for jwk in ring["keys"] if jwk["kty"] == "oct")
    assert octet["k"] == okp[part]
    with pytest.raises(KeyringError, match="holds the bytes of the Ed25519 key"):
        Keyring.from_jwks(ring)


def test_the_invalid_key_vectors_cover_the_members_of_every_key_type() -> None:
    ids = {v["id"] for v in INVALID_KEYS["vectors"]}
    for kid in (
        "kid-leading-space",
        "kid-trailing-space",
        "kid-leading-space-eddsa",
        "kid-trailing-space-a256gcm",
    ):
        assert kid in ids
    for kind in ("eddsa-public", "eddsa-private", "a256gcm"):
        assert f"kid-null-{kind}" in ids
    for pattern in ("all-zero", "one-byte-repeated", "pattern-of-3", "pattern-of-8"):
        jwk = next(v["jwk"] for v in INVALID_KEYS["vectors"] if v["id"] == f"weak-secret-no-alg-{pattern}")
        assert "alg" not in jwk
    for member in ("alg-null-oct", "alg-null-eddsa", "use-null-hs256", "use-null-eddsa", "use-null-a256gcm"):
        assert member in ids


def test_the_invalid_key_vectors_cover_all_eight_small_order_points() -> None:
    small = [v for v in INVALID_KEYS["vectors"] if v["id"].startswith("small-order-")]
    assert len({v["jwk"]["x"] for v in small}) == 8


def test_no_valid_key_vector_is_refused() -> None:
    for name in ("hs256", "eddsa", "eddsa_public", "unknown", "a256gcm"):
        Key.from_jwk(KEYS[name])
    Keyring.from_jwks(KEYS["verifier_jwks"])
    Keyring.from_jwks(KEYS["encrypted_verifier_jwks"])


@pytest.mark.parametrize("case", BINDABLE, ids=lambda c: c["id"])
def test_argument_vectors_agree_with_an_independent_rfc8785_implementation(case: dict[str, Any]) -> None:
    assert rfc8785.dumps(case["arguments"]).decode("utf-8") == case["canonical"]


def test_the_rfc8785_package_refuses_integers_beyond_2_53_too() -> None:
    with pytest.raises(rfc8785.IntegerDomainError):
        rfc8785.dumps({"id": 2**53})


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


def run_generator(option: str) -> subprocess.CompletedProcess[str]:
    """``spec/generate_vectors.py OPTION`` in a child process; it must exit 0."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "spec" / "generate_vectors.py"), option],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result


def test_committed_vectors_equal_the_regenerated_ones() -> None:
    run_generator("--check")


def test_coverage_counts_every_vector_and_reason_code_of_the_files() -> None:
    result = run_generator("--coverage")
    listed: dict[str, Counter[str]] = {}
    for line in result.stdout.splitlines():
        if not line.startswith(" "):  # "tokens.json: 159 vectors" opens a file's section
            current = listed.setdefault(line.split(":")[0], Counter())
        elif not line.strip().startswith("reason codes no vector expects"):
            # "  step_01_size   3  too_large 3": the group, its count, then reason and count pairs
            _group, total, *pairs = line.replace(",", " ").split()
            counts = {reason: int(count) for reason, count in zip(pairs[::2], pairs[1::2], strict=True)}
            assert sum(counts.values()) == int(total), line
            current.update(counts)
    for name in ("tokens.json", "encrypted.json"):
        vectors = load(name)["vectors"]
        expected = Counter(v["expected"].get("reason", "valid") for v in vectors)
        assert listed[name] == expected, name
