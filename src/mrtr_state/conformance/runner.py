"""Run an implementation as a child process over the JSON-lines protocol.

The protocol (``mrtr-state conformance --help`` and docs/conformance.md): the
runner writes one JSON object per line to the implementation's standard input,
each with an ``id`` and an ``op``, and closes it at the end; the implementation
writes one JSON object per line to its standard output, each with the ``id`` of
the request it answers, in the order of the requests. Standard error is free for
the implementation's own diagnostics.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from typing import IO, Any

from mrtr_state.conformance.cases import Case

__all__ = ["ImplementationError", "run_cases"]

#: How many characters of the implementation's standard error a failure quotes.
_STDERR_TAIL = 2000


class ImplementationError(Exception):
    """The implementation could not be run, or stopped answering."""


def run_cases(
    command: Sequence[str],
    cases: Sequence[Case],
    *,
    timeout: float,
    cwd: str | None = None,
) -> list[Mapping[str, Any] | None]:
    """Send every case to ``command`` and return its answers, in case order.

    An answer is ``None`` where the implementation gave none (it stopped early, ran
    past ``timeout`` seconds, or wrote a line that is not a JSON object with the
    expected ``id``); the runner then stops reading and every later case is
    ``None`` too, so a crash costs the cases after it, never the run.

    Raises:
        ImplementationError: the command cannot be started at all.
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
        timer = threading.Timer(timeout, process.kill)
        timer.start()
        writer = threading.Thread(target=_write, args=(process.stdin, cases), daemon=True)
        writer.start()
        try:
            answers = _read(process.stdout, cases)
        finally:
            timer.cancel()
            if process.poll() is None:
                process.kill()
            process.wait()
            writer.join(timeout=5)
        if cases and all(answer is None for answer in answers):
            stderr.seek(0)
            tail = stderr.read()[-_STDERR_TAIL:].decode("utf-8", "replace").strip()
            raise ImplementationError(
                f"{command[0]!r} answered no request (exit status {process.returncode})"
                + (f"; it wrote: {tail}" if tail else "")
            )
        return answers


def _write(stream: IO[bytes], cases: Sequence[Case]) -> None:
    try:
        for number, case in enumerate(cases):
            message = {"id": str(number), **case.request}
            stream.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
        stream.close()
    except (BrokenPipeError, OSError, ValueError):
        pass  # the implementation stopped reading; its missing answers say so


def _read(stream: IO[bytes], cases: Sequence[Case]) -> list[Mapping[str, Any] | None]:
    answers: list[Mapping[str, Any] | None] = [None] * len(cases)
    for number in range(len(cases)):
        line = stream.readline()
        if not line:
            break
        try:
            message = json.loads(line)
        except ValueError:
            break
        if not isinstance(message, dict) or message.get("id") != str(number):
            break
        answers[number] = {name: value for name, value in message.items() if name != "id"}
    return answers
