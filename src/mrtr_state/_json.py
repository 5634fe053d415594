"""Strict JSON for token segments (profile, sections 3.3 and 5).

Reading: UTF-8 only (no BOM, no UTF-16 guessing), no duplicate member names at any
depth, no ``NaN``/``Infinity`` literals, no number literal beyond the range of a double,
and bounded nesting.
Writing: compact UTF-8, and only values that every language reads back exactly
(I-JSON, RFC 7493): integers within the safe range, finite numbers, valid Unicode.
"""

from __future__ import annotations

import json
import math
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


def _double_range_int(text: str) -> int:
    value = int(text)
    # 2**1024 has 309 digits: only then can an integer be beyond a double's range.
    if len(text) > 308:
        _finite_float(text)
    return value


_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_refuse_duplicates,
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
    parse_int=_double_range_int,
)


def loads(raw: bytes, *, max_depth: int) -> Any:
    """Parse one strict JSON text from UTF-8 bytes; raise :class:`ValueError` otherwise.

    Arrays and objects may nest ``max_depth`` levels at most.
    """
    # A value cannot nest deeper than it has opening brackets, so the (rare) walk
    # is needed only when the text has more of them than the limit.
    if raw.count(b"[") + raw.count(b"{") > max_depth and _nests_deeper(raw, max_depth):
        raise ValueError(f"JSON nested deeper than {max_depth} levels")
    try:
        return _DECODER.decode(raw.decode("utf-8"))
    except RecursionError as exc:  # unreachable below the depth limit; kept total
        raise ValueError("JSON nested too deeply") from exc


def _nests_deeper(raw: bytes, limit: int) -> bool:
    """Scan JSON text (skipping strings) and tell whether brackets nest deeper than ``limit``.

    Runs before parsing, so a deeply nested input is refused without recursion.
    """
    depth = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return False


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


_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps(value: Any) -> bytes:
    """Serialise ``value`` as compact UTF-8 JSON; raise :class:`ValueError` on a lone surrogate."""
    text = _ENCODER.encode(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("a string holds a lone surrogate, which is not valid Unicode") from exc
