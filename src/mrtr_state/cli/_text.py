"""How the command line shows values: safe for a terminal, exact, dated in UTC.

A token's claims come from whoever made the token. Printed as they are, a claim
could move the cursor, recolour the terminal or hide a character behind a
look-alike, so every value from a token or a file goes through :func:`printable`,
which escapes what a terminal would not show as itself. Strings are shown
JSON-quoted, so a trailing space or an empty string is visible: the comparisons
in the profile are exact.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Final

__all__ = ["duration", "iso_time", "json_block", "json_line", "printable", "quoted", "shown"]

_UNITS: Final = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    # Outside the BMP, JSON escapes are a surrogate pair; the result stays valid JSON.
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def printable(text: str) -> str:
    r"""Escape every character a terminal would not show as itself (controls, format characters, ...).

    Line breaks are kept, so a multi-line JSON block stays readable. Escapes use the
    JSON ``\uXXXX`` form, so escaped JSON text is still the same JSON.
    """
    if text.isprintable():
        return text
    return "\n".join(
        "".join(char if char.isprintable() else _escape(char) for char in line) for line in text.split("\n")
    )


def quoted(value: Any) -> str:
    """A claim or header value as JSON (a string in quotes), safe to print."""
    return printable(json.dumps(value, ensure_ascii=False))


def shown(path: str) -> str:
    """A file name as it appears in a message."""
    return printable(repr(path))


def json_block(value: Any) -> str:
    """Pretty JSON for people, safe to print."""
    return printable(json.dumps(value, ensure_ascii=False, indent=2))


def json_line(value: Any) -> str:
    """One line of ASCII JSON for machines."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def iso_time(seconds: int) -> str | None:
    """``2026-01-01T00:10:00Z`` for seconds since the epoch; ``None`` beyond what a date can show."""
    try:
        moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat().replace("+00:00", "Z")


def duration(seconds: int) -> str:
    """A length of time for people: ``42s``, ``9m 12s``, ``3m``, ``2h 5m``, ``3d 4h``."""
    seconds = abs(seconds)
    for index, (name, size) in enumerate(_UNITS):
        if seconds >= size or name == "s":
            lead, rest = divmod(seconds, size)
            text = f"{lead}{name}"
            if index + 1 < len(_UNITS):
                next_name, next_size = _UNITS[index + 1]
                if rest // next_size:
                    text += f" {rest // next_size}{next_name}"
            return text
    raise AssertionError("unreachable: the last unit is one second")  # pragma: no cover
