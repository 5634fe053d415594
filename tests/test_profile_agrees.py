"""The profile (spec/profile.md) and the code say the same thing."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

from mrtr_state import DEFAULT_MAX_LIFETIME, DEFAULT_MAX_TOKEN_BYTES, DEFAULT_TTL, REASONS, TYP, sealer
from mrtr_state.token import _json as strict_json
from mrtr_state.token import claims, jws
from tests.ci import missing_tool

PROFILE = (Path(__file__).resolve().parent.parent / "spec" / "profile.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = PROFILE.index(f"\n## {title}")
    end = PROFILE.find("\n## ", start + 1)
    return PROFILE[start:end]


def prose(title: str) -> str:
    """A section with its line breaks folded, for matching sentences."""
    return " ".join(section(title).split())


def table_first_column(text: str) -> list[str]:
    return re.findall(r"^\| `([^`]+)` \|", text, flags=re.MULTILINE)


def test_the_reason_codes_are_the_profiles_in_the_profiles_order() -> None:
    assert table_first_column(section("6. Reason codes")) == list(REASONS)


def test_every_reason_code_is_named_by_a_validation_step() -> None:
    steps = section("5. Validation")
    for reason in REASONS:
        assert f"`{reason}`" in steps, reason


def test_the_header_parameters_are_the_profiles() -> None:
    header_table = section("3. Token format").split("### 3.2")[0]
    assert set(table_first_column(header_table)) == set(jws.HEADER_PARAMETERS)
    assert f"exactly `{TYP}`" in header_table


def test_the_claims_and_their_requirement_are_the_profiles() -> None:
    claims_table = section("3. Token format").split("### 3.2")[1].split("### 3.3")[0]
    rows = re.findall(r"^\| `([^`]+)` \| [^|]+ \| (REQUIRED|OPTIONAL) \|", claims_table, flags=re.MULTILINE)
    assert {name for name, _ in rows} == set(claims.ALL_CLAIMS)
    assert {name for name, need in rows if need == "REQUIRED"} == set(claims.REQUIRED_CLAIMS)


def test_the_defaults_and_limits_are_the_profiles() -> None:
    validation = prose("5. Validation")
    assert f"(default {DEFAULT_MAX_LIFETIME} s)" in validation
    assert f"(default 0 s, at most {sealer.MAX_LEEWAY} s)" in validation
    assert f"(default {DEFAULT_MAX_TOKEN_BYTES} bytes)" in validation
    assert f"the default lifetime is {DEFAULT_TTL} seconds" in prose("4. Minting")
    assert f"nest at most {strict_json.MAX_STATE_DEPTH} levels deep" in prose("3. Token format")
    assert f"nesting at most {strict_json.MAX_TEXT_DEPTH} levels" in validation


def mcp_integration() -> ModuleType:
    """``mrtr_state.mcp``; without the ``mcp`` extra, a skip (a failure under CI=true, which installs it)."""
    try:
        import mrtr_state.mcp as integration
    except ImportError as exc:
        missing_tool(
            f"the MCP part of the profile needs the mcp extra (pip install 'mrtr-state[mcp]'): {exc}"
        )
    return integration


def test_the_mcp_refusal_carries_the_reason_where_the_profile_says() -> None:
    REASON_META_KEY = mcp_integration().REASON_META_KEY  # noqa: N806  (the constant's own name)

    carriage = prose("8. Carrying the token in MCP")
    assert f"under the key `{REASON_META_KEY}`" in carriage
    assert f'"{REASON_META_KEY}": "wrong_user"' in section("8. Carrying the token in MCP")


def test_the_jti_length_is_the_profiles() -> None:
    assert "22 to 64 base64url characters" in prose("3. Token format")
    assert "22 to 64 base64url characters" in prose("5. Validation")
    assert claims._JTI.pattern.endswith("{22,64}")


def test_the_changes_section_names_each_changed_verdict() -> None:
    changes = prose("14. Changes")
    for topic in (
        "Ed25519 public keys",
        "2^53",
        "Underflow",
        "Required argument binding",
        "`jti` length",
        "`typ`",
    ):
        assert topic in changes, topic


def test_the_verifier_configuration_includes_the_required_binding() -> None:
    validation = prose("5. Validation")
    assert "whether it requires the argument binding" in validation
    assert "If the verifier requires the argument binding" in validation


def test_the_weak_secret_rule_is_the_profiles() -> None:
    from mrtr_state.keys import keys

    assert f"a pattern of at most {keys._MAX_REFUSED_PERIOD} bytes repeated" in prose("7. Keys")
