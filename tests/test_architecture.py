"""docs/architecture.md cannot go stale: every step of profile 5 and 5.1 is mapped, and found where it says.

For each step the page's table names a file per language; the file must exist and hold a comment
naming the step (``# Profile 5, step 9: ...`` or ``// Profile 5.1, step 9: ...``). The steps are read
from the profile itself, so a step added there must be added to the table and to the code. Every folder
and file the rooms table names exists, in all five columns, and every Python and Rust module has a room.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "architecture.md"
PROFILE = ROOT / "spec" / "profile.md"
#: Columns every step must have a file in: every language of the project.
REQUIRED_LANGUAGES = ("Python", "TypeScript", "Go", "Java", "Rust")
#: Where the rooms table's file names live, for the columns that name files relative to their source root.
SOURCE_ROOTS = {"Python": ROOT / "src" / "mrtr_state", "TypeScript": ROOT / "typescript" / "src"}
#: The columns that name folders and files from the repository's root (a file name in parentheses after
#: a folder is in that folder), with the source root of their bare names.
ROOTED_COLUMNS = {
    "Go": ROOT / "go",
    "Java": ROOT / "java" / "src" / "main" / "java" / "dev" / "mrtrstate",
    "Rust": ROOT / "rust" / "src",
}
_FILE = re.compile(r"\.(rs|go|java)$")

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


def _rooted_files(language: str) -> tuple[set[Path], list[str]]:
    """The folders and files the rooms table's ``language`` column names, resolved, and the names that
    resolve to nothing.

    A name with a slash is from the repository's root or, failing that, from the last folder named
    before it in the cell (``jsonstrict/`` after ``go/token/``) or from the language's source root
    (``replay/redis.rs``); a bare file name is in the last folder named before it in the cell; a
    Java class name (``Jws``) is a ``.java`` file of that name under ``java/src/main/java``; other bare
    names (types, features, crates) name no file and are not checked here.
    """
    header, rows = _table("The rooms")
    column = [cell.split()[0] if cell else "" for cell in header].index(language)
    source = ROOTED_COLUMNS[language]
    java = {path.stem: path for path in (ROOT / "java" / "src" / "main" / "java").rglob("*.java")}
    found: set[Path] = set()
    missing: list[str] = []
    for row in rows:
        folder = source
        for name in re.findall(r"`([^`]+)`", row[column]):
            if name.endswith("/") or "/" in name:
                bases = (ROOT, folder, source)
                path = next((base / name for base in bases if (base / name).exists()), None)
                if path is None:
                    missing.append(name)
                    continue
                found.add(path)
                if name.endswith("/") and folder == source:
                    folder = path
            elif _FILE.search(name):
                path = folder / name
                if path.exists():
                    found.add(path)
                else:
                    missing.append(name)
            elif language == "Java" and re.fullmatch(r"[A-Z][A-Za-z0-9]+", name) and name in java:
                found.add(java[name])
    return found, missing


@pytest.mark.parametrize("language", sorted(ROOTED_COLUMNS))
def test_every_folder_and_file_the_go_java_and_rust_columns_name_exists(language: str) -> None:
    found, missing = _rooted_files(language)
    assert not missing, f"{language}: the rooms table names what does not exist: {missing}"
    assert len(found) >= 5, f"{language}: the rooms table names almost nothing"


def test_every_rust_module_has_a_room() -> None:
    found, _ = _rooted_files("Rust")
    source = ROOTED_COLUMNS["Rust"]
    modules = {path for path in source.rglob("*.rs") if path.name not in ("lib.rs", "mod.rs")}
    unplaced = sorted(path.relative_to(ROOT).as_posix() for path in modules - found)
    assert not unplaced, f"Rust modules in no room: {unplaced}"
