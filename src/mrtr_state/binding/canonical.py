"""RFC 8785 (JSON Canonicalization Scheme) and the argument digest of the profile.

The request-binding claim ``args_sha256`` is the unpadded base64url SHA-256 of the
JCS form of the request's ``arguments`` object (profile, section 3.4). JCS fixes
member order (by UTF-16 code units), string escaping, and number formatting (the
ECMAScript ``Number.prototype.toString`` of the IEEE 754 double), so a TypeScript,
Go, Java or Rust server computes the same digest from the same arguments.

Because JCS reads numbers as doubles, neighbouring integers beyond 2**53 share
a digest; arguments holding a number whose value is an integer beyond
+/-(2**53 - 1) are therefore unbindable (profile, section 3.4), and
:func:`arguments_digest` refuses them with a :class:`ValueError`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from json import encoder
from operator import itemgetter
from typing import Any, Final

from mrtr_state.token import _b64

__all__ = ["JSON_NULL", "UNBINDABLE_NUMBER", "arguments_digest", "canonicalize"]

#: Why arguments holding an integer beyond the safe range have no digest (profile, 3.4).
UNBINDABLE_NUMBER: Final = (
    "the arguments hold a number whose value is an integer beyond +/-(2**53 - 1); RFC 8785 "
    "writes numbers as IEEE 754 doubles, so neighbouring integers there share one digest and "
    "cannot be bound: pass such ids (64-bit ids, nanosecond timestamps) as strings"
)


class _JsonNull:
    """The type of :data:`JSON_NULL`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "JSON_NULL"


#: Arguments a request carries as JSON ``null``: present, not an object, so unbindable (profile,
#: sections 3.4 and 8.2). Python's ``None`` cannot say it: to ``seal`` and ``open`` it means that
#: no arguments are bound at all (a resource read), while only absent arguments are ``{}``.
JSON_NULL: Final = _JsonNull()


def canonicalize(value: Any) -> bytes:
    """Return the RFC 8785 canonical UTF-8 JSON of ``value``.

    ``value`` is made of mappings (string keys), lists, ``str``, ``int``,
    ``float``, ``bool`` and ``None``. Numbers are IEEE 754 doubles, as in JCS: an
    integer beyond 2**53 is written as the double nearest to it. (That is plain
    RFC 8785; :func:`arguments_digest` refuses such arguments as unbindable.)

    Raises:
        TypeError: for a value that is not JSON.
        ValueError: for a non-finite number, a number too large for a double, a
            string that is not valid Unicode (a lone surrogate), or nesting deeper
            than 256 levels.
    """
    return _canonical(value, bind=False)


def _canonical(value: Any, *, bind: bool) -> bytes:
    try:
        return _encode(value, 0, bind).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("a string holds a lone surrogate, which is not valid Unicode") from exc


def arguments_digest(arguments: Mapping[str, Any]) -> str:
    """Return the profile's argument digest: base64url(SHA-256(JCS(arguments))), unpadded.

    Raises:
        TypeError: ``arguments`` is not a mapping of JSON values: arguments that
            are not an object (JSON ``null``, read as ``None`` or given as
            :data:`JSON_NULL`, a list, a string, a number, a boolean) are
            unbindable (profile, sections 3.4 and 8.2).
        ValueError: the arguments are unbindable (profile, section 3.4): a number
            whose value is an integer beyond +/-(2**53 - 1), however it is written
            (``2**60``, ``1e23``), a non-finite number, a lone surrogate, or
            nesting deeper than 256 levels. Pass large ids as strings.
    """
    flat = _flat(arguments) if type(arguments) is dict else None
    if flat is not None:
        return _b64.encode(hashlib.sha256(flat).digest())
    if not isinstance(arguments, Mapping):
        # Profile 3.4 and 8.2: arguments present but not an object (null too) are unbindable.
        raise TypeError(f"arguments must be a JSON object, not {_json_kind(arguments)}")
    return _b64.encode(hashlib.sha256(_canonical(arguments, bind=True)).digest())


def _flat(arguments: dict[Any, Any]) -> bytes | None:
    """The JCS of a flat object written by the C encoder, or ``None``: :func:`_canonical` writes it.

    A dict whose keys are ASCII strings (their code points order them as their
    UTF-16 code units do) and whose values are strings, booleans, null or
    integers within the safe range (printed plainly by ECMAScript) is written
    by the C encoder with sorted keys exactly as :func:`_encode` writes it,
    with no Python code per member but the type check. Anything else (a float,
    a container, a key or string that is not ASCII-safe) is left to :func:`_canonical`.
    """
    try:
        if _FLAT is None or not "".join(arguments).isascii():
            return None
    except TypeError:  # a key that is not a string
        return None
    for value in arguments.values():
        kind = type(value)
        if not (kind is str or kind is bool or value is None or (kind is int and -_SAFE < value < _SAFE)):
            return None
    try:
        return "".join(_FLAT(arguments, 0)).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: _canonical refuses it with its message
        return None


