"""The fast reader and writer's check decide exactly as the exact ones (profile, steps 4 and 11, section 3.3).

``_json.loads`` reads the common text at the C parser's speed and finds duplicate
members by counting; ``_json.loads_exact`` applies every rule by a hook as it
reads. These tests generate JSON texts, ordinary and hostile (repeated member
names, also spelt with other escapes; colons, quotes, backslashes and brackets in
strings; escaped colons; long digit runs, long exponents, underflow; NaN and
Infinity; escaped surrogates, paired and lone; white space everywhere; nesting
around the limit; byte-level damage), and require the same verdict from both: the
same value with the same types, or the same refusal. ``check_state`` is held the
same way to the plain recursive walk the profile describes.
"""

from __future__ import annotations

import enum
import math
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtr_state.token import _json

SAFE = _json.MAX_SAFE_INTEGER

# ----------------------------------------------------------------------------- texts

KEYS = st.sampled_from(["a", "b", "ab", "a:b", ":", '"', "\\", '\\"', "é", "\u2028", "[", "{}", "\U0001f600"])
STRINGS = KEYS | st.text(max_size=6)


@st.composite
def string_literal(draw: st.DrawFn, value: str) -> str:
    """``value`` as a JSON string literal, each character written plainly or escaped, at random."""
    out = ['"']
    for char in value:
        code = ord(char)
        plain = code >= 0x20 and char not in '"\\'
        how = draw(
            st.sampled_from(["plain", "u", "U", "short"]) if plain else st.sampled_from(["u", "U", "short"])
        )
        if how == "plain":
            out.append(char)
        elif how == "short" and char in '"\\/\b\f\n\r\t':
            out.append(
                "\\"
                + {'"': '"', "\\": "\\", "/": "/", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}[
                    char
                ]
            )
        elif code > 0xFFFF:
            high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
            text = f"\\u{high:04x}\\u{low:04x}"
            out.append(text.upper().replace("\\U", "\\u") if how == "U" else text)
        else:
            text = f"\\u{code:04x}"
            out.append(text.upper().replace("\\U", "\\u") if how == "U" else text)
    if draw(st.integers(0, 9)) == 0:  # a lone or reversed surrogate escape
        out.insert(
            draw(st.integers(1, len(out))), draw(st.sampled_from(["\\ud800", "\\uDFFF", "\\udc00\\ud800"]))
        )
    out.append('"')
    return "".join(out)


NUMBER_LITERALS = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.sampled_from(
        [str(SAFE), str(-SAFE), str(SAFE + 1), str(-SAFE - 1), "9" * 15, "9" * 16, "1" + "0" * 400]
    ),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.builds(
        lambda sign, whole, frac, e, esign, edigits: (
            f"{sign}{whole}{frac}{e}{esign}{edigits}" if e else f"{sign}{whole}{frac}"
        ),
        st.sampled_from(["", "-"]),
        st.sampled_from(["0", "1", "12", "9" * 15, "9" * 16, "1" * 30]),
        st.sampled_from(["", ".5", ".000000000000000001"]),
        st.sampled_from(["", "e", "E"]),
        st.sampled_from(["", "+", "-"]),
        st.sampled_from(["0", "5", "99", "308", "309", "400", "0400", "00000001"]),
    ),
    st.sampled_from(["NaN", "Infinity", "-Infinity", "01", "1.", ".5", "+1", "-", "1e", "- 1"]),
)
LITERALS = NUMBER_LITERALS | st.sampled_from(["true", "false", "null", "True", "nul"])
SPACE = st.sampled_from(["", "", "", " ", "\n", "\t ", "\r\n", "\x0c", "\u00a0"])


