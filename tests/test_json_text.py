"""A segment holds one JSON text: white space around the value is allowed, nothing else.

RFC 8259 allows space, tab, line feed and carriage return around the value; a byte
order mark, a second value or any other trailing byte makes the segment malformed.
"""

from __future__ import annotations

import pytest

from mrtr_state.token import _json

DEPTH = _json.MAX_TEXT_DEPTH


@pytest.mark.parametrize("text", [b' {"a":1}', b'{"a":1}\r\n', b'\t\n{"a":1} \t'])
def test_white_space_around_the_value_is_allowed(text: bytes) -> None:
    assert _json.loads(text, max_depth=DEPTH) == {"a": 1}


@pytest.mark.parametrize("text", [b'{"a":1}x', b'{"a":1} {}', b"", b"  ", b'\xef\xbb\xbf{"a":1}'])
def test_anything_but_white_space_around_the_value_is_refused(text: bytes) -> None:
    with pytest.raises(ValueError, match=r"(?i)expecting value|extra data"):
        _json.loads(text, max_depth=DEPTH)
