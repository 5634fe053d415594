"""docs/architecture.md cannot go stale: every step of profile 5 and 5.1 is mapped, and found where it says.

For each step the page's table names a file per language; the file must exist and hold a comment
naming the step (``# Profile 5, step 9: ...`` or ``// Profile 5.1, step 9: ...``). The steps are read
from the profile itself, so a step added there must be added to the table and to the code.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"
PROFILE = ROOT / "spec" / "profile.md"
#: Columns every step must have a file in; the others (Go, Java) are filled as they land.
REQUIRED_LANGUAGES = ("Python", "TypeScript")
#: Where the rooms table's file names live, by language.
SOURCE_ROOTS = {"Python": ROOT / "src" / "mrtr_state", "TypeScript": ROOT / "typescript" / "src"}

_STEP_ROW = re.compile(r"^\| (5(?:\.1)?), step (\d+) \|")
_PATH = re.compile(r"^`([^`]+)`$")


def _profile_steps() -> set[tuple[str, int]]:
    """The numbered steps of sections 5 and 5.1 of the profile, as (section, number)."""
    text = PROFILE.read_text(encoding="utf-8")
    signed = text.split("\n## 5. Validation\n", 1)[1].split("\n### 5.1.", 1)[0]
    encrypted = text.split("\n### 5.1. ", 1)[1].split("\n## 6.", 1)[0]
    steps = set()
    for section, body in (("5", signed), ("5.1", encrypted)):
        steps |= {(section, int(n)) for n in re.findall(r"^(\d+)\. \*\*", body, flags=re.MULTILINE)}
    return steps


def _table(heading: str) -> tuple[list[str], list[list[str]]]:
    """The header cells and rows of the first table under ``heading`` on the page."""
    section = PAGE.read_text(encoding="utf-8").split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    return cells[0], cells[2:]  # the second line is the delimiter row


def _step_map() -> dict[tuple[str, int], dict[str, str | None]]:
    header, rows = _table("Where each validation step is")
    languages = header[2:]
    found: dict[tuple[str, int], dict[str, str | None]] = {}
    for row in rows:
        match = _STEP_ROW.match("| " + " | ".join(row) + " |")
        assert match, f"a row of the step table is not '5, step N' or '5.1, step N': {row}"
        paths = {}
        for language, cell in zip(languages, row[2:], strict=True):
            path = _PATH.match(cell)
            paths[language] = path.group(1) if path else None
        found[(match.group(1), int(match.group(2)))] = paths
    return found


def _comment_naming(section: str, step: int) -> re.Pattern[str]:
    # "step 1" must not match "step 10"; "Profile 5," must not match "Profile 5.1,".
    return re.compile(rf"^\s*(#|//|\*).*\bProfile {re.escape(section)}, step {step}\b", re.MULTILINE)


STEPS = sorted(_profile_steps())


def test_the_profile_has_the_steps_this_test_expects() -> None:
    assert {n for s, n in STEPS if s == "5"} == set(range(1, 21))
    assert {n for s, n in STEPS if s == "5.1"} == set(range(1, 12))


def test_every_step_of_the_profile_has_exactly_one_row() -> None:
    header, rows = _table("Where each validation step is")
    assert header[:2] == ["Step", "What"]
    assert set(REQUIRED_LANGUAGES) <= set(header[2:])
    assert len(rows) == len(_step_map()), "a step has two rows"
    assert sorted(_step_map()) == STEPS


@pytest.mark.parametrize(("section", "step"), STEPS, ids=[f"{s}-step-{n}" for s, n in STEPS])
def test_each_step_is_found_where_the_page_says_in_every_language(section: str, step: int) -> None:
    paths = _step_map()[(section, step)]
    for language in REQUIRED_LANGUAGES:
        assert paths[language], f"profile {section}, step {step} has no {language} file in the table"
    pattern = _comment_naming(section, step)
    for language, path in paths.items():
        if path is None:
            continue
        file = ROOT / path
        assert file.is_file(), f"{language}: {path} (profile {section}, step {step}) does not exist"
        text = file.read_text(encoding="utf-8")
        assert pattern.search(text), f"{path} has no comment naming 'Profile {section}, step {step}'"


def test_every_file_the_rooms_table_names_exists_and_every_python_module_has_a_room() -> None:
    header, rows = _table("The rooms")
    languages = [cell.split()[0] if cell else "" for cell in header]  # "Python (`src/...`)" -> "Python"
    named: dict[str, set[str]] = {language: set() for language in SOURCE_ROOTS}
    for row in rows:
        for language, cell in zip(languages, row, strict=True):
            if language not in SOURCE_ROOTS:
                continue
            for name in re.findall(r"`([^`]+)`", cell):
                assert (SOURCE_ROOTS[language] / name).exists(), f"{language}: {name} does not exist"
                named[language].add(name)
    python = SOURCE_ROOTS["Python"]
    packages = tuple(name for name in named["Python"] if name.endswith("/"))
    modules = {
        path.relative_to(python).as_posix()
        for path in python.rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py")
    }
    unplaced = {m for m in modules if not m.startswith(packages)} - named["Python"]
    assert not unplaced, f"Python modules in no room: {sorted(unplaced)}"
