"""A state is checked and written once: EncodedState, and the claims JSON built around it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mrtr_state import StateSealer, decode_unverified
from mrtr_state.binding import Binding
from mrtr_state.mcp.plaintext import claim_of, encoded_claim_of
from mrtr_state.token import _json, claims

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(state=_JSON, digest=st.none() | st.just("A" * 43))
def test_the_claims_json_around_an_encoded_state_is_the_bytes_of_the_whole_claim_set(
    state: Any, digest: str | None
) -> None:
    fields: dict[str, Any] = {
        "issuer": "https://files.example.com",
        "user": "alice",
        "aud": "tools/call:deploy",
        "iat": 1767225600,
        "ttl": 600,
        "jti": "B" * 22,
        "args_sha256": digest,
    }
    expected = _json.dumps(claims.build(state=state, **fields))
    assert claims.encode(state=claims.EncodedState(state), **fields) == expected
    # A plain seal writes a checked state with the other claims in one pass: the same bytes.
    assert claims.encode(state=state, **fields) == expected


@pytest.mark.parametrize(
    "text",
    [
        '{"step": 2, "seats": ["1A"]}',
        "[1, 2]",
        "abc",
        '"quoted"',
        "{not json",
        '{"a": 1, "a": 2}',
        '{"big": 9007199254740993}',
    ],
)
def test_the_encoded_claim_of_a_handler_text_is_the_claim_claim_of_gives(text: str) -> None:
    assert encoded_claim_of(text).json == _json.dumps(claim_of(text))


def test_an_encoded_state_refuses_what_seal_refuses() -> None:
    with pytest.raises(ValueError, match="safe range"):
        claims.EncodedState({"n": 2**60})
    with pytest.raises(TypeError, match="not JSON"):
        claims.EncodedState({"n": object()})


def test_seal_encoded_takes_only_an_encoded_state(sealer: StateSealer) -> None:
    binding = Binding.of(user="alice", tool="deploy", arguments={})
    with pytest.raises(TypeError, match="EncodedState"):
        sealer.seal_encoded({"step": 1}, binding)  # type: ignore[arg-type]
    token = sealer.seal_encoded(claims.EncodedState({"step": 1}), binding)
    assert decode_unverified(token)[1]["state"] == {"step": 1}
