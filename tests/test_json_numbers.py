"""No integer beyond the safe range, no number beyond a double, and every other integer read exactly.

Profile, section 5, step 11: a claims set holding an integer literal outside
+/-(2**53 - 1), or a number literal beyond an IEEE 754 double (``1e400``), is
malformed. ``_json.loads`` only runs its per-integer check when the text has a run of
16 digits somewhere (2**53 has 16), so these tests cover both sides of that switch.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtr_state.token import _json

DEPTH = _json.MAX_TEXT_DEPTH
SAFE = _json.MAX_SAFE_INTEGER


@pytest.mark.parametrize(
    "literal", [b"9007199254740992", b"-9007199254740992", b"10000000000000000", b"9" * 309, b"9" * 5000]
)
def test_an_integer_beyond_the_safe_range_is_refused(literal: bytes) -> None:
    with pytest.raises(ValueError, match="beyond the safe range"):
        _json.loads(b'{"state":[1,' + literal + b"]}", max_depth=DEPTH)


@pytest.mark.parametrize("big", [SAFE, -SAFE, 10**15, 10**14 + 7])
def test_an_integer_within_the_safe_range_is_read_exactly(big: int) -> None:
    assert _json.loads(b'{"n":' + str(big).encode() + b"}", max_depth=DEPTH) == {"n": big}


def test_a_long_run_of_digits_in_a_string_is_just_a_string() -> None:
    raw = b'{"s":"' + b"7" * 400 + b'","n":12}'
    assert _json.loads(raw, max_depth=DEPTH) == {"s": "7" * 400, "n": 12}


def test_a_double_overflow_is_refused() -> None:
    with pytest.raises(ValueError, match="beyond the range of a double"):
        _json.loads(b'{"x":1e400}', max_depth=DEPTH)


@settings(deadline=None)  # no timed tests: speed is the benchmark's job
@given(st.lists(st.integers(min_value=-SAFE, max_value=SAFE), max_size=8), st.booleans())
def test_integers_read_the_same_with_or_without_a_long_digit_run(values: list[int], long_run: bool) -> None:
    document = {"ints": values, "s": "5" * (16 if long_run else 3)}
    raw = json.dumps(document).encode()
    parsed = _json.loads(raw, max_depth=DEPTH)
    assert parsed == document
    assert all(type(v) is int for v in parsed["ints"])
