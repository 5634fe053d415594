"""The ``mrtr-state`` command line: keygen, jwks, inspect, verify, conformance.

For the people who run servers that use this library: make key rings, publish
their public keys, look inside a ``requestState`` a client or a log shows them,
and check one exactly as a server would. Run ``mrtr-state --help`` or
``python -m mrtr_state --help``.

Exit status: 0 success; 1 ``verify`` refused the token; 2 a usage mistake or bad
input (an unreadable file, bad JSON, text that is not a JWT), reported as one
line on standard error. Secrets reach standard output only from ``keygen``,
whose purpose is to write them, and never standard error.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Sequence

from mrtr_state import PROFILE_VERSION, __version__
from mrtr_state.cli import _conformance, _inspect, _keys, _verify
from mrtr_state.cli._io import CliError
from mrtr_state.cli._parsing import Parser
from mrtr_state.cli._text import printable
from mrtr_state.keys.keys import DEFAULT_KEYS_VARIABLE

__all__ = ["build_parser", "main"]

_PROG = "mrtr-state"

_EPILOG = f"""\
exit status: 0 success, 1 verify refused the token, 2 usage mistake or bad input.
Keys come from a JWKS file or from ${DEFAULT_KEYS_VARIABLE}, as the library reads them.

examples:
  mrtr-state keygen --alg EdDSA -o ring.json
  mrtr-state jwks ring.json > public.json
  mrtr-state inspect "$TOKEN"
  mrtr-state verify "$TOKEN" --keys ring.json --issuer https://files.example.com --user alice --tool deploy
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``mrtr-state`` command and its four commands."""
    parser = Parser(
        prog=_PROG,
        description="Make keys for, look inside, and verify signed MCP requestState tokens.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"{_PROG} {__version__} (profile version {PROFILE_VERSION})"
    )
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND", required=True)
    _keys.register(commands)
    _inspect.register(commands)
    _verify.register(commands)
    _conformance.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit status."""
    _tolerant_output()
    try:
        args = build_parser().parse_args(argv)
        status: int = args.run(args)
        sys.stdout.flush()
    except SystemExit as exit_:  # --help, --version and usage mistakes
        return exit_.code if isinstance(exit_.code, int) else 2
    except CliError as exc:
        # One line, whatever the message quotes.
        print(f"{_PROG}: error: {printable(str(exc)).replace(chr(10), ' ')}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{_PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`mrtr-state ... | head`): nothing to report to it.
        _silence_stdout()
        return 1
    except Exception as exc:  # the promise: one line, never a traceback
        # A bug, not the operator's input; its message could quote input (a secret), so
        # only its type is named.
        print(
            f"{_PROG}: error: unexpected {type(exc).__name__}; this is a bug in {_PROG}, please report it",
            file=sys.stderr,
        )
        return 2
    return status


def _tolerant_output() -> None:
    """Never fail on a character the terminal's encoding lacks: escape it instead."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


def _silence_stdout() -> None:
    # Python flushes stdout again at exit; point it at /dev/null so that flush cannot fail.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
