"""The state's text taken from the verified payload is byte for byte the text writing it gives.

``_json.is_written_as`` vouches that a text the strict reader read is what
``_json.dumps`` writes for the value read; ``claims.state_json`` slices the state's
text from a payload laid out as the sealer writes it. Both are fast paths for the
``requestState`` a handler sees on a retry (``mcp.plaintext.text_of``), which must be
exactly the text writing the verified state gives: every test here holds the fast
path to ``dumps``, including texts that read to the same value but are written
otherwise (escapes, number spellings, white space).
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mrtr_state import InvalidRequestState, Keyring, StateSealer
from mrtr_state.binding.binding import Binding
from mrtr_state.mcp.plaintext import text_of
from mrtr_state.token import _json, claims
from tests.conftest import ISSUER, NOW
from tests.json_strategies import SAFE, json_values

BINDING = Binding("alice", "tool", "deploy", {"env": "prod"})

# Texts that read to a value, with whether they are what writing that value gives.
TRICKY: list[tuple[bytes, bool]] = [
    (b'{"a":1}', True),
    (b'{"a":1.0}', True),
    (b'{"a":1e2}', False),  # 100.0
    (b'{"a":-0}', False),  # 0
    (b'{"a":-0.0}', True),
    (b'{"a":1.50}', False),  # 1.5
    (b'{"a":1E+16}', False),  # 1e+16
    (b'{"a":1e+16}', True),
    (b'{"a":2.25e-7}', False),  # 2.25e-07
    (b'{"a":2.25e-07}', True),
    (b'{"a":[1.5,-3.0,0.1]}', True),
    (b'{"a":true,"b":false,"c":null,"d":1e-0}', False),  # 1.0
    (b'{"a":123456789012345,"b":-9007199254740991}', True),
    (b'{"a":"x\\"y"}', True),
    (b'{"a":"x\\\\"}', True),
    (b'{"a":"\\\\\\""}', True),
    (b'{"a":"\\\\n"}', True),
    (b'{"a":"\\n\\t\\r\\b\\f"}', True),
    (b'{"a":"\\u00e9"}', False),  # written as the character
    (b'{"a":"\\u0041"}', False),
    (b'{"a":"\\/"}', False),
    (b'{"a":"\\u001f"}', True),  # written so, but not vouched for: the fast path says False
    (b'{"a":"\xc3\xa9 \xe2\x80\xa8\x7f"}', True),
    (b'{"a": 1}', False),
    (b'{"a":1} ', False),
    (b'{\n"a":1}', False),
    (b'{"a":"b c","d":-0}', False),
    (b'{"a":"-0,","b":"1.50","c":"1e2"}', True),
    (b"[1,-0]", False),
    (b"-0", False),
    (b"0.1", True),
    (b'{"z":1,"a":{"y":[],"b":{}}}', True),
    (b'[[[[]]],{},""]', True),
    (b'"plain"', True),
    (b'{"state":{"state":1}}', True),
    (b"[-1,-25,[-3]]", True),
    (b'{"a":[-0.0,-5,0,1.25]}', True),
    (b'{"a":"x:1.5","b":"y,-0,","c":"key:example","d":"[-"}', True),
    (b'{"a":"x:1.5","b":-0}', False),
    (b'{"a":"x y","b":[1,2]}', True),
    # A space in a string with a number outside that reads as a float or a negative one.
    (b'{"a":"x y","b":[1.5,-2,1e+16]}', True),
    (b'{"a":"x y","b":[1.50,-2]}', False),
    (b'{"a":"x y","b":-0}', False),
    (b'{"a":"x y","b":[2,-0.0]}', True),
    # Strings that look like a float or a negative number after a value's start.
    (b'{"k":"x:-y","u":"urn:example","l":"[e,E,.5"}', True),
    (b'{"k":"x:-y","u":"urn:example","n":1E+16}', False),
    (b'{"p":"a b","k":"x:-y,1.0","l":[true,false,null,0]}', True),
]


@pytest.mark.parametrize(("text", "written"), TRICKY)
def test_a_text_is_vouched_for_only_when_writing_gives_it(text: bytes, written: bool) -> None:
    value = _json.loads(text, max_depth=_json.MAX_TEXT_DEPTH)
    assert (_json.dumps(value) == text) is written
    vouched = _json.is_written_as(text, value)
    if vouched:
        assert _json.dumps(value) == text
    # Every text this library writes is vouched for, but a control character's \u00xx.
    assert vouched is (written and b"\\u" not in text)


@pytest.mark.parametrize(("text", "written"), TRICKY)
def test_reading_vouches_for_a_text_or_its_numbers_only_when_writing_gives_them(
    text: bytes, written: bool
) -> None:
    value, whole, numbers = _json.loads_written(text, max_depth=_json.MAX_TEXT_DEPTH)
    assert repr(value) == repr(_json.loads(text, max_depth=_json.MAX_TEXT_DEPTH))
    if whole:
        assert numbers
        assert _json.dumps(value) == text
    if numbers:
        # Told that the numbers are as written, is_written_as still vouches exactly as without.
        assert _json.is_written_as(text, value, numbers_as_written=True) is (written and b"\\u" not in text)


# Texts with whether reading vouches for them whole (_json.loads_written), and why not.
WHOLE: list[tuple[bytes, bool]] = [
    (b'{"a":1,"b":[true,false,null],"c":{}}', True),
    (b'{"a":"release-1.2","b":"file-0001.tar.gz"}', True),
    (b'{"a":-1,"b":[-5,-10],"c":-0.0,"d":1.5,"e":1e+16}', True),
    (b'{"a":"\xc3\xa9\xe2\x80\xa8"}', True),
    (b'{"a":-0}', False),  # reads as 0
    (b'{"a":[-0]}', False),
    (b'{"a":-0,"b":1}', False),
    (b"-0", False),
    (b'{"a":1.50}', False),  # reads as 1.5
    (b'{"a":1e5}', False),  # reads as 100000.0
    (b'{"a":1E+16}', False),
    (b'{"a":1234567890123456,"b":1}', False),  # read with the integer hook: not looked at
    (b'{"a": 1}', False),  # white space
    (b'{"a":"x y"}', False),  # white space, if only in a string
    (b'{"a":"\\n"}', False),  # an escape, if one writing gives
    (b'{"a":"x-0,y"}', False),  # a string that may be an integer -0: not vouched for
]


# Texts with white space, and the text without it when reading vouches for their numbers.
NUMBERS: list[tuple[bytes, bytes | None]] = [
    (b'{"a": 1.5, "b": [1, 2e+16], "c": "x -0, y"}', None),  # the string may be a -0 to the search
    (b'{"a": 1.5, "b": [1, 2e+16], "c": "x y"}', b'{"a":1.5,"b":[1,2e+16],"c":"x y"}'),
    (b'{"a": -0}', None),
    (b'{"a": [1, -0 ]}', None),
    (b'{"a": -0\n}', None),
    (b"-0 ", None),
    (b" -0", None),
    (b"-1 ", b"-1"),
    (b'{"a": -1}', None),  # with white space, a one-digit negative integer may be a -0 to the search
    (b'{"a": -12, "b": -0.0}', b'{"a":-12,"b":-0.0}'),
    (b'{"a": 1.50}', None),
    (b'{"a": 1E+16}', None),
]


@pytest.mark.parametrize(("text", "compact"), NUMBERS)
def test_reading_vouches_for_the_numbers_of_a_spaced_text_only_when_writing_spells_them(
    text: bytes, compact: bytes | None
) -> None:
    value, whole, numbers = _json.loads_written(text, max_depth=_json.MAX_TEXT_DEPTH)
    assert not whole
    assert numbers is (compact is not None)
    if compact is not None:  # its numbers spelled as writing spells them, its spaces dropped
        assert _json.dumps(value) == compact
        assert _json.is_written_as(text, value, numbers_as_written=True) is False


@pytest.mark.parametrize(("text", "whole"), WHOLE)
def test_reading_vouches_for_a_whole_text_only_without_anything_writing_changes(
    text: bytes, whole: bool
) -> None:
    value, vouched, _ = _json.loads_written(text, max_depth=_json.MAX_TEXT_DEPTH)
    assert vouched is whole
    if whole:
        assert _json.dumps(value) == text


spellings = st.fixed_dictionaries(
    {
        "ensure_ascii": st.booleans(),
        "indent": st.none() | st.integers(0, 2),
        "separators": st.sampled_from([(",", ":"), (", ", ": "), (",", ": ")]),
    }
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, spellings)
def test_any_spelling_of_any_value_is_vouched_for_only_when_it_is_the_written_one(
    value: Any, spelling: dict[str, Any]
) -> None:
    text = json.dumps(value, allow_nan=False, **spelling).encode("utf-8")
    read, whole, numbers = _json.loads_written(text, max_depth=_json.MAX_TEXT_DEPTH)
    if _json.is_written_as(text, read) or whole:
        assert text == _json.dumps(read)
    if numbers and _json.is_written_as(text, read, numbers_as_written=True):
        assert text == _json.dumps(read)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
@example(-1)  # a text that ends in a one-digit negative number, as "-0" would
@example([-1, "a-0,b"])
def test_the_written_text_of_any_value_is_vouched_for_unless_it_escapes_a_control_character(
    value: Any,
) -> None:
    text = _json.dumps(value)
    read, whole, numbers = _json.loads_written(text, max_depth=_json.MAX_TEXT_DEPTH)
    # A scalar is written and compared; an object or array is settled on its text.
    assert _json.is_written_as(text, read) is (b"\\u" not in text or not isinstance(read, (dict, list)))
    # Reading vouches for the numbers of every written text but one that may hold a -0
    # (a float -0.0, or a string holding "-0") or an integer beyond the safe range (16
    # digits in a row), and for the whole text when it has no white space and no escape either.
    if b"-0" not in text and not re.search(rb"[0-9]{16}", text):
        assert numbers
        assert whole is not any(byte in text for byte in b" \t\n\r\\")


def _payload(state_text: bytes, *, head: bytes | None = None, tail: bytes = b"}") -> bytes:
    if head is None:
        head = b'{"iss":"https://tools.example.com","sub":"alice","aud":"tools/call:deploy","iat":1,"exp":2,"jti":"x"'
    return head + b',"state":' + state_text + tail


def _padded(text: bytes) -> bytes:
    """A state long enough for its text to be looked for in the payload, holding ``text``."""
    return b'{"pad":"' + b"p" * 600 + b'","v":' + text + b"}"


@pytest.mark.parametrize(("text", "written"), TRICKY)
def test_the_state_text_of_a_payload_is_the_written_state(text: bytes, written: bool) -> None:
    for state in (text, _padded(text)):
        for payload in (
            _payload(state),
            _payload(state, tail=b" }"),
            _payload(state, tail=b"}\n"),
            _payload(state, head=b'{ "iss":"a","sub":"b"'),
            _payload(state, head=b'{"iss":"a","sub":"b" '),
            b'{"state":' + state + b',"iss":"a"}',
            b'{"iss":"a", "state" : ' + state + b"}",
            b'{"iss":"a","st\\u0061te":' + state + b"}",
        ):
            read, whole, numbers = _json.loads_written(payload, max_depth=_json.MAX_TEXT_DEPTH)
            assert claims.state_json(read, payload) == _json.dumps(read["state"])
            # With what reading vouched for, as the sealer passes it (a short state sliced too).
            told = claims.state_json(read, payload, written=whole, numbers_as_written=numbers)
            assert told == _json.dumps(read["state"])


@pytest.mark.parametrize("text", [t for t, w in TRICKY if w and b"\\" not in t and b" " not in t])
def test_a_state_in_a_payload_read_as_written_is_sliced_whatever_its_size(
    text: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[Any] = []
    dumps = _json.dumps

    def recorded(value: Any) -> bytes:
        writes.append(value)
        return dumps(value)

    for state in (text, _padded(text)):
        payload = _payload(state)
        read, whole, numbers = _json.loads_written(payload, max_depth=_json.MAX_TEXT_DEPTH)
        # A string holding "-0," may be an integer -0 to the search, and an integer of 16
        # digits is read with the integer hook: neither is vouched for.
        assert whole is (b"-0," not in text and not re.search(rb"[0-9]{16}", text))
        writes.clear()
        monkeypatch.setattr(_json, "dumps", recorded)
        assert claims.state_json(read, payload, written=whole, numbers_as_written=numbers) == state
        monkeypatch.undo()
        if whole:
            assert writes == []


def _holds_float_or_negative(value: Any) -> bool:
    if isinstance(value, dict):
        return any(map(_holds_float_or_negative, value.values()))
    if isinstance(value, list):
        return any(map(_holds_float_or_negative, value))
    return type(value) is float or (type(value) is int and value < 0)


@pytest.mark.parametrize(("text", "written"), [(t, w) for t, w in TRICKY if w and b"\\u" not in t])
def test_a_long_written_state_is_sliced_from_the_payload(
    text: bytes, written: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Sliced, and written only to be compared when a number in it is a float or negative:
    # then, and only then, its spelling could differ from what writing gives.
    payload = _payload(_padded(text))
    read = _json.loads(payload, max_depth=_json.MAX_TEXT_DEPTH)
    writes: list[Any] = []
    dumps = _json.dumps

    def recorded(value: Any) -> bytes:
        writes.append(value)
        return dumps(value)

    monkeypatch.setattr(_json, "dumps", recorded)
    assert claims.state_json(read, payload) == _padded(text)
    assert (read["state"] in writes) is _holds_float_or_negative(read["state"])


@pytest.mark.parametrize("member", [b', "state" :', b',"state" :', b',"st\\u0061te":', b', "st\\u0061te":'])
def test_a_nested_state_member_is_never_taken_for_the_claim(member: bytes) -> None:
    # The claim's own member is spelled otherwise than the sealer writes it; a nested one is not.
    state = b'{"x":1,"state":{"y":"' + b"p" * 600 + b'"}}'
    payload = b'{"iss":"a","sub":"b"' + member + state + b"}"
    read = _json.loads(payload, max_depth=_json.MAX_TEXT_DEPTH)
    assert claims.state_json(read, payload) == state


def test_a_claim_that_is_an_object_before_the_state_leaves_the_state_written() -> None:
    state = b'{"x":"' + b"p" * 600 + b'"}'
    payload = b'{"iss":{"a":1,"state":2},"state":' + state + b"}"
    read = _json.loads(payload, max_depth=_json.MAX_TEXT_DEPTH)
    assert claims.state_json(read, payload) == state


STATES: list[Any] = [
    {"step": 2, "note": 'quote " backslash \\ newline \n tab \t'},
    {"unicode": "é ü 中 🎉 \u2028", "control": "\u0001\u001f"},
    {"numbers": [1.0, 100.0, -0.0, 0, 1e16, 2.25e-07, 1.5, -SAFE, SAFE]},
    {"z": 1, "a": 2, "m": {"nested": [[{"deep": [True, False, None]}]]}},
    {"state": {"state": "inner"}, "": ""},
    ["a", "list", 1],
    7,
    1.5,
    None,
    True,
    "a string state",
    "",
]


@pytest.mark.parametrize("alg", ["HS256", "EdDSA", "A256GCM"])
@pytest.mark.parametrize("state", STATES)
def test_open_bound_text_gives_the_state_and_the_text_writing_it_gives(alg: str, state: Any) -> None:
    sealer = StateSealer(Keyring.generate(alg), issuer=ISSUER, clock=lambda: NOW)
    token = sealer.seal_bound(state, BINDING)

    async def opened() -> tuple[Any, bytes | None]:
        return await sealer.open_bound_text_async(token, BINDING)

    value, written = anyio.run(opened)
    assert value == sealer.open_bound(token, BINDING)
    if isinstance(state, str):
        assert written is None
    else:
        assert written == _json.dumps(value)
    # The handler's requestState is the one writing the verified state gives.
    assert text_of(value, written) == text_of(value)


def test_open_bound_text_refuses_as_open_does() -> None:
    sealer = StateSealer(Keyring.generate("HS256"), issuer=ISSUER, clock=lambda: NOW)
    token = sealer.seal_bound({"a": 1}, BINDING)
    other = Binding("mallory", "tool", "deploy", {"env": "prod"})

    async def opened() -> object:
        return await sealer.open_bound_text_async(token, other)

    with pytest.raises(InvalidRequestState) as refused:
        anyio.run(opened)
    assert refused.value.reason == "wrong_user"
