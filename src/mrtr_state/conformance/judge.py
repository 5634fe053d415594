"""Judge an implementation's answers and name the conformance class it reaches.

The classes (profile, section 12.5):

``strict``
    every case gets the reference answer: the verdict, the reason code, the
    state, the digest, and the refusal of every key that must not load;
``baseline``
    every valid token is accepted with its exact state, and every token that a
    party without any key could produce is refused (with any reason code);
    re-encodings of valid tokens are exempt;
``none``
    neither.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mrtr_state.conformance.cases import Case

__all__ = ["CLASSES", "NO_ANSWER", "Report", "Result", "judge"]

#: The conformance classes, strongest first.
CLASSES: Final = ("strict", "baseline")

#: The rule under which cases that got no answer are counted (the implementation stopped answering).
NO_ANSWER: Final = "no answer"


@dataclass(frozen=True)
class Result:
    """One case's outcome.

    ``strict`` says whether the answer is the reference answer; ``baseline`` says
    whether it meets the baseline class, or is ``None`` where the baseline class
    asks nothing of this case.
    """

    case: Case
    answer: Mapping[str, Any] | None
    strict: bool
    baseline: bool | None

    @property
    def got(self) -> str:
        """The answer, in the words of the report."""
        return _describe(self.answer)

    @property
    def wanted(self) -> str:
        """The reference answer, in the words of the report."""
        return _describe(self.case.expected)


@dataclass(frozen=True)
class Report:
    """Every result of one run, and the class they reach."""

    results: tuple[Result, ...]

    @property
    def reached(self) -> str:
        """``strict``, ``baseline`` or ``none``."""
        if all(result.strict for result in self.results):
            return "strict"
        if all(result.baseline is not False for result in self.results):
            return "baseline"
        return "none"

    @property
    def failures(self) -> tuple[Result, ...]:
        """The results that are not the reference answer."""
        return tuple(result for result in self.results if not result.strict)

    def failed_rules(self, wanted: str = "strict") -> Counter[str]:
        """How many cases failed ``wanted``, by the rule they check: the expected reason code, or the op.

        Cases that got no answer at all (the implementation stopped) count under
        one rule, ``no answer``, not under the rules they would have checked. The
        differences ``wanted`` allows (:meth:`allowed`) are not failures.
        """
        allowed = set(map(id, self.allowed(wanted)))
        return Counter(
            NO_ANSWER if result.answer is None else _rule(result.case)
            for result in self.failures
            if id(result) not in allowed
        )

    def allowed(self, wanted: str) -> tuple[Result, ...]:
        """The answers that differ from the reference where the class ``wanted`` asks nothing.

        A baseline claim does not judge reason codes (a refusal with any code
        meets it), the refusal of tokens only a key holder could make, argument
        digests or key loading (profile 12.6): an answered case of those that
        differs from the reference is allowed, not failed. A strict claim allows
        no difference.
        """
        if wanted == "strict":
            return ()
        return tuple(
            result for result in self.failures if result.answer is not None and result.baseline is not False
        )

    def allowed_rules(self, wanted: str) -> Counter[str]:
        """How many differences ``wanted`` allows, by the rule their case checks."""
        return Counter(_rule(result.case) for result in self.allowed(wanted))

    @property
    def refused_every_valid_key(self) -> bool:
        """Whether every valid key the run sent to ``load_key`` was answered ``loaded: false``.

        Such an implementation refuses the invalid keys for no reason of theirs:
        it passes every "refuses a key at load" case and can verify no token.
        """
        valid = [r for r in self.results if r.case.op == "load_key" and r.case.expected["loaded"] is True]
        return bool(valid) and all(r.answer is not None and r.answer.get("loaded") is False for r in valid)

    def meets(self, wanted: str) -> bool:
        """Whether the run reached ``wanted`` (``strict`` or ``baseline``) or better."""
        reached = self.reached
        return reached != "none" and CLASSES.index(reached) <= CLASSES.index(wanted)


def judge(cases: Sequence[Case], answers: Sequence[Mapping[str, Any] | None]) -> Report:
    """Compare each answer with its case's reference answer."""
    return Report(tuple(_result(case, answer) for case, answer in zip(cases, answers, strict=True)))


def _result(case: Case, answer: Mapping[str, Any] | None) -> Result:
    strict = answer is not None and _same_answer(case, answer)
    return Result(case, answer, strict, _baseline(case, answer, strict))


def _baseline(case: Case, answer: Mapping[str, Any] | None, strict: bool) -> bool | None:
    if case.op != "verify":
        return None
    if case.expected["valid"]:
        return strict
    if case.keyless and not case.reencoding:
        return answer is not None and answer.get("valid") is False
    return None


def _same_answer(case: Case, answer: Mapping[str, Any]) -> bool:
    expected = case.expected
    if case.op == "verify":
        if expected["valid"]:
            return (
                answer.get("valid") is True
                and "state" in answer
                and same_json(answer["state"], expected["state"])
            )
        return answer.get("valid") is False and answer.get("reason") == expected["reason"]
    if case.op == "digest":
        if expected.get("unbindable"):
            return answer.get("unbindable") is True
        return answer.get("digest") == expected["digest"] and not answer.get("unbindable")
    return answer.get("loaded") is expected["loaded"]


def same_json(a: Any, b: Any) -> bool:
    """JSON equality: numbers as I-JSON doubles (``1 == 1.0``, ``-0 == 0``); ``true`` is not ``1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        try:
            return float(a) == float(b)
        except OverflowError:  # an integer no double holds: only itself is equal
            return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _rule(case: Case) -> str:
    if case.op == "verify":
        return "accepts a valid token" if case.expected["valid"] else str(case.expected["reason"])
    if case.op == "digest":
        return "unbindable arguments" if case.expected.get("unbindable") else "argument digest"
    return "loads a valid key" if case.expected["loaded"] else "refuses a key at load"


def _describe(message: Mapping[str, Any] | None) -> str:
    if message is None:
        return "no answer"
    if message.get("unsupported"):
        return "unsupported"
    if "error" in message:  # the implementation could not run the request: say what it said
        return f"error: {str(message['error'])[:200]}"
    if "valid" in message:
        return "valid" if message["valid"] is True else f"refused: {message.get('reason')}"
    if "loaded" in message:
        return "loaded" if message["loaded"] is True else "refused at load"
    if message.get("unbindable"):
        return "unbindable"
    return f"digest {message.get('digest')}"
