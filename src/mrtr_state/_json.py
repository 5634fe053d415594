"""Strict JSON for token segments (profile, sections 3.3 and 5).

Reading: UTF-8 only (no BOM, no UTF-16 guessing), no duplicate member names at any
depth, no ``NaN``/``Infinity`` literals, no number literal beyond the range of a double,
no integer literal beyond the safe range, no escaped lone surrogate, and bounded nesting:
what every language reads the same way (I-JSON, RFC 7493).
Writing: compact UTF-8, and only values that every language reads back exactly
(I-JSON, RFC 7493): integers within the safe range, finite numbers, valid Unicode.
"""

from __future__ import annotations

import json
import math
from itertools import accumulate, count
from operator import sub
from typing import Any, Final, NoReturn

#: The largest integer every JSON implementation represents exactly (2**53 - 1).
MAX_SAFE_INTEGER: Final = 9007199254740991

#: How deeply arrays and objects may nest inside the state claim (profile, 3.3).
MAX_STATE_DEPTH: Final = 32

#: How deeply any JSON text of a token may nest: the claims object around the state.
MAX_TEXT_DEPTH: Final = MAX_STATE_DEPTH + 1


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("duplicate member name")
    return obj


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("number literal beyond the range of a double")
    return value


def _safe_int(text: str) -> int:
    # JSON integers have no leading zeros, so more than 16 digits is beyond 2**53 - 1:
    # refuse before int() spends time on a long literal.
    if len(text) - text.startswith("-") > 16:
        raise ValueError("integer literal beyond the safe range +/-(2**53 - 1)")
    value = int(text)
    if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        raise ValueError("integer literal beyond the safe range +/-(2**53 - 1)")
    return value


# check_circular=False: the encoder's own cycle check keeps an id() per container
# and cost 15% of every seal. A cycle is still refused: seal runs check_state first,
# whose depth limit stops at any cycle, and any other value that refers to itself
# recurses until Python's recursion limit, which dumps turns into a ValueError.
_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)
_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_refuse_duplicates,
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
    parse_int=_safe_int,
)
# The same without the number hooks, each a Python call per number (a quarter of
# the parse of a state holding a list of records); the C scanner then builds the
# numbers itself. The hooks can only refuse an integer of 16 digits or more (2**53
# has 16) or a number beyond a double, which needs 16 digits or more or an exponent
# of three digits or more; texts without either use this decoder.
_DECODER_ORDINARY_NUMBERS: Final = json.JSONDecoder(
    object_pairs_hook=_refuse_duplicates,
    parse_constant=_refuse_constant,
)
# For bytes.translate: every digit becomes "0", "e" and "E" become "e", "+" stays,
# every other byte a space, so that both patterns are found by substring searches
# of one translated copy (a regex took ten times longer).
_NUMBER_SHAPES: Final = bytes(
    0x30 if 0x30 <= b <= 0x39 else 0x65 if b in (0x45, 0x65) else 0x2B if b == 0x2B else 0x20
    for b in range(256)
)
_MAYBE_OUT_OF_RANGE: Final = (b"0" * 16, b"e000", b"e+000")
#: The white space JSON allows between tokens (RFC 8259, section 2).
_WHITESPACE: Final = " \t\n\r"


def loads(raw: bytes, *, max_depth: int) -> Any:
    """Parse one strict JSON text from UTF-8 bytes; raise :class:`ValueError` otherwise.

    Arrays and objects may nest ``max_depth`` levels at most.
    """
    # A value cannot nest deeper than it has opening brackets, so the scan is
    # needed only when the text has more of them than the limit.
    if raw.count(b"[") + raw.count(b"{") > max_depth and _nests_deeper(raw, max_depth):
        raise ValueError(f"JSON nested deeper than {max_depth} levels")
    shapes = raw.translate(_NUMBER_SHAPES)
    decoder = _DECODER if any(p in shapes for p in _MAYBE_OUT_OF_RANGE) else _DECODER_ORDINARY_NUMBERS
    text = raw.decode("utf-8")
    # raw_decode with the white space JSON allows around the value skipped here:
    # what decode does, without its two regex calls (an eighth of a small parse).
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = decoder.raw_decode(text, start)
    except RecursionError as exc:  # unreachable below the depth limit; kept total
        raise ValueError("JSON nested too deeply") from exc
    if text[end:].strip(_WHITESPACE):
        raise ValueError("extra data after the JSON value")
    # A lone surrogate can only arrive as a \u escape (strict UTF-8 refuses the
    # encoded form), so texts without one need no check.
    if b"\\u" in raw and _has_lone_surrogate(value):
        raise ValueError("a string holds an escaped lone surrogate, which is not valid Unicode")
    return value


