"""The command exists as a console script and as ``python -m mrtr_state``, with help everywhere."""

from __future__ import annotations

import pytest

from mrtr_state import PROFILE_VERSION, Keyring, __version__

from .conftest import Run


@pytest.mark.parametrize("command", [[], ["keygen"], ["jwks"], ["inspect"], ["verify"]])
def test_every_command_has_help_with_examples(run: Run, command: list[str]) -> None:
    result = run(*command, "--help")
    assert result.status == 0
    assert result.stdout.startswith("usage: mrtr-state")
    assert "examples:" in result.stdout
    assert result.stderr == ""


def test_version_names_the_library_and_the_profile(run: Run) -> None:
    result = run("--version")
    assert result.status == 0
    assert result.stdout.strip() == f"mrtr-state {__version__} (profile version {PROFILE_VERSION})"


def test_python_dash_m_runs_the_same_command_line(run: Run) -> None:
    help_text = run("--help", module=True)
    assert help_text.status == 0
    assert help_text.stdout == run("--help").stdout

    made = run("keygen", "--alg", "EdDSA", module=True)
    assert made.status == 0
    assert Keyring.from_jwks(made.stdout).signing_key.alg == "EdDSA"

    refused = run("inspect", "not-a-token", module=True)
    assert refused.error_line().startswith("mrtr-state: error:")


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["frobnicate"],
        ["keygen"],
        ["keygen", "--alg", "RS256"],
        ["inspect"],
        ["verify", "a.b.c", "--user", "alice", "--tool", "deploy"],
        ["verify", "a.b.c", "--issuer", "i", "--user", "alice"],
        ["verify", "a.b.c", "--issuer", "i", "--user", "alice", "--tool", "t", "--prompt", "p"],
        ["verify", "a.b.c", "--issuer", "i", "--user", "alice", "--tool", "t", "--now", "soon"],
        ["verify", "a.b.c", "--issuer", "i", "--user", "alice", "--tool", "t", "--now", "nan"],
        ["verify", "a.b.c", "--issuer", "i", "--user", "alice", "--tool", "t", "--leeway", "1.5"],
        ["inspect", "a.b.c", "--now", "-5"],
        ["verify", "a.b.c", "--issuer", "i", "--user", "alice", "--res", "file:///x"],
    ],
)
def test_a_usage_mistake_is_one_line_pointing_to_help_and_status_2(run: Run, args: list[str]) -> None:
    line = run(*args).error_line()
    assert "error:" in line
    assert "--help" in line
