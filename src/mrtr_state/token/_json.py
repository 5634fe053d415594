"""Strict JSON for token segments (profile, sections 3.3 and 5).

Reading: UTF-8 only (no BOM, no UTF-16 guessing), no duplicate member names at any
depth, no ``NaN``/``Infinity`` literals, no number literal beyond the range of a double,
no integer literal beyond the safe range, no escaped lone surrogate, and bounded nesting:
what every language reads the same way (I-JSON, RFC 7493).
Writing: compact UTF-8, and only values that every language reads back exactly
(I-JSON, RFC 7493): integers within the safe range, finite numbers, valid Unicode.
"""

from __future__ import annotations

import gc
import json
import math
import re
import sys
import threading
from collections.abc import Callable, Sequence
from itertools import accumulate, compress, count
from json.encoder import c_encode_basestring, c_make_encoder  # type: ignore[attr-defined]
from operator import sub
from typing import Any, Final, NoReturn

# Substrings of bytes are looked for with find, never ``in``: on CPython 3.11
# ``needle in data`` first tries the needle as an integer (a byte value) and, for
# every bytes needle, makes, formats and clears a TypeError before it searches
# (about 1.5k instructions a test, 143 ns against find's 64 ns for 200 bytes).

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


# check_circular=False: the encoder's own cycle check keeps an id() per container,
# a measurable part of every seal (docs/benchmarks.md). A cycle is still refused:
# seal runs check_state first, whose depth limit stops at any cycle, and any other
# value that refers to itself recurses until Python's recursion limit, which dumps
# turns into a ValueError.
_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)
# The C encoder behind _ENCODER.encode, made once instead of on every call.
_C_ENCODE: Final[Callable[[Any, int], Sequence[str]] | None] = (
    None
    if c_make_encoder is None
    else c_make_encoder(None, _ENCODER.default, c_encode_basestring, None, ":", ",", False, False, False)
)

# The exact reader, by construction: a Python hook per object that refuses a
# duplicate member as it builds the dict, and a hook per number literal. It is the
# reference the fast reader is tested against, and it decides every text the fast
# reader refuses or cannot vouch for.
_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_refuse_duplicates,
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
    parse_int=_safe_int,
)

#: The white space JSON allows between tokens (RFC 8259, section 2).
_WHITESPACE: Final = " \t\n\r"
_WHITESPACE_BYTES: Final = _WHITESPACE.encode("ascii")

# For bytes.translate: every digit and "+" becomes "0", "e" and "E" become "e",
# "-" stays, every other byte a space, so that a long digit run, a long exponent
# and an integer -0 are found by substring searches of one translated copy (a
# regex is much slower; see docs/benchmarks.md).
_NUMBER_SHAPES: Final = bytes(
    0x30 if 0x30 <= b <= 0x39 or b == 0x2B else 0x65 if b in (0x45, 0x65) else 0x2D if b == 0x2D else 0x20
    for b in range(256)
)
# _NUMBER_SHAPES that keeps the quote and the colon, for the quick member count of
# loads in the same pass (white space is deleted in it), and makes what ends a
# number in a value ("," "]" "}") ",", for the search of an integer -0.
_SHAPES_AND_MEMBERS: Final = bytes(
    b if b in (0x22, 0x2C, 0x3A) else 0x2C if b in (0x5D, 0x7D) else s
    for b, s in zip(range(256), _NUMBER_SHAPES, strict=True)
)
# An integer literal -0 reads as 0, which is written "0": in the shapes it is "-0,",
# as is any negative integer of one digit, which the text tells apart. (A space
# at the end would find "-1." in every "release-1.2", and cost a pass a hit: the
# searches skip fastest over bytes the needle ends without.)
_NEGATIVE_ZERO: Final = b"-0,"
_NUMBER_ENDS: Final = b",]}"
# An integer beyond 2**53 - 1 has 16 digits or more; a number beyond a double has
# 16 digits or more or an exponent of three digits or more ("e+" reads as "e0").
# An exponent always follows a digit, so its "e" is looked for after one: white
# space is deleted in the shapes, and a string's "file 1000" leaves "e000" but no "0e000".
# (A reader that vouches for the text needs no exponent search: its float hook sees
# every float literal.)
_LONG_DIGIT_RUN: Final = b"0" * 16
_LONG_EXPONENT: Final = b"0e000"
# Only a \u escape of U+D800 to U+DFFF can make a lone surrogate: strict UTF-8
# refuses the encoded form.
_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F]")


