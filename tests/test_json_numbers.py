"""No number literal beyond the range of a double, and every other integer read exactly.

Profile, section 5, step 11: a claims set holding a number literal whose value is
beyond an IEEE 754 double (``1e400``, an integer of more than 308 digits) is
malformed. ``_json.loads`` only runs its per-integer check when the text has a run of
309 digits somewhere, so these tests cover both sides of that switch.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtr_state import _json

DEPTH = _json.MAX_TEXT_DEPTH


@pytest.mark.parametrize("digits", [309, 400, 5000])
def test_an_integer_beyond_a_double_is_refused(digits: int) -> None:
    raw = b'{"state":[1,' + b"9" * digits + b"]}"
    with pytest.raises(ValueError, match=r"(?i)beyond the range of a double|exceeds the limit"):
        _json.loads(raw, max_depth=DEPTH)


def test_a_negative_integer_beyond_a_double_is_refused() -> None:
    with pytest.raises(ValueError, match="beyond the range of a double"):
        _json.loads(b'{"n":-' + b"9" * 309 + b"}", max_depth=DEPTH)


@pytest.mark.parametrize("big", [int("9" * 308), 10**308, -(10**308)])
def test_an_integer_within_a_double_is_read_exactly(big: int) -> None:
    # 10**308 has 309 digits and is still below the largest double (1.79e308).
    assert _json.loads(b'{"n":' + str(big).encode() + b"}", max_depth=DEPTH) == {"n": big}


def test_a_long_run_of_digits_in_a_string_is_just_a_string() -> None:
    raw = b'{"s":"' + b"7" * 400 + b'","n":12}'
    assert _json.loads(raw, max_depth=DEPTH) == {"s": "7" * 400, "n": 12}


def test_a_double_overflow_is_refused() -> None:
    with pytest.raises(ValueError, match="beyond the range of a double"):
        _json.loads(b'{"x":1e400}', max_depth=DEPTH)


@settings(deadline=None)  # no timed tests: speed is the benchmark's job
@given(st.lists(st.integers(min_value=-(10**308) + 1, max_value=10**308 - 1), max_size=8), st.booleans())
def test_integers_read_the_same_with_or_without_a_long_digit_run(values: list[int], long_run: bool) -> None:
    document = {"ints": values, "s": "5" * (309 if long_run else 3)}
    raw = json.dumps(document).encode()
    parsed = _json.loads(raw, max_depth=DEPTH)
    assert parsed == document
    assert all(type(v) is int for v in parsed["ints"])
