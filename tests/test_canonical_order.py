"""RFC 8785 member order: by UTF-16 code units, whatever the keys hold.

canonicalize sorts ASCII-only keys on the key itself (the same order) and every
other object by the UTF-16 encoding of its keys; both must agree with an independent
implementation, the rfc8785 package, including keys beyond the Basic Multilingual
Plane, where code point order and UTF-16 order differ.
"""

from __future__ import annotations

from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtr_state import canonicalize

ASCII_KEYS = st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=6)
ANY_KEYS = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=6)
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1), st.text(max_size=5))


def objects(keys: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.recursive(
        LEAVES,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=5),
        max_leaves=30,
    )


@settings(deadline=None)  # no timed tests: speed is the benchmark's job
@given(st.dictionaries(ASCII_KEYS, objects(ASCII_KEYS), max_size=8))
def test_ascii_keys_sort_as_rfc8785_sorts_them(value: dict[str, Any]) -> None:
    assert canonicalize(value) == rfc8785.dumps(value)


@settings(deadline=None)  # no timed tests: speed is the benchmark's job
@given(st.dictionaries(ANY_KEYS, objects(ANY_KEYS), max_size=8))
def test_any_keys_sort_as_rfc8785_sorts_them(value: dict[str, Any]) -> None:
    assert canonicalize(value) == rfc8785.dumps(value)


def test_a_key_beyond_the_bmp_sorts_before_a_private_use_character() -> None:
    # U+1F600 is D83D DE00 in UTF-16, below U+E000; by code point it would come last.
    assert canonicalize({"\ue000": 1, "\U0001f600": 2, "a": 3}) == '{"a":3,"😀":2,"\ue000":1}'.encode()


@pytest.mark.parametrize("key", [1, None, ("a",)])
def test_a_key_that_is_not_a_string_is_refused_by_name(key: Any) -> None:
    with pytest.raises(TypeError, match=f"a {type(key).__name__} key is not JSON"):
        canonicalize({"a": 1, key: 2})
