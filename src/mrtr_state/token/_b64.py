"""Unpadded base64url (RFC 7515 section 2), strict in both directions.

A strict decoder accepts exactly the strings the encoder produces: the URL-safe
alphabet only, no padding, no white space, and zero bits in the unused low bits of
the last character. Two different strings therefore never decode to the same bytes,
which is what lets the profile say "a token whose text differs from the one minted
is refused" (profile, section 5, step 3).
"""

from __future__ import annotations

import binascii
import re
import sys
from typing import Final

#: The URL-safe alphabet (RFC 4648, section 5), in the order of the values it encodes.
ALPHABET: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

_ALPHABET: Final = re.compile(r"[A-Za-z0-9_-]*")

# For a final group of two or three characters, the low bits of the last
# character carry no data and must be zero in the canonical encoding.
_VALUE: Final = {chr(c): i for i, c in enumerate(ALPHABET)}
_UNUSED_BITS_MASK: Final = {0: 0, 2: 0x0F, 3: 0x03}


def encode(data: bytes) -> str:
    """Return the unpadded base64url encoding of ``data``."""
    # Two replaces, not bytes.translate: each finds its byte with memchr, where
    # translate looks up every byte (about a tenth of the instructions; docs/benchmarks.md).
    encoded = binascii.b2a_base64(data, newline=False).rstrip(b"=")
    return encoded.replace(b"+", b"-").replace(b"/", b"_").decode("ascii")


def encoded_length(size: int) -> int:
    """The length of the unpadded encoding of ``size`` bytes."""
    return (size * 4 + 2) // 3


def outside_alphabet(data: bytes) -> bytes:
    """The bytes of ``data`` that are not in the alphabet, in order.

    One C-speed pass: a compact serialization is its segments' alphabet and the
    dots between them, so what is left is exactly its dots when it has that
    shape (a byte that is not ASCII is never in the alphabet, so it is left too).
    """
    return data.translate(None, ALPHABET)


def is_canonical(text: str) -> bool:
    """Tell whether ``text`` (already known to use the alphabet) is a canonical encoding."""
    rest = len(text) % 4
    if rest == 1:
        return False
    mask = _UNUSED_BITS_MASK[rest]
    return mask == 0 or (_VALUE[text[-1]] & mask) == 0


def decode(text: str) -> bytes:
    """Decode canonical unpadded base64url; raise :class:`ValueError` for anything else."""
    if not _ALPHABET.fullmatch(text):
        raise ValueError("not base64url: a character outside the URL-safe alphabet")
    if not is_canonical(text):
        raise ValueError("not canonical unpadded base64url")
    return decode_checked(text)


_PADDING: Final = ("", "", "==", "=")


def decode_checked(text: str) -> bytes:
    """Decode ``text`` that the caller has already checked to be canonical base64url."""
    try:
        # The same as base64.urlsafe_b64decode, without its per-call conversions:
        # this runs on every segment of every token opened.
        standard = (text + _PADDING[len(text) % 4]).encode("ascii").replace(b"-", b"+").replace(b"_", b"/")
        return binascii.a2b_base64(standard)
    except (binascii.Error, UnicodeEncodeError) as exc:  # unreachable for checked input; kept total
        raise ValueError("not base64url") from exc


def decode_strict(text: str) -> bytes | None:
    """Decode ``text`` if it is canonical unpadded base64url of one segment; ``None`` otherwise.

    For a caller that has checked the length and the unused bits
    (:func:`is_canonical`) and that ``text`` holds no ``+``, ``/`` or ``=``: then
    binascii's strict mode refuses every other byte outside the alphabet as it
    decodes, so no pass of its own looks at each byte. ``None`` also on Python
    3.10, which has no strict mode: the caller takes its full path.
    """
    if sys.version_info < (3, 11):
        return None
    standard = (text + _PADDING[len(text) % 4]).encode("ascii").replace(b"-", b"+").replace(b"_", b"/")
    try:
        return binascii.a2b_base64(standard, strict_mode=True)
    except binascii.Error:
        return None