def loads(raw: bytes, *, max_depth: int) -> Any:
    """Parse one strict JSON text from UTF-8 bytes; raise :class:`ValueError` otherwise.

    Arrays and objects may nest ``max_depth`` levels at most.

    The common case runs at the speed of the C parser: the C scanner builds the
    value with no Python code per member or per number; a Python hook per
    object only notes the size of the dict it kept. Duplicate members are found
    by counting: a duplicate leaves its dict one member short of the text.
    The quick count comes first: with its white space deleted, a text holds a
    ``":`` for each member (its name's closing quote then touches its colon) and
    for each string that holds one, so when the dicts keep that many members, the
    text repeats no name. Only when the counts differ is the exact count taken: a
    text's members are the colons outside its strings (:func:`_structure` finds
    them in one C-speed pass). One ``bytes.translate`` gives both that count and
    the shapes of the numbers: number hooks run only for a text that may hold
    an out-of-range number. The nesting is bounded by the count
    of objects read and of ``[`` in the text when they are few, and otherwise
    measured on the value read, level by level (:func:`_within_depth`;
    on an interpreter where that cannot be relied on, on the text before it is
    read). A text that may hold an escaped surrogate, or that the fast reader
    refuses or cannot vouch for, is decided by the exact reader
    (:func:`loads_exact`): a refusal is always the exact reader's, with its message.
    """
    return loads_written(raw, max_depth=max_depth, vouch=False)[0]


def loads_written(raw: bytes, *, max_depth: int, vouch: bool = True) -> tuple[Any, bool, bool]:
    """:func:`loads`, and what reading showed of the text: ``(value, written, numbers_as_written)``.

    Reading drops what writing does not put back; the passes :func:`loads` makes
    anyway show whether the text had any of it.

    ``numbers_as_written``: every number literal of the text is as :func:`dumps`
    spells it. No float literal other than as ``repr`` spells it (a Python hook
    compares, once per float literal, at about what writing the float costs:
    :func:`loads` reads floats in C), no integer ``-0``, and no integer that
    needed the integer hook. The other integers are as written: a JSON integer
    has no leading zero and no ``+``. A float beyond the range of a double is
    refused by the same hook.

    ``written``: ``raw`` is byte for byte what :func:`dumps` writes for the
    value. Its numbers are as written, and it has no white space (the translated
    copy is as long as the text) and no backslash (so its strings hold no
    escape, and no character the encoder would escape: a string holds no raw
    control character). The names keep their order and the text repeats none.

    ``False`` means "not vouched for": the caller may look closer
    (:func:`is_written_as`) or write the value. With ``vouch=False`` the text
    is read as :func:`loads` reads it (floats in C) and nothing is vouched for.
    """
    if not _CENSUS:
        objects = raw.count(b"{")
        if (objects > max_depth or objects + raw.count(b"[") > max_depth) and _nests_deeper(
            _structure(raw).translate(None, b":"), max_depth
        ):
            raise ValueError(f"JSON nested deeper than {max_depth} levels")
    shapes = raw.translate(_SHAPES_AND_MEMBERS, _WHITESPACE_BYTES)
    # Vouching, the float hook refuses a float beyond a double; otherwise the C parser
    # reads it (as inf), so a long exponent turns the number hooks on.
    numbers = shapes.find(_LONG_DIGIT_RUN) >= 0 or (not vouch and shapes.find(_LONG_EXPONENT) >= 0)
    escaped = raw.find(b"\\") >= 0
    if escaped and raw.find(b"\\u") >= 0 and _SURROGATE_ESCAPE.search(raw):
        return loads_exact(raw, max_depth=max_depth), False, False
    reader = _READERS.__dict__.pop("reader", None) or _Reader()
    try:
        value = reader.read(raw, numbers, vouch)
    except (ValueError, RecursionError):
        value = _NOT_READ
    finally:
        _READERS.__dict__["reader"] = reader
    if value is _NOT_READ:
        return loads_exact(raw, max_depth=max_depth), False, False
    sizes = reader.sizes
    members = sum(sizes)
    # The quick count: never fewer than the text's members, so equal means no repeat.
    if members != shapes.count(b'":') and members != _structure(raw).count(b":"):
        return loads_exact(raw, max_depth=max_depth), False, False
    # A value nests no deeper than it has objects (one hook call each) and arrays (a
    # "[" each, strings' ones too): most texts need no more. Otherwise it is measured.
    objects = len(sizes)
    if (
        _CENSUS
        and not (objects <= max_depth and _at_most(raw, b"[", max_depth - objects))
        and not _within_depth(value, max_depth)
    ):
        return loads_exact(raw, max_depth=max_depth), False, False
    if not vouch:
        return value, False, False
    # Without white space the shapes are the text's bytes at the same places: a "-0,"
    # there is looked at in the text; with it, any "-0," may be an integer -0.
    aligned = len(shapes) == len(raw)
    numbers_as_written = not (
        numbers
        or reader.respelled[0]
        or (shapes.find(_NEGATIVE_ZERO) >= 0 and (not aligned or _holds_negative_zero(raw, shapes)))
        # A text that is the number -0, with or without white space after it.
        or (shapes.endswith(b"-0") and raw.rstrip(_WHITESPACE_BYTES).endswith(b"-0"))
    )
    return value, numbers_as_written and aligned and not escaped, numbers_as_written