def _json_kind(value: object) -> str:
    """What a non-object value is, in JSON's words (never the value itself)."""
    if value is None or value is JSON_NULL:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    return f"a {type(value).__name__}"


# The C string escaper behind json.dumps(ensure_ascii=False): JCS escapes exactly
# the same characters (quote, backslash, U+0000 to U+001F, with the short forms).
_string: Final[Callable[[str], str]] = encoder.c_encode_basestring or encoder.py_encode_basestring  # type: ignore[attr-defined]


# The C encoder behind json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False),
# made once: _flat's writer (None without the C accelerator).
def _refuse(value: object) -> str:
    raise TypeError(f"a {type(value).__name__} is not JSON")


_FLAT: Final[Callable[[Any, int], list[str]] | None] = (
    None
    if encoder.c_make_encoder is None  # type: ignore[attr-defined]
    else encoder.c_make_encoder(None, _refuse, _string, None, ":", ",", True, False, False)  # type: ignore[attr-defined]
)

# JCS nests as deep as the value does; this bound only keeps a hostile value from
# exhausting the interpreter's stack with a RecursionError.
_MAX_DEPTH: Final = 256
_SAFE: Final = 2**53


def _encode(value: Any, depth: int, bind: bool) -> str:
    """JCS text of ``value``; with ``bind``, refuse integers beyond the safe range (profile, 3.4)."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is int:
        # Below 2**53 an integer is its own double, and ECMAScript prints it plainly.
        return str(value) if -_SAFE < value < _SAFE else _number(value, bind)
    if depth >= _MAX_DEPTH:
        raise ValueError(f"the value nests deeper than {_MAX_DEPTH} levels")
    if kind is dict or (kind is not list and isinstance(value, Mapping)):
        members = sorted(value.items(), key=_first if _ascii_keys(value) else _utf16_order)
        return "{" + ",".join([f"{_string(k)}:{_encode(v, depth + 1, bind)}" for k, v in members]) + "}"
    if kind is list or kind is tuple:
        return "[" + ",".join([_encode(item, depth + 1, bind) for item in value]) + "]"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return _number(value, bind)
    if isinstance(value, str):
        return _string(value)
    raise TypeError(f"a {kind.__name__} is not JSON")


_first: Final = itemgetter(0)


def _ascii_keys(mapping: Mapping[Any, Any]) -> bool:
    """Tell whether every key is an ASCII string, checked in one C-level pass.

    ASCII strings sort the same by code point as by UTF-16 code unit, so their
    members can be sorted on the key itself, without encoding each one (the usual
    case, and a large part of an argument digest; docs/benchmarks.md). A key that
    is not a string sends the mapping down the general path, which names it in its
    TypeError.
    """
    try:
        return "".join(mapping).isascii()
    except TypeError:
        return False


def _utf16_order(member: tuple[object, object]) -> bytes:
    key = member[0]
    if not isinstance(key, str):
        raise TypeError(f"a {type(key).__name__} key is not JSON; object keys are strings")
    # Big-endian UTF-16 bytes compare in the order of their code units (RFC 8785, 3.2.3).
    # A lone surrogate raises UnicodeEncodeError, a ValueError.
    return key.encode("utf-16-be")


def _number(value: int | float, bind: bool = False) -> str:
    """Format a number as ECMAScript ``Number.prototype.toString`` does (RFC 8785, 3.2.2.3).

    With ``bind``, a value that is an integer beyond +/-(2**53 - 1) is refused: every
    double of magnitude 2**53 or more is an integer, so that is ``abs(x) >= 2**53``,
    and an ``int`` beyond the safe range is refused before it is rounded.
    """
    if bind and isinstance(value, int) and not -_SAFE < value < _SAFE:
        raise ValueError(UNBINDABLE_NUMBER)
    try:
        x = float(value)
    except OverflowError as exc:
        raise ValueError("an integer too large for an IEEE 754 double") from exc
    if not math.isfinite(x):
        raise ValueError("a non-finite number is not JSON")
    if x == 0:
        return "0"  # both zeros
    if bind and abs(x) >= _SAFE:
        raise ValueError(UNBINDABLE_NUMBER)
    if x < 0:
        return "-" + _number(-x)
    # repr() gives the shortest digit string that round-trips, as ECMAScript requires.
    mantissa, _, exponent = repr(x).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exponent) if exponent else 0)
    significant = digits.lstrip("0")
    point -= len(digits) - len(significant)
    significant = significant.rstrip("0")
    k, n = len(significant), point
    if k <= n <= 21:
        return significant + "0" * (n - k)
    if 0 < n <= 21:
        return significant[:n] + "." + significant[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + significant
    e = n - 1
    sign = "+" if e >= 0 else "-"
    head = significant[0] if k == 1 else significant[0] + "." + significant[1:]
    return f"{head}e{sign}{abs(e)}"