def _has_lone_surrogate(value: Any) -> bool:
    try:
        _ENCODER.encode(value).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# For bytes.translate: both kinds of bracket become one kind, and every other byte
# except the quote is deleted.
_ONE_KIND: Final = bytes.maketrans(b"{}", b"[]")
_NOT_STRUCTURE: Final = bytes(b for b in range(256) if b not in b'"[]{}')


def _nests_deeper(raw: bytes, limit: int) -> bool:
    """Tell whether the brackets of JSON text (outside strings) nest deeper than ``limit``.

    Runs before parsing, so a deeply nested input is refused without recursion.
    Each step is a C-speed pass (no Python code runs per byte): the byte-by-byte
    loop this replaces cost 2 ms on a state near the 8 KiB cap, more than all the
    rest of ``open``.

    Escapes go first (escaped backslashes, then escaped quotes; ``bytes.replace``
    pairs them left to right, as a JSON reader does), so every quote left delimits
    a string. Keeping only quotes and brackets (both kinds made one), the strings
    that hold no bracket become ``""`` and vanish; only if a quote is left is the
    text between quotes dropped. Between two closing brackets lies a run of opening
    ones, so the depth just before the i-th closing bracket is the number of
    opening brackets so far minus i; the largest such value is the nesting depth.
    """
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = raw.translate(_ONE_KIND, _NOT_STRUCTURE)
    brackets = structure.replace(b'""', b"")
    if b'"' in brackets:
        brackets = b"".join(structure.split(b'"')[::2])
    openings_so_far = accumulate(map(len, brackets.split(b"]")))
    deepest: int = max(map(sub, openings_so_far, count()))
    return deepest > limit


def check_state(value: Any) -> None:
    """Refuse a state the profile cannot carry exactly (profile, section 3.3).

    Raises :class:`TypeError` for a value that is not JSON (or that ``json`` would
    silently change: a tuple, a non-string key) and :class:`ValueError` for JSON the
    profile forbids (a non-finite number, an integer outside the safe range, nesting
    deeper than :data:`MAX_STATE_DEPTH`). Messages name the problem, never a value.
    """
    _check(value, 0)


def _check(value: Any, depth: int) -> None:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return
    if kind is int:
        if not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            raise ValueError("the state holds an integer outside the safe range +/-(2**53 - 1)")
    elif kind is float:
        if not math.isfinite(value):
            raise ValueError("the state holds a non-finite number")
    elif isinstance(value, (dict, list)):
        if depth == MAX_STATE_DEPTH:
            raise ValueError(f"the state nests deeper than {MAX_STATE_DEPTH} levels")
        if isinstance(value, dict):
            for key in value:
                if type(key) is not str:
                    raise TypeError(f"the state has a {type(key).__name__} key; JSON keys are strings")
            value = value.values()
        for item in value:
            _check(item, depth + 1)
    elif not isinstance(value, str):
        raise TypeError(
            f"the state holds a {kind.__name__}, which is not JSON-serialisable; "
            "use dict, list, str, int, float, bool and None only"
        )


def dumps(value: Any) -> bytes:
    """Serialise ``value`` as compact UTF-8 JSON.

    Raises :class:`ValueError` on a lone surrogate, a non-finite number, or a value
    that refers to itself (or nests beyond Python's recursion limit), and
    :class:`TypeError` on a value that is not JSON.
    """
    try:
        text = _ENCODER.encode(value)
    except RecursionError:
        raise ValueError("the value refers to itself or nests too deeply") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("a string holds a lone surrogate, which is not valid Unicode") from exc
