"""RFC 8785 canonicalization and the argument digest: the cases the RFC is about."""

from __future__ import annotations

import hashlib
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtr_state import arguments_digest, canonicalize
from mrtr_state.binding.canonical import _canonical, _flat


@pytest.mark.parametrize(
    ("number", "text"),
    [
        # RFC 8785, appendix B, and the ECMAScript formatting rules it relies on.
        (0.0, "0"),
        (-0.0, "0"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (333333333.33333329, "333333333.3333333"),
        (1e23, "1e+23"),
        (-1.5e-7, "-1.5e-7"),
        (4.5, "4.5"),
        (0.1, "0.1"),
        (1.0, "1"),
        (9007199254740993, "9007199254740992"),  # an integer beyond 2**53 is its nearest double
        (-9007199254740991, "-9007199254740991"),
        (295147905179352825856, "295147905179352830000"),
    ],
)
def test_numbers_are_formatted_as_ecmascript_formats_doubles(number: float, text: str) -> None:
    assert canonicalize(number).decode() == text


def test_members_are_ordered_by_utf16_code_units() -> None:
    value = {"\ufb33": 1, "\U0001f600": 2, "\u20ac": 3, "\r": 4, "1": 5, "\u0080": 6, "\u00f6": 7}
    keys = ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]
    assert (
        canonicalize(value).decode()
        == "{" + ",".join(f'"{k}":{value[k]}' for k in keys).replace("\r", "\\r") + "}"
    )


def test_strings_escape_only_what_rfc8785_escapes() -> None:
    text = '\u0000\u001f"\\/\b\f\n\r\t\u007f\u2028é😀'
    assert canonicalize(text).decode() == '"\\u0000\\u001f\\"\\\\/\\b\\f\\n\\r\\t\u007f\u2028é😀"'


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (math.nan, ValueError),
        (math.inf, ValueError),
        (10**400, ValueError),
        ("\ud800", ValueError),
        ({"\udc00": 1}, ValueError),
        ({1: "a"}, TypeError),
        ({1, 2}, TypeError),
        (b"bytes", TypeError),
    ],
)
def test_values_that_are_not_i_json_cannot_be_canonicalized(value: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        canonicalize(value)


def test_hostile_nesting_is_refused_without_exhausting_the_stack() -> None:
    value: Any = 1
    for _ in range(10_000):
        value = [value]
    with pytest.raises(ValueError, match="deeper than"):
        canonicalize(value)


def test_the_digest_is_unpadded_base64url_sha256_of_the_canonical_form() -> None:
    import base64

    arguments = {"env": "prod", "replicas": 3}
    raw = hashlib.sha256(b'{"env":"prod","replicas":3}').digest()
    assert arguments_digest(arguments) == base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
    assert len(arguments_digest({})) == 43


def test_the_digest_needs_a_json_object() -> None:
    with pytest.raises(TypeError, match="JSON object"):
        arguments_digest([1, 2])  # type: ignore[arg-type]


FLAT_VALUES = st.one_of(
    st.text(max_size=5),
    st.booleans(),
    st.none(),
    st.integers(-(2**53) - 2, 2**53 + 2),
    st.sampled_from([1.0, 0.5, "\ud800", [], {}]),
)
FLAT_KEYS = st.text(max_size=4) | st.sampled_from(["é", "\U0001f600", "\uffff", "a\ud800"])


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(FLAT_KEYS, FLAT_VALUES, max_size=6))
def test_the_flat_writer_writes_what_the_canonical_writer_writes(arguments: dict[str, object]) -> None:
    flat = _flat(arguments)
    try:
        canonical: bytes | None = _canonical(arguments, bind=True)
    except (TypeError, ValueError):
        canonical = None
    assert flat is None or flat == canonical
