"""``mrtr-state conformance``: run another implementation of the profile through its vectors.

The implementation is any program that speaks the JSON-lines protocol below; the
runner sends it every vector of ``spec/vectors/`` and generated mutations of the
valid tokens, compares every answer with the reference, and names the conformance
class reached (profile, section 12.6). ``--serve`` speaks the protocol itself, with
this library as the implementation: the reference, and a template to copy.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import sys
from pathlib import Path
from typing import Any, NoReturn

from mrtr_state.cli._io import CliError
from mrtr_state.cli._parsing import Parser
from mrtr_state.conformance import (
    CLASSES,
    Case,
    ImplementationError,
    Report,
    answer,
    judge,
    load_cases,
    mutate,
    run_cases,
)
from mrtr_state.conformance.cases import to_json

__all__ = ["PROTOCOL", "default_vectors", "register", "serve"]

#: The protocol, as ``--help`` shows it (docs/conformance.md has the long form).
PROTOCOL = """\
protocol (JSON lines; UTF-8; one JSON object per line):
  The runner starts COMMAND and writes requests to its standard input, one per
  line, then closes it. The implementation answers each request with one line on
  its standard output, in request order, carrying the request's "id". Its standard
  error is free for diagnostics. Requests:

  {"id": "0", "op": "verify", "keys": <JWKS>, "token": "...", "issuer": "...",
   "user": "...", "tool" | "prompt" | "resource": "...", "arguments": {...},
   "now": <seconds>, "max_lifetime": 600, "leeway": 0, "max_token_bytes": 8192,
   "require_arguments": false}
      -> {"id": "0", "valid": true, "state": <the state>}
      or {"id": "0", "valid": false, "reason": "<reason code>"}
      ("arguments" absent means {}; the settings fields may be absent: use the
      profile's defaults; "require_arguments" absent means false)
  {"id": "1", "op": "digest", "arguments": {...}}
      -> {"id": "1", "digest": "<args_sha256>"} or {"id": "1", "unbindable": true}
  {"id": "2", "op": "load_key", "jwk": {...}}    (or "jwks": {"keys": [...]}, a ring)
      -> {"id": "2", "loaded": true} or {"id": "2", "loaded": false}
      (the valid keys and rings of keys.json must load; every invalid one must not)
  An operation the implementation does not offer:
      -> {"id": "...", "unsupported": true}

classes:
  strict    every answer is the reference answer (verdict, reason code, state,
            digest, key refusal, key load) for every vector and mutation
  baseline  every valid token is accepted with its state, and every token a party
            without any key could produce is refused, with any reason code
            (re-encodings of valid tokens are exempt)
"""

_EPILOG = f"""\
{PROTOCOL}
exit status: 0 the implementation reached --class; 1 it did not; 2 usage mistake
or bad input (no vectors, a command that cannot start).

examples (the first two from the root of a clone, the TypeScript one once built as
examples/interop/typescript/README.md says):
  mrtr-state conformance -- node examples/interop/typescript/dist/main.js conformance
  mrtr-state conformance --class baseline --form signed -- go -C examples/baseline/go run .
  mrtr-state conformance --mutations 200000 --seed 7 -- ./my-verifier   # a long differential run
  mrtr-state conformance --mutations-only --mutations 2000 -- ./my-verifier  # no fixed vector, only mutations
  mrtr-state conformance --serve                                        # the reference implementation
  mrtr-state conformance --seed 7 --case tokens/expired-at-exp -- ./my-verifier  # re-run one case
"""


def register(commands: argparse._SubParsersAction[Parser]) -> None:
    """Add the ``conformance`` command to the parser."""
    command = commands.add_parser(
        "conformance",
        help="run an implementation of the profile through every vector and mutations",
        description="Run an implementation of the profile (a command speaking the JSON-lines "
        "protocol below) through every vector and generated mutations; report each case and "
        "the conformance class reached.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument(
        "implementation",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND [ARG ...]",
        help="the implementation to run, after '--'",
    )
    command.add_argument(
        "--vectors",
        metavar="DIR",
        type=Path,
        default=None,
        help="the profile's vectors folder (default: the copy installed with the package; in a clone "
        "installed for development, the clone's spec/vectors)",
    )
    command.add_argument(
        "--class",
        dest="wanted",
        choices=CLASSES,
        default="strict",
        help="the class the implementation claims; exit status 1 if it does not reach it (default strict)",
    )
    command.add_argument(
        "--form",
        dest="forms",
        action="append",
        choices=("signed", "encrypted"),
        help="only the tokens of this form (repeat for both; default both): for an implementation that "
        "offers one form",
    )
    command.add_argument(
        "--mutations", type=int, default=500, metavar="N", help="generated mutations to add (default 500)"
    )
    command.add_argument(
        "--mutations-only",
        action="store_true",
        help="send the generated mutations only, not the vectors they are made from: shows whether a rule "
        "is tested by more than its fixed vectors",
    )
    command.add_argument(
        "--seed", type=int, default=None, metavar="N", help="the mutations' seed (default: random, printed)"
    )
    command.add_argument(
        "--timeout", type=float, default=300.0, metavar="SECONDS", help="for the whole run (default 300)"
    )
    command.add_argument(
        "--report",
        metavar="FILE",
        type=Path,
        help="write every case's result as JSON lines, with what replays it: the request (its ring named "
        "by its member of keys.json), the answer, and the command that re-runs the case alone",
    )
    command.add_argument(
        "--case",
        dest="only",
        action="append",
        metavar="ID",
        help="run only the case with this id (repeat for more); a mutation's id holds with the same --seed "
        "and --mutations",
    )
    command.add_argument("--quiet", action="store_true", help="print failures and the summary only")
    command.add_argument(
        "--serve", action="store_true", help="be the implementation: answer the protocol on stdin/stdout"
    )
    command.set_defaults(run=_conformance)


def _conformance(args: argparse.Namespace) -> int:
    if args.serve:
        if args.implementation:
            raise CliError("--serve takes no command")
        return serve(sys.stdin.buffer, sys.stdout)
    command = list(args.implementation)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise CliError("give the implementation's command after '--' (or --serve)")
    if args.mutations < 0:
        raise CliError("--mutations must be 0 or more")
    if args.mutations_only and args.mutations == 0:
        raise CliError("--mutations-only needs --mutations N of 1 or more: there would be no case to send")
    forms = set(args.forms or ("signed", "encrypted"))
    vectors = default_vectors() if args.vectors is None else args.vectors
    cases = [case for case in _cases(vectors) if case.form is None or case.form in forms]
    seed = random.SystemRandom().randrange(2**31) if args.seed is None else args.seed
    keys = _keys(vectors)
    generated = mutate(cases, keys, count=args.mutations, seed=seed)
    cases = generated if args.mutations_only else cases + generated
    if args.only:
        cases = _only(cases, args.only)
    try:
        run = run_cases(command, cases, timeout=args.timeout)
    except ImplementationError as exc:
        raise CliError(str(exc)) from None
    report = judge(cases, run.answers)
    if args.report is not None:
        _write_report(args.report, report, _Replay(keys, command, args, seed))
    _print(
        report, seed=seed, quiet=args.quiet, stopped=run.stopped, answered=run.answered, wanted=args.wanted
    )
    return 0 if report.meets(args.wanted) else 1


def default_vectors() -> Path:
    """The vectors a run reads without ``--vectors``.

    The copy a wheel or sdist installs with the package (``mrtr_state/_vectors/``,
    copied from ``spec/vectors/`` at build time), so an installed package needs no
    clone; without one (an editable install of a clone), the clone's ``spec/vectors/``.
    """
    package = Path(__file__).resolve().parent.parent
    packaged = package / "_vectors"
    if (packaged / "keys.json").is_file():
        return packaged
    clone = package.parent.parent / "spec" / "vectors"
    if package.parent.name == "src" and (clone / "keys.json").is_file():
        return clone
    raise CliError("this installation carries no vectors: give --vectors DIR (the profile's spec/vectors)")


def _only(cases: list[Case], wanted: list[str]) -> list[Case]:
    by_id = {case.id: case for case in cases}
    unknown = [name for name in wanted if name not in by_id]
    if unknown:
        raise CliError(
            f"no case {unknown[0]!r} in this run (a mutation's id needs the same --seed and --mutations; "
            "--report FILE lists every id)"
        )
    return [by_id[name] for name in dict.fromkeys(wanted)]


def _cases(directory: Path) -> list[Case]:
    if not (directory / "keys.json").is_file():
        raise CliError(f"no vectors in {str(directory)!r} (give --vectors DIR, the profile's spec/vectors)")
    try:
        return load_cases(directory)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def _keys(directory: Path) -> dict[str, Any]:
    keys: dict[str, Any] = json.loads((directory / "keys.json").read_text(encoding="utf-8"))
    return keys


def _print(
    report: Report, *, seed: int, quiet: bool, stopped: str | None, answered: int, wanted: str
) -> None:
    # What the claimed class does not judge is counted once per rule below, not printed as FAIL lines.
    allowed = set(map(id, report.allowed(wanted)))
    for index, result in enumerate(report.results):
        if stopped is not None and index >= answered:
            break  # said once below, not once per case
        vector = result.case.origin == "vector"
        if (result.strict and (quiet or not vector)) or id(result) in allowed:
            continue
        verdict = "pass" if result.strict else "FAIL"
        line = f"{verdict} {result.case.id}"
        if not result.strict:
            line += f": expected {result.wanted}, got {result.got}"
            if result.baseline is False:
                line += " (breaks the baseline class)"
        print(line)
    if stopped is not None:
        unanswered = len(report.results) - answered
        print(f"FAIL the implementation stopped answering: {unanswered} cases got no answer: {stopped}")
    if report.refused_every_valid_key:
        print(
            "FAIL the implementation refused every valid key of keys.json: a verifier must load them "
            "(profile, section 7); one that refuses every key passes no invalid-key case on its merits"
        )
    failed = len(report.failures) - len(allowed)
    print(f"mutation seed: {seed}")
    if allowed:
        print(
            f"allowed by the {wanted} class: {len(allowed)} answers differ from the reference where that "
            "class asks nothing (--class strict lists each)"
        )
    for rule, count in sorted(report.allowed_rules(wanted).items()):
        print(f"allowed rule: {rule} ({count} cases)")
    for rule, count in sorted(report.failed_rules(wanted).items()):
        print(f"failed rule: {rule} ({count} cases)")
    print(f"class reached: {report.reached}")
    passed = len(report.results) - len(report.failures)
    if allowed:
        print(f"{passed} passed, {len(allowed)} allowed, {failed} failed")
    else:
        print(f"{passed} passed, {failed} failed")


class _Replay:
    """What a report row needs to replay its case: the ring's name, and the command for one case."""

    def __init__(self, keys: dict[str, Any], command: list[str], args: argparse.Namespace, seed: int) -> None:
        self._members = {
            _canonical_json(value): name for name, value in keys.items() if isinstance(value, dict)
        }
        options = [] if args.vectors is None else ["--vectors", str(args.vectors)]
        options += ["--seed", str(seed), "--mutations", str(args.mutations)]
        options += ["--mutations-only"] if args.mutations_only else []
        options += [option for form in (args.forms or ()) for option in ("--form", form)]
        self._prefix = ["mrtr-state", "conformance", *options]
        self._command = command

    def request(self, request: dict[str, Any]) -> dict[str, Any]:
        """The request as sent, with a ring or key of keys.json named by its member (``keys.json#hs256``)."""
        row = dict(request)
        for field in ("keys", "jwk", "jwks"):
            value = row.get(field)
            name = self._members.get(_canonical_json(value)) if isinstance(value, dict) else None
            if name is not None:
                row[field] = f"keys.json#{name}"
        return row

    def rerun(self, case_id: str) -> str:
        """The command line that re-runs this case alone, against the same implementation."""
        return shlex.join([*self._prefix, "--case", case_id, "--", *self._command])


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _write_report(path: Path, report: Report, replay: _Replay) -> None:
    try:
        with path.open("w", encoding="utf-8") as file:
            for result in report.results:
                entry = {
                    "id": result.case.id,
                    "origin": result.case.origin,
                    "strict": result.strict,
                    "baseline": result.baseline,
                    "expected": result.wanted,
                    "got": result.got,
                    "request": replay.request(dict(result.case.request)),
                    "answer": result.answer,
                    "rerun": replay.rerun(result.case.id),
                }
                # ASCII: U+2028 in a vector stays escaped, so every row is one line for any reader.
                file.write(to_json(entry, ensure_ascii=True) + "\n")
    except OSError as exc:
        raise CliError(f"cannot write the report {str(path)!r}: {exc.strerror}") from None


def serve(requests: Any, output: Any) -> int:
    """Answer the protocol with this library: read request lines, write answer lines.

    Every line gets exactly one answer line and the loop goes on, whatever the line
    holds: one that is not a JSON object (or nests too deep to read, or holds
    ``NaN``, ``Infinity`` or ``-Infinity``, which are not JSON) is answered
    ``{"id": null, "error": ...}``, and a request that fails in any unforeseen way
    (a clock of ``1e400`` seconds, say) ``{"id": ..., "error": ...}``.
    """
    for line in requests:
        output.write(_reply(line) + "\n")
        output.flush()
    return 0


def _not_json(literal: str) -> NoReturn:
    """Refuse ``NaN``, ``Infinity`` and ``-Infinity``: Python reads them, JSON has none (RFC 8259)."""
    raise ValueError(f"{literal} is not a JSON value")


def _reply(line: bytes | str) -> str:
    """The answer line to one request line; never raises."""
    try:
        request = json.loads(line, parse_constant=_not_json)
    except (ValueError, RecursionError):
        request = None
    if not isinstance(request, dict):
        return json.dumps({"id": None, "error": "a request line is not a JSON object"})
    try:
        reply: dict[str, Any] = answer(request)
    except (KeyError, TypeError, ValueError):
        reply = {"unsupported": True}
    except Exception as exc:  # one bad request must not end the loop
        # The class name only: the exception's text could quote the request's keys.
        reply = {"error": f"the request could not be answered ({type(exc).__name__})"}
    try:
        return json.dumps({"id": request.get("id"), **reply}, ensure_ascii=False)
    except (ValueError, RecursionError):
        return json.dumps({"id": None, "error": "the answer could not be written as JSON"})