def _at_most(raw: bytes, byte: bytes, limit: int) -> bool:
    """Whether ``raw`` holds ``byte`` ``limit`` times at most: a memchr search each, never past ``limit``.

    Where ``bytes.count`` compares every byte (about 5 instructions a byte), a
    search for one byte skips to it (under 1); the loop runs once a match.
    """
    at = raw.find(byte)
    for _ in range(limit):
        if at < 0:
            return True
        at = raw.find(byte, at + 1)
    return at < 0


def _holds_negative_zero(raw: bytes, shapes: bytes) -> bool:
    """Whether ``raw``, a JSON text without white space, may hold the integer literal ``-0``.

    ``shapes`` is its translated copy, byte for byte at the same places (nothing
    was deleted). Each ``-0,`` there is looked at in the text: ``-0`` followed by
    what ends a number is the literal, or a string that holds it (either way: "may").
    """
    at = shapes.find(_NEGATIVE_ZERO)
    while at >= 0:
        if raw[at + 1] == 0x30 and raw[at + 2] in _NUMBER_ENDS:
            return True
        at = shapes.find(_NEGATIVE_ZERO, at + 2)
    return False


def _within_depth(value: Any, limit: int) -> bool:
    """Whether ``value``, as the C scanner builds it, nests ``limit`` levels at most.

    Level by level with ``gc.get_referents`` (a C pass per level, no Python code
    per member): the members of a level's containers are the next level, and a
    string, number, boolean or null has none. A level that comes out empty
    within ``limit`` steps proves the depth; ``False`` (a value nesting exactly
    ``limit`` levels, or deeper) leaves the verdict to the exact reader.
    """
    level = [value]
    for _ in range(limit):
        level = _REFERENTS(*level)
        if not level:
            return True
    return False


def loads_exact(raw: bytes, *, max_depth: int) -> Any:
    """:func:`loads` by the exact reader alone: the reference the fast path is held to."""
    if _depth_exceeds(_structure(raw).translate(None, b":"), max_depth):
        raise ValueError(f"JSON nested deeper than {max_depth} levels")
    return _decode_exact(raw)


