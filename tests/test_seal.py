"""What seal() writes, and what it refuses to write."""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import pytest

from mrtr_state import Keyring, StateSealer, arguments_digest, decode_unverified
from tests.conftest import ISSUER, NOW, Clock, SealerFactory

REQUEST = {"user": "alice", "tool": "deploy"}


def test_the_token_carries_the_profile_header_and_claims(sealer: StateSealer) -> None:
    token = sealer.seal({"step": 1}, user="alice", tool="deploy", arguments={"env": "prod"})
    header, claims = decode_unverified(token)
    key = sealer.ring.signing_key
    assert header == {"alg": key.alg, "typ": "mrtr-state+jwt", "kid": key.kid}
    assert list(claims) == ["iss", "sub", "aud", "iat", "exp", "jti", "args_sha256", "state"]
    assert claims["iss"] == ISSUER
    assert claims["sub"] == "alice"
    assert claims["aud"] == "tools/call:deploy"
    assert claims["iat"] == NOW
    assert claims["exp"] == NOW + 600
    assert claims["args_sha256"] == arguments_digest({"env": "prod"})
    assert claims["state"] == {"step": 1}


def test_the_header_segment_is_compact_json_in_a_fixed_order(sealer: StateSealer) -> None:
    import base64

    segment = sealer.seal(1, **REQUEST).split(".")[0]
    key = sealer.ring.signing_key
    expected = f'{{"alg":"{key.alg}","typ":"mrtr-state+jwt","kid":"{key.kid}"}}'
    assert base64.urlsafe_b64decode(segment + "==").decode() == expected


def test_every_token_has_a_fresh_128_bit_jti(sealer: StateSealer) -> None:
    ids = {decode_unverified(sealer.seal(1, **REQUEST))[1]["jti"] for _ in range(200)}
    assert len(ids) == 200
    assert {len(i) for i in ids} == {22}


def test_the_jti_comes_from_the_injected_entropy(make_sealer: SealerFactory) -> None:
    sealer = make_sealer(entropy=lambda n: bytes(n))
    assert decode_unverified(sealer.seal(1, **REQUEST))[1]["jti"] == "A" * 22


def test_without_arguments_there_is_no_binding_claim(sealer: StateSealer) -> None:
    assert "args_sha256" not in decode_unverified(sealer.seal(1, **REQUEST))[1]


def test_ttl_sets_the_lifetime(make_sealer: SealerFactory) -> None:
    claims = decode_unverified(make_sealer(ttl=60).seal(1, **REQUEST))[1]
    assert claims["exp"] - claims["iat"] == 60


@pytest.mark.parametrize(
    ("state", "error", "message"),
    [
        ({1, 2}, TypeError, "set, which is not JSON-serialisable"),
        (object(), TypeError, "not JSON-serialisable"),
        ((1, 2), TypeError, "tuple"),
        ({1: "a"}, TypeError, "int key"),
        (b"bytes", TypeError, "bytes"),
        ({"x": math.nan}, ValueError, "non-finite"),
        ({"x": math.inf}, ValueError, "non-finite"),
        ({"x": 2**53}, ValueError, "safe range"),
        ({"x": -(2**53)}, ValueError, "safe range"),
        ({"x": "\ud800"}, ValueError, "lone surrogate"),
    ],
)
def test_seal_refuses_a_state_the_profile_cannot_carry_exactly(
    sealer: StateSealer, state: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        sealer.seal(state, **REQUEST)


def test_seal_refuses_a_state_nested_deeper_than_32_levels(sealer: StateSealer) -> None:
    state: Any = 1
    for _ in range(32):
        state = [state]
    sealer.seal(state, **REQUEST)
    with pytest.raises(ValueError, match="deeper than 32"):
        sealer.seal([state], **REQUEST)
    with pytest.raises(ValueError, match="deeper than 32"):
        sealer.seal({"a": state}, **REQUEST)


def test_seal_accepts_every_kind_of_json_value(sealer: StateSealer) -> None:
    for state in (None, True, 0, -1.5, "text", [], {}, OrderedDict(a=1), [{"a": [None]}]):
        assert sealer.open(sealer.seal(state, **REQUEST), **REQUEST) == state


def test_seal_refuses_arguments_that_are_not_a_json_object(sealer: StateSealer) -> None:
    with pytest.raises(TypeError, match="JSON object"):
        sealer.seal(1, user="alice", tool="deploy", arguments=["env", "prod"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-finite"):
        sealer.seal(1, user="alice", tool="deploy", arguments={"x": math.inf})


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"issuer": ""}, ValueError, "issuer must not be empty"),
        ({"issuer": None}, TypeError, "issuer must be a string"),
        ({"ttl": 0}, ValueError, "ttl must be at least 1"),
        ({"ttl": 60.5}, TypeError, "ttl must be an int"),
        ({"ttl": 900}, ValueError, "must not exceed max_lifetime"),
        ({"leeway": -1}, ValueError, "leeway must be from 0 to 300"),
        ({"leeway": 301}, ValueError, "leeway must be from 0 to 300"),
        ({"max_token_bytes": 100}, ValueError, "at least 512"),
        ({"clock": 5}, TypeError, "callables"),
        ({"replay_store": object()}, TypeError, "redeem"),
    ],
)
def test_a_sealer_with_bad_options_is_refused_when_made(
    ring: Keyring, clock: Clock, options: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        StateSealer(ring, **{"issuer": ISSUER, "clock": clock, **options})


def test_options_are_keyword_only(ring: Keyring) -> None:
    with pytest.raises(TypeError):
        StateSealer(ring, ISSUER)  # type: ignore[misc]
    sealer = StateSealer(ring, issuer=ISSUER)
    with pytest.raises(TypeError):
        sealer.seal(1, "alice", "deploy")  # type: ignore[misc]


def test_a_sealer_needs_a_keyring(clock: Clock) -> None:
    with pytest.raises(TypeError, match="Keyring"):
        StateSealer({"keys": []}, issuer=ISSUER)  # type: ignore[arg-type]
