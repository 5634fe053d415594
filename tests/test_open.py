"""How open() treats its input, beyond the vectors: types, size, time, leeway, lifetime, messages."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtr_state import REASONS, InvalidRequestState, Keyring, StateSealer
from tests.conftest import ISSUER, Clock, SealerFactory

REQUEST = {"user": "alice", "tool": "deploy"}


def reason_of(sealer: StateSealer, token: object, **request: object) -> str:
    with pytest.raises(InvalidRequestState) as caught:
        sealer.open(token, **{**REQUEST, **request})  # type: ignore[arg-type]
    return caught.value.reason


@pytest.mark.parametrize("value", [None, b"a.b.c", 42, ["a", "b", "c"], {"token": "x"}])
def test_a_value_that_is_not_a_string_is_malformed(sealer: StateSealer, value: object) -> None:
    assert reason_of(sealer, value) == "malformed"


def test_the_size_cap_is_checked_before_anything_else(sealer: StateSealer) -> None:
    assert reason_of(sealer, "\x00" * (sealer.max_token_bytes + 1)) == "too_large"
    assert reason_of(sealer, "A" * (1 << 20)) == "too_large"
    assert reason_of(sealer, "\x00" * sealer.max_token_bytes) == "malformed"


def test_a_smaller_size_cap_refuses_tokens_a_larger_one_accepts(make_sealer: SealerFactory) -> None:
    token = make_sealer().seal({"filler": "x" * 600}, **REQUEST)
    assert make_sealer().open(token, **REQUEST) == {"filler": "x" * 600}
    assert reason_of(make_sealer(max_token_bytes=512), token) == "too_large"


def test_seal_refuses_to_mint_a_token_over_the_size_cap(make_sealer: SealerFactory) -> None:
    with pytest.raises(ValueError, match="over the cap of 1024"):
        make_sealer(max_token_bytes=1024).seal({"filler": "x" * 1024}, **REQUEST)


def test_exactly_at_exp_is_refused_and_one_second_before_is_accepted(
    sealer: StateSealer, clock: Clock
) -> None:
    token = sealer.seal(1, **REQUEST)
    clock.advance(sealer.ttl - 1)
    assert sealer.open(token, **REQUEST) == 1
    clock.advance(1)
    assert reason_of(sealer, token) == "expired"


def test_leeway_extends_exp_and_tolerates_iat_ahead(make_sealer: SealerFactory, clock: Clock) -> None:
    token = make_sealer().seal(1, **REQUEST)
    lenient = make_sealer(leeway=30)
    clock.advance(600 + 29)
    assert lenient.open(token, **REQUEST) == 1
    clock.advance(1)
    assert reason_of(lenient, token) == "expired"
    clock.now -= 600 + 30 + 30  # the verifier's clock is now 30 s behind the minter's
    assert lenient.open(token, **REQUEST) == 1
    clock.advance(-1)
    assert reason_of(lenient, token) == "issued_in_future"
    assert reason_of(make_sealer(), token) == "issued_in_future"


def test_a_lifetime_longer_than_the_verifier_allows_is_refused(make_sealer: SealerFactory) -> None:
    token = make_sealer(ttl=900, max_lifetime=900).seal(1, **REQUEST)
    assert make_sealer(max_lifetime=900).open(token, **REQUEST) == 1
    assert reason_of(make_sealer(), token) == "lifetime_too_long"


def test_the_clock_is_read_in_whole_seconds(make_sealer: SealerFactory, clock: Clock) -> None:
    clock.now = 1_767_225_600.999
    sealer = make_sealer(ttl=1, max_lifetime=1)
    token = sealer.seal(1, **REQUEST)
    assert sealer.open(token, **REQUEST) == 1  # iat = exp - 1 = 1767225600
    clock.now = 1_767_225_601.0
    assert reason_of(sealer, token) == "expired"


def test_a_refusal_message_holds_no_state_claim_or_key_material(ring: Keyring, clock: Clock) -> None:
    secret_marker = "SECRET-MARKER-41"
    sealer = StateSealer(ring, issuer=ISSUER, clock=clock)
    token = sealer.seal({"note": secret_marker}, user="alice-id-7", tool="deploy")
    jwks_text = str(ring.private_jwks())
    for request in ({"user": "bob"}, {"tool": "other"}, {"arguments": {"x": 1}}):
        try:
            sealer.open(token, **{**REQUEST, **request})  # type: ignore[arg-type]
        except InvalidRequestState as refusal:
            shown = f"{refusal} {refusal!r} {refusal.detail} {refusal.args}"
            assert secret_marker not in shown
            assert "alice-id-7" not in shown
            assert token not in shown
            for jwk in ring.private_jwks()["keys"]:
                assert jwk.get("k", jwk.get("d", "")) not in shown
        else:
            assert request == {"arguments": {"x": 1}}  # no binding: opens
    assert secret_marker not in jwks_text


def test_the_message_of_each_reason_is_the_fixed_sentence() -> None:
    for reason, sentence in REASONS.items():
        refusal = InvalidRequestState(reason, "a detail")
        assert str(refusal) == sentence
        assert refusal.reason == reason
        assert isinstance(refusal, ValueError)


def test_an_unknown_reason_code_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown reason code"):
        InvalidRequestState("nope")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300) | st.binary(max_size=300).map(lambda b: b.decode("latin-1")))
def test_no_string_makes_open_raise_anything_but_a_refusal(token: str) -> None:
    sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER)
    with pytest.raises(InvalidRequestState):
        sealer.open(token, **REQUEST)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["eyJ", "e30", "W10", ".", "AA", "-_", "=", "fQ", "InR5cCI6", "bnVsbA"]),
        max_size=12,
    ).map("".join)
)
def test_no_token_shaped_string_makes_open_raise_anything_but_a_refusal(token: str) -> None:
    sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER)
    with pytest.raises(InvalidRequestState):
        sealer.open(token, **REQUEST)


def test_open_with_a_bad_request_description_is_a_programming_error(sealer: StateSealer) -> None:
    token = sealer.seal(1, **REQUEST)
    with pytest.raises(TypeError, match="exactly one target"):
        sealer.open(token, user="alice")
    with pytest.raises(TypeError, match="exactly one target"):
        sealer.open(token, user="alice", tool="a", prompt="b")
    with pytest.raises(ValueError, match="user must not be empty"):
        sealer.open(token, user="", tool="deploy")
    with pytest.raises(ValueError, match="needs a StateSealer made with a replay_store"):
        sealer.open(token, **REQUEST, consume=True)


@pytest.mark.parametrize("tail", [":", " ", "\u00e9", "=", "+", "/", "*", "A", "AA", ".A"])
def test_the_common_token_path_refuses_as_the_full_path_does(tail: str) -> None:
    # jws.verify_known (what open tries first) leaves every damaged token to jws.verify.
    from mrtr_state import Key
    from mrtr_state.token import jws

    sealer = StateSealer(Keyring([Key.generate("HS256")]), issuer=ISSUER)
    changed = sealer.seal({"a": 1}, user="alice", tool="deploy") + tail
    ring = sealer.ring
    assert isinstance(ring, Keyring)
    with pytest.raises(InvalidRequestState) as full:
        jws.verify(changed, sealer.max_token_bytes, jws.known_headers(ring), ring)
    with pytest.raises(InvalidRequestState) as opened:
        sealer.open(changed, user="alice", tool="deploy")
    assert (opened.value.reason, opened.value.detail) == (full.value.reason, full.value.detail)