_NOT_READ: Final = object()


class _Reader:
    """The fast reader of one thread: C scanners whose hooks note each object's size (and a float's spelling).

    A reader is taken out of the thread's slot while it reads, so a nested call (a
    signal handler that parses JSON) gets a reader of its own and the notes stay
    those of one text. The notes are plain attributes, read once per text
    (a property would be a Python call each).
    """

    __slots__ = ("_decoders", "respelled", "sizes")

    #: The member count of each dict of the last value read, one per object of its text.
    sizes: list[int]
    #: ``[True]`` when the last text read with the float hook had a float literal
    #: other than as ``repr`` spells it (without it, floats are not looked at).
    respelled: list[bool]

    def __init__(self) -> None:
        sizes: list[int] = []
        respelled = [False]

        def add_object(
            obj: dict[str, Any],
            _append: Callable[[int], None] = sizes.append,
            _len: Callable[[Any], int] = len,
        ) -> dict[str, Any]:
            # Names bound as defaults: fast locals, where a closure's cell and a global cost more.
            _append(_len(obj))
            return obj

        def read_float(text: str) -> float:
            value = float(text)
            if repr(value) != text:  # the encoder writes repr(value); never "inf"
                if math.isinf(value):
                    raise ValueError("number literal beyond the range of a double")
                respelled[0] = True
            return value

        def decoder(
            parse_float: Callable[[str], float] | None, parse_int: Callable[[str], int] | None
        ) -> json.JSONDecoder:
            return json.JSONDecoder(
                object_hook=add_object,
                parse_constant=_refuse_constant,
                parse_float=parse_float,
                parse_int=parse_int,
            )

        self.sizes = sizes
        self.respelled = respelled
        # Without hooks, with the float hook (vouching), with the number hooks.
        self._decoders = (decoder(None, None), decoder(read_float, None), decoder(_finite_float, _safe_int))

    def read(self, raw: bytes, numbers: bool, vouch: bool = False) -> Any:
        """Parse ``raw`` in C: with the number hooks if ``numbers``, else with the float hook if ``vouch``."""
        self.sizes.clear()
        self.respelled[0] = False
        text = raw.decode("utf-8")
        start = len(text) - len(text.lstrip(_WHITESPACE))
        value, end = self._decoders[2 if numbers else vouch].raw_decode(text, start)
        if text[end:].strip(_WHITESPACE):
            raise ValueError("extra data after the JSON value")
        return value


_READERS: Final = threading.local()


def _decode_exact(raw: bytes) -> Any:
    """The exact reader, after the nesting check: every rule by a hook, as the text is read."""
    text = raw.decode("utf-8")
    # raw_decode with the white space JSON allows around the value skipped here:
    # what decode does, without its two regex calls (docs/benchmarks.md).
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _DECODER.raw_decode(text, start)
    except RecursionError as exc:  # unreachable below the depth limit; kept total
        raise ValueError("JSON nested too deeply") from exc
    if text[end:].strip(_WHITESPACE):
        raise ValueError("extra data after the JSON value")
    # A lone surrogate can only arrive as a \u escape (strict UTF-8 refuses the
    # encoded form), so texts without one need no check.
    if raw.find(b"\\u") >= 0 and _has_lone_surrogate(value):
        raise ValueError("a string holds an escaped lone surrogate, which is not valid Unicode")
    return value


def _has_lone_surrogate(value: Any) -> bool:
    try:
        dumps(value)
    except ValueError:
        return True
    return False


# For bytes.translate: both kinds of bracket become one kind, and every other byte
# except the quote and the colon is deleted.
_ONE_KIND: Final = bytes.maketrans(b"{}", b"[]")
_NOT_STRUCTURE: Final = bytes(b for b in range(256) if b not in b'"[]{}:')


