"""The fenced code blocks of a Markdown document, as the snippet tests compare them with files."""

from __future__ import annotations

import re
from pathlib import Path

#: The line before a fence that says its block is not for copying (an output transcript, a fragment).
NOT_FOR_COPYING = "<!-- not for copying:"


def fenced_blocks(document: Path, language: str) -> list[tuple[int, str, bool]]:
    """Each fenced block of ``language``: its line, its text, and whether it is marked as not for copying."""
    text = document.read_text(encoding="utf-8")
    fence = re.compile(rf"^```{language}\n(.*?)^```$", re.MULTILINE | re.DOTALL)
    found = []
    for match in fence.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        line = text.count("\n", 0, match.start()) + 1
        found.append((line, match.group(1), before.startswith(NOT_FOR_COPYING)))
    return found
