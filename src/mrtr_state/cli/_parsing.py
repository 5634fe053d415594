"""The argument parser: usage mistakes are one line on standard error and exit status 2."""

from __future__ import annotations

import argparse
import math
from typing import Any, NoReturn

from mrtr_state.cli._text import shown

__all__ = ["Parser", "epoch_seconds"]


class Parser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose errors are one line that points to ``--help``.

    Options must be spelled out: an abbreviation (``--res`` for ``--resource``)
    is a usage mistake, so a typo never silently means another option.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """Report a usage mistake in one line and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def epoch_seconds(text: str) -> float:
    """An argparse type: a time in seconds since the epoch, such as ``1767225600``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{shown(text)} is not a time in seconds since the epoch (e.g. 1767225600)"
        ) from None
    if not math.isfinite(value) or not 0 <= value < 2**53:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a time in seconds since the epoch")
    return value