def _structure(raw: bytes) -> bytes:
    """The brackets (both kinds made ``[`` and ``]``) and colons of JSON text outside its strings.

    Each step is a C-speed pass (no Python code runs per byte). Escapes go first
    (escaped backslashes, then escaped quotes; ``bytes.replace`` pairs them left to
    right, as a JSON reader does), so every quote left delimits a string. Keeping
    only quotes, brackets and colons, the strings that hold neither become ``""``
    and vanish (removing two adjacent quotes leaves every other byte on the same
    side of every string); only if a quote is left is the text between quotes
    dropped. In a text that parses, the colons left are its members, one each.
    """
    if raw.find(b"\\") >= 0:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    structure = raw.translate(_ONE_KIND, _NOT_STRUCTURE).replace(b'""', b"")
    if structure.find(b'"') >= 0:
        structure = b"".join(structure.split(b'"')[::2])
    return structure


def _nests_deeper(brackets: bytes, limit: int) -> bool:
    """Tell whether ``brackets`` (from :func:`_structure`, colons removed) nest deeper than ``limit``.

    Runs before parsing, so a deeply nested input is refused without recursion.
    A value cannot nest deeper than it has opening brackets, so most texts need no
    more than a count. Otherwise innermost pairs are peeled off, a level per C-speed
    pass: a text that vanishes within ``limit`` passes is balanced and no deeper
    than ``limit``. Any other text is measured: between two closing brackets lies a
    run of opening ones, so the depth just before the i-th closing bracket is the
    number of opening brackets so far minus i; the largest such value is the
    nesting depth (an unbalanced text is then refused by the parser, or here).
    """
    if brackets.count(b"[") <= limit:
        return False
    peeled = brackets
    for _ in range(limit):
        peeled = peeled.replace(b"[]", b"")
        if not peeled:
            return False
    return _depth_exceeds(brackets, limit)


def _depth_exceeds(brackets: bytes, limit: int) -> bool:
    """The measure itself: the largest number of brackets open at once, against ``limit``."""
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
    kind = type(value)
    if kind is dict or kind is list:
        _check_container(value, 0)
    else:
        _check(value, 0)


def _check_container(container: dict[Any, Any] | list[Any], depth: int) -> None:
    """:func:`_check` of a dict or list, with the common members settled inline.

    The exact types JSON reads back (``str``, ``int``, ``dict``, ``list``, ``bool``,
    ``None``, ``float``) are checked here without a call per member; anything else
    (a subclass, a tuple, a value that is not JSON) goes to :func:`_check`.
    """
    if depth == MAX_STATE_DEPTH:
        raise ValueError(f"the state nests deeper than {MAX_STATE_DEPTH} levels")
    members: Any = container
    if isinstance(container, dict):
        for key in container:
            if type(key) is not str:
                raise TypeError(f"the state has a {type(key).__name__} key; JSON keys are strings")
        members = container.values()
    for item in members:
        kind = type(item)
        if kind is str:
            continue
        if kind is int:
            if -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                continue
            raise ValueError("the state holds an integer outside the safe range +/-(2**53 - 1)")
        if kind is dict or kind is list:
            _check_container(item, depth + 1)
        elif kind is bool or item is None:
            continue
        elif kind is float:
            if not math.isfinite(item):
                raise ValueError("the state holds a non-finite number")
        else:
            _check(item, depth + 1)


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
        _check_container(value, depth)
    elif not isinstance(value, str):
        raise TypeError(
            f"the state holds a {kind.__name__}, which is not JSON-serialisable; "
            "use dict, list, str, int, float, bool and None only"
        )


#: The exact types of the values a state may hold without a closer look, and of its containers.
_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
_CONTAINERS: Final = frozenset({dict, list})
_JSON_TYPES: Final = _SCALARS | _CONTAINERS
# Below this many bytes of JSON the plain walk costs fewer instructions than the census.
_CENSUS_FROM: Final = 512


