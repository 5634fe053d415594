"""Conformance testing of profile implementations (``mrtr-state conformance``).

An implementation in any language is run as a child process that speaks a small
JSON-lines protocol on its standard input and output (:mod:`.protocol`). The runner
feeds it every vector of ``spec/vectors/`` and a set of generated mutations of the
valid tokens, compares each answer with the reference verdict, and reports the
conformance class reached (profile, section 12.5): ``strict`` (every verdict and
reason code), ``baseline`` (every valid token accepted, every token a party without
any key could produce refused) or ``none``.
"""

from mrtr_state.conformance.cases import Case, load_cases
from mrtr_state.conformance.judge import CLASSES, Report, Result, judge
from mrtr_state.conformance.mutations import mutate
from mrtr_state.conformance.reference import answer
from mrtr_state.conformance.runner import ImplementationError, Run, run_cases

__all__ = [
    "CLASSES",
    "Case",
    "ImplementationError",
    "Report",
    "Result",
    "Run",
    "answer",
    "judge",
    "load_cases",
    "mutate",
    "run_cases",
]