@st.composite
def json_text(draw: st.DrawFn, depth: int = 0) -> str:
    """A JSON-like text: mostly valid, often with repeated members, sometimes broken."""
    kind = draw(
        st.sampled_from(
            ["literal", "string", "array", "object", "object"] if depth < 5 else ["literal", "string"]
        )
    )
    if kind == "literal":
        return draw(LITERALS)
    if kind == "string":
        return draw(string_literal(draw(STRINGS)))
    if kind == "array":
        items = draw(st.lists(json_text(depth + 1), max_size=4))
        return "[" + ",".join(draw(SPACE) + item + draw(SPACE) for item in items) + "]"
    keys = draw(st.lists(STRINGS, max_size=5))
    if keys and draw(st.booleans()):
        keys.append(draw(st.sampled_from(keys)))  # a repeated member name, perhaps spelt otherwise
        keys = draw(st.permutations(keys))
    members = [
        draw(SPACE)
        + draw(string_literal(key))
        + draw(SPACE)
        + ":"
        + draw(SPACE)
        + draw(json_text(depth + 1))
        + draw(SPACE)
        for key in keys
    ]
    return "{" + ",".join(members) + "}"


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """A text as bytes, around white space, sometimes with a few bytes changed, added or removed."""
    raw = (draw(SPACE) + draw(json_text()) + draw(SPACE)).encode("utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 2)) if draw(st.booleans()) else 0):
        at = draw(st.integers(0, len(raw)))
        byte = draw(
            st.sampled_from(
                [b'"', b"\\", b":", b",", b"[", b"]", b"{", b"}", b"0", b"e", b" ", b"\xff", b"\xc3"]
            )
        )
        how = draw(st.sampled_from(["insert", "replace", "delete"]))
        if how == "insert":
            raw = raw[:at] + byte + raw[at:]
        elif how == "replace":
            raw = raw[:at] + byte + raw[at + 1 :]
        else:
            raw = raw[:at] + raw[at + 1 :]
    return raw


def verdict(read: Any, raw: bytes, depth: int) -> tuple[str, str]:
    """What a reader makes of ``raw``: the value (types and order kept, by repr) or the refusal."""
    try:
        return ("value", repr(read(raw, max_depth=depth)))
    except ValueError as exc:
        return ("refused", str(exc))


@settings(max_examples=1200, deadline=None)  # no timed tests: speed is the benchmark's job
@given(raw=damaged(), depth=st.integers(1, 8))
def test_the_fast_reader_decides_every_text_as_the_exact_reader(raw: bytes, depth: int) -> None:
    assert verdict(_json.loads, raw, depth) == verdict(_json.loads_exact, raw, depth)


@pytest.mark.parametrize(
    "text",
    [
        b'{"a":1,"a":1}',
        b'{"a":1,"\\u0061":2}',
        b'{"a:b":":","a:b":1}',
        b'{"\\u003a":1,":":2}',
        b'{"x":"\\u003a\\u003a","x":1,"y":"::"}',
        b'{"a" : 1 , "a" : 2}',
        b'{"k\\"":1,"k\\u0022":2}',
        b'[{"a":1},{"b":2,"b":3}]',
        b'{"s":{"a":{}, "a":[]}}',
    ],
)
def test_a_repeated_member_name_is_refused_however_it_is_spelt(text: bytes) -> None:
    with pytest.raises(ValueError, match="duplicate member name"):
        _json.loads(text, max_depth=8)


@pytest.mark.parametrize(
    "text",
    [b'{"a":"x:y","b":"::","c":{"d:":"e"}}', b'{"\\u003a":1,"::":2}', b'{"q\\\\":"\\\\:","r":"\\":"}'],
)
def test_colons_in_strings_are_not_members(text: bytes) -> None:
    assert _json.loads(text, max_depth=8) == _json.loads_exact(text, max_depth=8)


@pytest.mark.parametrize(
    "text",
    [
        # A string holding '":' makes the quick count too high: the exact count decides.
        b'{"a":"\\":","b":1}',
        b'{"a":"\\":","a":1}',
        b'{"k\\":":1,"k\\":":2}',
        # White space between a name and its colon is deleted before the quick count.
        b'{"a" :1,"b"\t:2,"c"\n:3,"d"\r:4}',
        b'{"a" :1,"a":2}',
        b'{"a" \t\n\r:1, "x":" :","a" :2}',
        # One repeat hidden behind one '":' in a string: the counts still differ.
        b'{"s":"x\\":y","a":1,"a":2}',
    ],
)
def test_the_quick_member_count_never_vouches_for_a_repeated_name(text: bytes) -> None:
    assert verdict(_json.loads, text, 8) == verdict(_json.loads_exact, text, 8)


@pytest.mark.parametrize(
    ("text", "numbers", "integers"),
    [
        (b'{"a":"file 1000","b":"since 2024","c":"e 0000"}', False, False),
        (b'{"a":"A 1234567 890"}', False, False),
        (b'{"a":1e400}', True, False),
        (b'{"a":[1.5E+308,2]}', True, False),
        (b'{"a":-1' + b"0" * 400 + b".5}", True, True),
        (b'{"a":12345678901234567}', True, True),
        (
            b'{"a":"x","b":-1.0e-400}',
            False,
            False,
        ),  # an underflow reads as zero, as the exact reader reads it
    ],
)
def test_the_number_hooks_run_only_for_a_text_that_may_hold_a_number_out_of_range(
    text: bytes, numbers: bool, integers: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[bool] = []
    read = _json._Reader.read

    def spy(self: Any, raw: bytes, hooks: bool, vouch: bool = False) -> Any:
        asked.append(hooks)
        return read(self, raw, hooks, vouch)

    def read_written(raw: bytes, max_depth: int) -> Any:
        return _json.loads_written(raw, max_depth=max_depth)[0]

    monkeypatch.setattr(_json._Reader, "read", spy)
    assert verdict(_json.loads, text, 8) == verdict(_json.loads_exact, text, 8)
    assert asked == [numbers]
    # Vouching for the text, the float hook sees every float literal and refuses one
    # beyond a double: only a run of 16 digits turns the number hooks on.
    asked.clear()
    assert verdict(read_written, text, 8) == verdict(_json.loads_exact, text, 8)
    assert asked == [integers]


def test_underflow_is_read_as_zero_by_both_readers() -> None:
    text = b'{"state":[1e-400,-1e-400,5e-324]}'
    assert repr(_json.loads(text, max_depth=8)) == repr(_json.loads_exact(text, max_depth=8))
    assert _json.loads(text, max_depth=8) == {"state": [0.0, -0.0, 5e-324]}


def test_threads_reading_at_once_each_get_their_own_count() -> None:
    clean = b'{"items":[' + b",".join(b'{"id":%d,"ok":true}' % i for i in range(200)) + b"]}"
    repeated = b'{"items":[' + b",".join(b'{"id":%d,"id":1}' % i for i in range(200)) + b"]}"
    failures: list[str] = []

    def work() -> None:
        for _ in range(50):
            if len(_json.loads(clean, max_depth=8)["items"]) != 200:
                failures.append("clean")
            try:
                _json.loads(repeated, max_depth=8)
                failures.append("a duplicate was accepted")
            except ValueError:
                pass

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


# ----------------------------------------------------------------------------- check_state


def reference_check(value: Any, depth: int = 0) -> None:
    """The walk of profile section 3.3, written plainly: the reference for check_state."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return
    if kind is int:
        if not -SAFE <= value <= SAFE:
            raise ValueError("the state holds an integer outside the safe range +/-(2**53 - 1)")
    elif kind is float:
        if not math.isfinite(value):
            raise ValueError("the state holds a non-finite number")
    elif isinstance(value, (dict, list)):
        if depth == _json.MAX_STATE_DEPTH:
            raise ValueError(f"the state nests deeper than {_json.MAX_STATE_DEPTH} levels")
        if isinstance(value, dict):
            for key in value:
                if type(key) is not str:
                    raise TypeError(f"the state has a {type(key).__name__} key; JSON keys are strings")
            value = value.values()
        for item in value:
            reference_check(item, depth + 1)
    elif not isinstance(value, str):
        raise TypeError(
            f"the state holds a {kind.__name__}, which is not JSON-serialisable; "
            "use dict, list, str, int, float, bool and None only"
        )


class Colour(enum.IntEnum):
    RED = 1


class Name(str):
    pass


class Ratio(float):
    pass


class Record(dict):  # type: ignore[type-arg]
    pass


ODD_SCALARS = st.sampled_from(
    [Colour.RED, Name("n"), Ratio(0.5), (1, 2), b"x", {1, 2}, 1j, math.nan, math.inf, -math.inf, object()]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**60), 2**60),
    st.sampled_from([SAFE, -SAFE, SAFE + 1, -SAFE - 1]),
    st.floats(),
    st.text(max_size=3),
    ODD_SCALARS,
)
ODD_KEYS = st.sampled_from([1, 1.5, True, None, Name("k"), (1,)])
STATES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=3) | ODD_KEYS, inner, max_size=4)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3).map(Record)
        | st.lists(inner, max_size=3).map(tuple)
    ),
    max_leaves=40,
)


def check_verdict(check: Any, value: Any) -> tuple[str, str]:
    try:
        check(value)
    except (TypeError, ValueError) as exc:
        return (type(exc).__name__, str(exc))
    return ("accepted", "")


def nested(levels: int) -> Any:
    value: Any = 1
    for i in range(levels):
        value = [value] if i % 2 else {"k": value}
    return value


@settings(max_examples=500, deadline=None)
@given(STATES)
def test_check_state_decides_every_value_as_the_plain_walk(value: Any) -> None:
    assert check_verdict(_json.check_state, value) == check_verdict(reference_check, value)


@pytest.mark.parametrize("levels", [31, 32, 33, 40])
def test_check_state_draws_the_depth_line_where_the_plain_walk_does(levels: int) -> None:
    value = nested(levels)
    assert check_verdict(_json.check_state, value) == check_verdict(reference_check, value)


# ----------------------------------------------------------------------------- encode_state


def write_verdict(value: Any) -> tuple[str, str]:
    """What check_state then dumps make of ``value``: the JSON, the check's refusal, or "unwritable"."""
    try:
        _json.check_state(value)
    except (TypeError, ValueError) as exc:
        return (type(exc).__name__, str(exc))
    try:
        return ("json", _json.dumps(value).decode("utf-8"))
    except (TypeError, ValueError):
        return ("unwritable", "")


def encode_verdict(value: Any) -> tuple[str, str]:
    try:
        written = _json.encode_state(value)
    except (TypeError, ValueError) as exc:
        return (type(exc).__name__, str(exc))
    return ("unwritable", "") if written is None else ("json", written.decode("utf-8"))


def big(value: Any) -> Any:
    """``value`` inside a state long enough for the census (and the digit scan) to decide it."""
    return {"pad": "p" * 600, "rows": [{"id": i, "v": value} for i in range(3)], "v": value}


@settings(max_examples=500, deadline=None)
@given(STATES)
def test_encode_state_decides_every_value_as_the_check_then_the_writing(value: Any) -> None:
    assert encode_verdict(value) == write_verdict(value)
    assert encode_verdict(big(value)) == write_verdict(big(value))


@pytest.mark.parametrize(
    "value",
    [
        {1: "a", "1": "b"},
        {True: 1},
        {None: 1},
        {1.5: 1},
        {Name("k"): 1},
        (1, 2),
        [(1,)],
        {"a": Colour.RED},
        {"a": Ratio(0.5)},
        {"a": Name("n")},
        Record(a=1),
        [Record(a=1)],
        {"a": SAFE + 1},
        {"a": -SAFE - 1},
        {"a": SAFE, "b": -SAFE},
        {"a": "9" * 20},
        {"a": math.nan},
        {"a": "\ud800"},
        {"a": b"x"},
        {"a": {1, 2}},
    ],
    ids=repr,
)
def test_encode_state_refuses_what_json_would_write_silently(value: Any) -> None:
    assert encode_verdict(value) == write_verdict(value)
    assert encode_verdict(big(value)) == write_verdict(big(value))


@pytest.mark.parametrize("levels", [30, 31, 32, 33, 40])
def test_encode_state_draws_the_depth_line_where_the_check_does(levels: int) -> None:
    for value in (nested(levels), big(nested(levels))):
        assert encode_verdict(value) == write_verdict(value)


def test_encode_state_refuses_a_cycle_as_the_check_does() -> None:
    loop: list[Any] = []
    loop.append(loop)
    twice: list[Any] = []
    twice.extend([twice, twice])
    for value in (loop, twice, big(loop)):
        assert encode_verdict(value) == write_verdict(value)


def test_a_dict_that_once_held_another_key_is_still_accepted() -> None:
    # Its keys are all strings, but CPython lists them as referents: the plain walk decides.
    value = big(1)
    value[1] = 2
    del value[1]
    assert encode_verdict(value) == write_verdict(value) == ("json", _json.dumps(value).decode())