def _referents_are_members() -> bool:
    """Whether ``gc.get_referents`` lists what :func:`_census` relies on, on this interpreter.

    CPython's dict visits only the values of a dict whose keys are all exact
    ``str`` (and its keys too otherwise), a list its items (in either order);
    scalars have no referents. Any other behaviour turns the census off: :func:`check_state` decides.
    """
    if sys.implementation.name != "cpython":
        return False
    probe = [1]
    try:
        return (
            gc.get_referents({"a": probe, "b": 2}) in ([probe, 2], [2, probe])
            and len(gc.get_referents({1: probe})) == 2
            and len(gc.get_referents({True: probe, 1.5: 2, None: 3})) == 6
            and len(gc.get_referents({"a": 1, _Probe("b"): 2})) == 4
            and len(gc.get_referents([probe, "x"])) == 2
            and gc.get_referents("x", 1, 1.5, None, True) == []
        )
    except Exception:  # any surprise means: no census
        return False


class _Probe(str):
    """A ``str`` subclass, for :func:`_referents_are_members`."""

    __slots__ = ()


_CENSUS: Final = _referents_are_members()
_REFERENTS: Final = gc.get_referents
_IS_CONTAINER: Final = _CONTAINERS.__contains__


def _census(state: dict[Any, Any] | list[Any]) -> bool:
    """Whether ``state`` (an exact dict or list the C encoder wrote) passes :func:`check_state`, by C passes.

    Level by level: the members of the containers of one level (``gc.get_referents``,
    values only for a dict whose keys are all exact strings), their count against
    the containers' lengths (a dict with any other key lists its keys too), the
    set of their exact types, and the containers among them for the next level.
    No Python code runs per member. ``True`` only when every key is an exact
    ``str``, every value of an exact JSON type and the nesting within
    :data:`MAX_STATE_DEPTH`; numbers are the caller's (finite: the encoder;
    integers: the written text). ``False`` means "not vouched for": the plain walk decides.
    """
    level: list[Any] = [state]
    for _ in range(MAX_STATE_DEPTH):
        members = _REFERENTS(*level)
        if len(members) != sum(map(len, level)):
            return False
        kinds = set(map(type, members))
        if kinds <= _SCALARS:
            return True
        if not kinds <= _JSON_TYPES:
            return False
        level = list(compress(members, map(_IS_CONTAINER, map(type, members))))
    return False


# For bytes.translate: every digit becomes "0", every other byte a space (see _NUMBER_SHAPES).
_DIGITS: Final = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))


def encode_state(state: Any) -> bytes | None:
    """:func:`check_state`, then :func:`dumps`: the state's JSON, in fewer instructions.

    Raises as :func:`check_state` does, with the same exception and message, for
    every state it refuses. Returns the compact UTF-8 JSON of a state it accepts,
    or ``None`` when the state passes the check but cannot be written (a lone
    surrogate, a structure deeper than Python's recursion limit allows): then
    :func:`dumps` of it raises the writing's error, where the caller writes it.

    The C encoder writes the state first; it refuses what is not JSON and
    non-finite numbers. What it writes silently is looked for apart: an integer
    beyond the safe range has 16 digits or more in the text; a tuple, a key that
    is not an exact ``str``, a subclass, or nesting beyond the limit is found by
    :func:`_census`. Whenever either cannot vouch for the state, or the encoder
    refuses it, :func:`check_state` decides: so every refusal is its refusal.
    """
    kind = type(state)
    try:
        text = _ENCODER.encode(state) if _C_ENCODE is None else "".join(_C_ENCODE(state, 0))
    except Exception:  # the check's refusal, or the writing's error where dumps raises it
        check_state(state)
        return None
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        check_state(state)
        return None
    if not (
        _CENSUS
        and len(raw) >= _CENSUS_FROM
        and (kind is dict or kind is list)
        and raw.translate(_DIGITS).find(_LONG_DIGIT_RUN) < 0
        and _census(state)
    ):
        check_state(state)
    return raw


