"""The reason codes and the claim set as types: the same names the profile and the code use."""

from __future__ import annotations

import textwrap
import typing
from pathlib import Path

from mypy import api as mypy_api

from mrtr_state import REASONS, Claims, InvalidRequestState, Reason
from mrtr_state.token import claims


def test_the_reason_type_names_every_reason_code_in_the_profiles_order() -> None:
    assert typing.get_args(Reason) == tuple(REASONS)


def test_the_claims_type_names_every_claim_and_requires_the_required_ones() -> None:
    assert set(typing.get_type_hints(Claims)) == set(claims.ALL_CLAIMS)
    assert Claims.__required_keys__ == claims.REQUIRED_CLAIMS


def test_a_misspelt_reason_code_is_a_type_error_for_the_callers_checker(tmp_path: Path) -> None:
    caller = tmp_path / "caller.py"
    caller.write_text(
        textwrap.dedent(
            """
            from mrtr_state import InvalidRequestState

            def handle(refusal: InvalidRequestState) -> bool:
                return refusal.reason == "expird"

            InvalidRequestState("expird")
            """
        ),
        encoding="utf-8",
    )
    out, _, status = mypy_api.run(
        ["--strict", "--strict-equality", "--no-incremental", "--cache-dir=/dev/null", str(caller)]
    )
    assert status == 1, out
    assert 'Argument 1 to "InvalidRequestState" has incompatible type "Literal[\'expird\']"' in out
    assert "Non-overlapping equality check" in out


def test_a_refusal_keeps_its_typed_reason() -> None:
    refusal = InvalidRequestState("expired")
    reason: Reason = refusal.reason
    assert reason == "expired"
