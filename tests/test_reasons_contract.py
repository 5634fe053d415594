"""spec/reasons.json, the codes and sentences every language's tests read, against the profile and Python.

The codes and their steps are section 6 of spec/profile.md (its table, row for row); the sentences are
:data:`mrtr_state.REASONS`, the ones the Python reference shows. The other languages' tests compare their own
tables with the same file: go/refusal/refusal_test.go, typescript/test/reasons.test.ts,
java/src/test/java/dev/mrtrstate/ReasonsContractTest.java and rust/tests/reasons.rs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mrtr_state import REASONS

ROOT = Path(__file__).resolve().parents[1]


def _contract() -> list[dict[str, Any]]:
    reasons: list[dict[str, Any]] = json.loads((ROOT / "spec" / "reasons.json").read_text(encoding="utf-8"))[
        "reasons"
    ]
    return reasons


def _profile_table() -> list[tuple[str, str]]:
    """Section 6's table: (code, steps) for each row, in order."""
    text = (ROOT / "spec" / "profile.md").read_text(encoding="utf-8")
    section = text[text.index("## 6. Reason codes") : text.index("## 7. Keys")]
    return re.findall(r"^\| `([a-z_]+)` \| ([^|]+?) \|", section, flags=re.MULTILINE)


def test_the_codes_and_steps_are_the_profile_table_row_for_row() -> None:
    table = _profile_table()
    assert len(table) == 16
    assert [(entry["code"], entry["steps"]) for entry in _contract()] == table


def test_the_sentences_are_pythons_word_for_word_in_the_same_order() -> None:
    assert [(entry["code"], entry["sentence"]) for entry in _contract()] == list(REASONS.items())


def test_every_entry_has_exactly_its_three_fields() -> None:
    for entry in _contract():
        assert sorted(entry) == ["code", "sentence", "steps"], entry
        assert entry["sentence"].startswith("The request state"), entry
        assert entry["sentence"].endswith("."), entry