# The escapes the encoder writes for a character of a string other than a control
# character without a short form (it writes those as \u00xx, never met here).
_WRITTEN_ESCAPES: Final = (b'\\"', b"\\b", b"\\f", b"\\n", b"\\r", b"\\t")
# For bytes.translate, digits deleted: where a value starts (":", "," or "[") becomes "a",
# what only a float or a negative number has ("-", ".", "e", "E") ".", every other byte a
# space. Outside the strings of a text without white space, a number leaves "a." exactly
# when it is a float or negative ("-5" and "1.5" after ":" both leave it; "true" leaves
# "a   ."); a string may leave it too ("key:example"), so the whole text saying "a." is
# a reason to look closer, not to refuse.
_NUMBER_STARTS: Final = bytes(0x61 if b in b":,[" else 0x2E if b in b"-.eE" else 0x20 for b in range(256))
_DIGIT_BYTES: Final = b"0123456789"


def is_written_as(text: bytes, value: Any, *, numbers_as_written: bool = False) -> bool:
    r"""Whether ``text``, a JSON text :func:`loads` read ``value`` from, is byte for byte ``dumps(value)``.

    Then the text can stand for the value's compact JSON without writing it
    again. Reading drops what writing does not put back, so the text is the
    written one when, outside its strings, it has no white space, no integer
    ``-0`` and only float literals spelled as ``repr`` spells them, and when its
    strings use only the escapes the encoder writes (``\"``, ``\\``, ``\b``,
    ``\f``, ``\n``, ``\r``, ``\t``): any other character, UTF-8 included, is
    written as it was read. Member order is kept by reading, and a text
    :func:`loads` accepts repeats no member. ``False`` means "not vouched for":
    the caller writes the value.

    An object or array is settled by C passes: memchr searches, and one
    ``bytes.translate`` that shows where a float or a negative number may
    stand. A text with a space, or with what may be such a number, has its
    strings cut out (one split) and the same passes run on what lies outside
    them: a space there refuses, and where there is no float and no negative
    number the text is vouched for. A text that holds one is written and
    compared (the definition), as is any value other than an object or array.

    ``numbers_as_written`` says that reading the text showed every number
    literal in it as writing spells it (:func:`loads_written`): then only its
    white space and escapes are looked at.
    """
    if type(value) is not dict and type(value) is not list:
        return dumps(value) == text
    plain = text
    if plain.find(b"\\") >= 0:
        # Escaped backslashes first, paired left to right as a reader pairs them, then
        # the other escapes the encoder writes; a backslash left starts one it does not.
        plain = plain.replace(b"\\\\", b"")
        for escape in _WRITTEN_ESCAPES:
            plain = plain.replace(escape, b"")
        if plain.find(b"\\") >= 0:
            return False
    # A string holds no raw control character (the reader refuses one), so these are outside.
    if plain.find(b"\t") >= 0 or plain.find(b"\n") >= 0 or plain.find(b"\r") >= 0:
        return False
    if plain.find(b" ") < 0 and (
        numbers_as_written or plain.translate(_NUMBER_STARTS, _DIGIT_BYTES).find(b"a.") < 0
    ):
        return True
    # Every quote left delimits a string: the pieces between them, taken alternately, are outside.
    outside = b"".join(plain.split(b'"')[::2])
    if outside.find(b" ") >= 0:
        return False
    # What is outside the strings is structure, literals and numbers: "a." there is a number.
    return (
        numbers_as_written
        or outside.translate(_NUMBER_STARTS, _DIGIT_BYTES).find(b"a.") < 0
        or dumps(value) == text
    )


def dumps(value: Any) -> bytes:
    """Serialise ``value`` as compact UTF-8 JSON.

    Raises :class:`ValueError` on a lone surrogate, a non-finite number, or a value
    that refers to itself (or nests beyond Python's recursion limit), and
    :class:`TypeError` on a value that is not JSON.
    """
    try:
        text = _ENCODER.encode(value) if _C_ENCODE is None else "".join(_C_ENCODE(value, 0))
    except RecursionError:
        raise ValueError("the value refers to itself or nests too deeply") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("a string holds a lone surrogate, which is not valid Unicode") from exc
