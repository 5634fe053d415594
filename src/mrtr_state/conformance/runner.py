"""Run an implementation as a child process over the JSON-lines protocol.

The protocol (``mrtr-state conformance --help`` and docs/conformance.md): the
runner writes one JSON object per line to the implementation's standard input,
each with an ``id`` and an ``op``, and closes it at the end; the implementation
writes one JSON object per line to its standard output, each with the ``id`` of
the request it answers, in the order of the requests. Standard error is free for
the implementation's own diagnostics. An answer whose ``id`` is ``null`` or absent
is taken as the answer to the request in its place (a line the implementation
could not read, whose id it cannot know); the judge then fails that case unless
its class asks nothing of it.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, NoReturn

from mrtr_state.conformance.cases import Case, to_json

__all__ = ["ImplementationError", "Run", "run_cases"]

#: How many characters of the implementation's standard error a failure quotes.
_STDERR_TAIL = 2000
#: How many of its last lines of standard error a stopped implementation's report quotes.
_STDERR_LINES = 12


class ImplementationError(Exception):
    """The implementation could not be run, or answered no request at all."""


@dataclass(frozen=True)
class Run:
    """What one run of an implementation gave.

    ``answers`` holds one answer per case, in case order, ``None`` where none came.
    ``answered`` is how many cases got an answer before the implementation stopped
    answering; ``stopped`` says why it stopped, once (it exited, with its status and
    the last lines of its standard error; it ran past the timeout; it wrote a line
    that is not an answer), or is ``None`` when every case got an answer.
    """

    answers: list[Mapping[str, Any] | None]
    answered: int
    stopped: str | None


def run_cases(
    command: Sequence[str],
    cases: Sequence[Case],
    *,
    timeout: float,
    cwd: str | None = None,
) -> Run:
    """Send every case to ``command`` and collect its answers, in case order.

    An answer is ``None`` where the implementation gave none (it stopped early, ran
    past ``timeout`` seconds, or wrote a line that is not a JSON object with the
    expected ``id``); the runner then stops reading and every later case is
    ``None`` too, so a crash costs the cases after it, never the run, and
    :attr:`Run.stopped` says once why.

    Raises:
        ImplementationError: the command cannot be started at all, or it answered
            no request (the message has its exit status and the end of its stderr).
    """
    with tempfile.TemporaryFile() as stderr:
        try:
            process = subprocess.Popen(  # noqa: S603  (running the given implementation is the point)
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                cwd=cwd,
            )
        except OSError as exc:
            raise ImplementationError(f"cannot start {command[0]!r}: {exc.strerror or exc}") from None
        assert process.stdin is not None  # noqa: S101  (PIPE given)
        assert process.stdout is not None  # noqa: S101
        timed_out = threading.Event()

        def stop() -> None:
            timed_out.set()
            process.kill()

        timer = threading.Timer(timeout, stop)
        timer.start()
        writer = threading.Thread(target=_write, args=(process.stdin, cases), daemon=True)
        writer.start()
        try:
            answers, answered, fault = _read(process.stdout, cases)
        finally:
            timer.cancel()
            if process.poll() is None:
                process.kill()
            process.wait()
            writer.join(timeout=5)
        stderr.seek(0)
        tail = stderr.read()[-_STDERR_TAIL:].decode("utf-8", "replace").strip()
        if cases and answered == 0:
            raise ImplementationError(
                f"{command[0]!r} answered no request (exit status {process.returncode})"
                + (f"; it wrote: {tail}" if tail else "")
            )
        stopped = None
        if answered < len(cases):
            stopped = _why_stopped(
                fault, answered, len(cases), process.returncode, timed_out.is_set(), timeout, tail
            )
        return Run(answers, answered, stopped)


def _why_stopped(
    fault: str | None, answered: int, total: int, status: int, timed_out: bool, timeout: float, tail: str
) -> str:
    """One sentence for the report: why the answers stopped, and what the implementation last wrote."""
    progress = f"after answering {answered} of {total} requests"
    if timed_out:
        why = f"it ran past the timeout of {timeout:g} s and was stopped {progress}"
    elif fault is not None:
        why = f"it wrote {fault} {progress} (exit status {status})"
    else:
        why = f"the process exited with status {status} {progress}"
    lines = tail.splitlines()[-_STDERR_LINES:]
    if lines:
        why += "; the last lines of its standard error:\n" + "\n".join(f"  | {line}" for line in lines)
    else:
        why += "; it wrote nothing to its standard error"
    return why


def _write(stream: IO[bytes], cases: Sequence[Case]) -> None:
    try:
        for number, case in enumerate(cases):
            message = {"id": str(number), **case.request}
            stream.write(to_json(message).encode("utf-8") + b"\n")
        stream.close()
    except (BrokenPipeError, OSError, ValueError):
        pass  # the implementation stopped reading; its missing answers say so


def _not_json(literal: str) -> NoReturn:
    """Refuse ``NaN``, ``Infinity`` and ``-Infinity`` in an answer: Python reads them, JSON has none."""
    raise ValueError(f"{literal} is not a JSON value")


def _read(stream: IO[bytes], cases: Sequence[Case]) -> tuple[list[Mapping[str, Any] | None], int, str | None]:
    """The answers, how many came, and what was wrong with the line that ended them (``None``: EOF)."""
    answers: list[Mapping[str, Any] | None] = [None] * len(cases)
    for number in range(len(cases)):
        line = stream.readline()
        if not line:
            return answers, number, None
        try:
            message = json.loads(line, parse_constant=_not_json)
        except (ValueError, RecursionError):
            return answers, number, "a line that is not JSON"
        if not isinstance(message, dict):
            return answers, number, "a line that is not a JSON object"
        # An answer whose id is null (or absent) is this request's: an implementation that could not read
        # the line cannot know its id, and the protocol has it answer {"id": null, "error": ...} in order.
        if message.get("id") not in (str(number), None):
            return answers, number, f"an answer whose id is not {str(number)!r} (answers go in request order)"
        answers[number] = {name: value for name, value in message.items() if name != "id"}
    return answers, len(cases), None
