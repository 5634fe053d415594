"""Nesting is bounded before parsing, and the bound counts brackets outside strings only.

``_json.loads`` refuses JSON text that nests deeper than its limit without parsing
it (profile, section 5, steps 4 and 11). The check runs on the raw bytes, so these
tests hold it to the value's real depth, with strings full of brackets, quotes and
backslashes that must not count.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtr_state.token import _json

TRICKY_TEXT = st.text(alphabet='[]{}"\\/ab\u00e9\u2028', max_size=8)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1), TRICKY_TEXT)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY_TEXT, inner, max_size=3),
    max_leaves=60,
)


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


def nested(levels: int, inner: Any = "][}{") -> Any:
    value = inner
    for i in range(levels):
        value = [value] if i % 2 else {"k[": value}
    return value


@settings(max_examples=400, deadline=None)  # no timed tests: speed is the benchmark's job
@given(VALUES, st.integers(1, 6), st.booleans())
def test_text_is_refused_exactly_when_it_nests_deeper_than_the_limit(
    value: Any, limit: int, ascii_only: bool
) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    if depth(value) > limit:
        with pytest.raises(ValueError, match="nested deeper"):
            _json.loads(raw, max_depth=limit)
    else:
        assert _json.loads(raw, max_depth=limit) == value


@pytest.mark.parametrize("levels", [33, 200, 5000])
def test_nesting_over_the_limit_is_refused_however_deep(levels: int) -> None:
    raw = json.dumps(nested(levels)).encode() if levels < 900 else b"[" * levels + b"]" * levels
    with pytest.raises(ValueError, match="nested deeper"):
        _json.loads(raw, max_depth=_json.MAX_TEXT_DEPTH - 1)


def test_brackets_inside_strings_do_not_count() -> None:
    inner = '\\"' + "[" * 100 + "{" * 100
    raw = json.dumps(nested(_json.MAX_TEXT_DEPTH, inner)).encode()
    assert _json.loads(raw, max_depth=_json.MAX_TEXT_DEPTH) == nested(_json.MAX_TEXT_DEPTH, inner)


@pytest.mark.parametrize(
    ("text", "refused_by"),
    [
        (b"]" * 40, "Expecting value"),  # the parser: nothing opened, nothing nested
        (b"[" * 40 + b"}" * 40, "nested deeper"),  # the depth check: 40 openings before a closing one
        (b'["' + b"[" * 40 + b"]", "Unterminated string"),  # the parser: the brackets are in a string
    ],
)
def test_unbalanced_brackets_are_refused(text: bytes, refused_by: str) -> None:
    with pytest.raises(ValueError, match=refused_by):
        _json.loads(text, max_depth=_json.MAX_TEXT_DEPTH)


@pytest.mark.parametrize("kind", ["arrays", "objects", "both"])
@pytest.mark.parametrize("padding", ["", "[" * 40, "{" * 40])
@pytest.mark.parametrize("extra", [0, 1])
def test_the_quick_bound_and_the_measure_agree_at_the_limit(kind: str, padding: str, extra: int) -> None:
    # Few objects and "[" are a bound (the objects the reader built, the "[" in the
    # text); more than the limit, strings' brackets included, and the depth is measured.
    limit = 8
    value: Any = padding
    for level in range(limit + extra):
        array = kind == "arrays" or (kind == "both" and level % 2 == 1)
        value = [value, 1] if array else {"k": value, "n": 1}
    raw = json.dumps(value, separators=(",", ":")).encode()
    if extra:
        with pytest.raises(ValueError, match="nested deeper"):
            _json.loads(raw, max_depth=limit)
    else:
        assert _json.loads(raw, max_depth=limit) == value


@pytest.mark.parametrize(
    ("text", "limit", "expected"), [(b"", 0, True), (b"[", 0, False), (b"a[b[", 2, True), (b"[[[", 2, False)]
)
def test_at_most_counts_a_byte_no_further_than_the_limit(text: bytes, limit: int, expected: bool) -> None:
    assert _json._at_most(text, b"[", limit) is expected
