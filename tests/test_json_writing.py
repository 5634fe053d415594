"""Writing a segment: compact UTF-8 JSON, and a clear ValueError for what JSON cannot hold.

The encoder skips its own cycle check for speed (seal runs check_state first), so a
value that refers to itself must still end in a ValueError, never a RecursionError.
"""

from __future__ import annotations

from typing import Any

import pytest

from mrtr_state import Keyring, StateSealer
from mrtr_state.token import _json


def self_referring_list() -> list[Any]:
    value: list[Any] = []
    value.append(value)
    return value


def self_referring_dict() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["again"] = {"inner": value}
    return value


@pytest.mark.parametrize("make", [self_referring_list, self_referring_dict])
def test_a_value_that_refers_to_itself_is_refused_with_a_value_error(make: Any) -> None:
    with pytest.raises(ValueError, match="refers to itself"):
        _json.dumps(make())


@pytest.mark.parametrize("make", [self_referring_list, self_referring_dict])
def test_a_state_that_refers_to_itself_is_refused_before_it_is_written(make: Any) -> None:
    sealer = StateSealer(Keyring.generate("HS256"), issuer="https://files.example.com")
    with pytest.raises(ValueError, match="nests deeper than 32"):
        sealer.seal(make(), user="alice", tool="deploy")


def test_output_is_compact_utf8() -> None:
    assert _json.dumps({"a": [1, 2.5, None, True], "é": "ü"}) == '{"a":[1,2.5,null,true],"é":"ü"}'.encode()
