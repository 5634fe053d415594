"""``mrtr-state keygen``: private key rings, written only where asked, never readable by others."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from mrtr_state import InvalidRequestState, Keyring, StateSealer

from .conftest import ISSUER, NOW, Rings, Run, seal, secrets_of


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("alg", ["HS256", "EdDSA"])
def test_keygen_writes_a_private_jwks_to_stdout_that_the_library_can_sign_with(run: Run, alg: str) -> None:
    result = run("keygen", "--alg", alg)
    assert result.status == 0
    assert result.stderr == ""
    ring = Keyring.from_jwks(result.stdout)
    assert len(ring) == 1
    assert ring.signing_key.alg == alg
    assert ring.signing_key.kid == ring.signing_key.thumbprint()
    sealer = StateSealer(ring, issuer=ISSUER)
    assert sealer.open(sealer.seal(1, user="alice", tool="deploy"), user="alice", tool="deploy") == 1


def test_two_runs_make_two_different_keys(run: Run) -> None:
    first, second = (secrets_of(run("keygen", "--alg", "HS256").stdout) for _ in range(2))
    assert first != second


def test_keygen_kid_names_the_key(run: Run) -> None:
    result = run("keygen", "--alg", "EdDSA", "--kid", "2026-01")
    assert Keyring.from_jwks(result.stdout).signing_key.kid == "2026-01"


def test_keygen_refuses_a_kid_the_profile_does_not_allow(run: Run) -> None:
    line = run("keygen", "--alg", "EdDSA", "--kid", "has space").error_line()
    assert "kid" in line


@pytest.mark.parametrize("umask", [0o000, 0o022])
def test_a_written_key_file_has_mode_0600_whatever_the_umask(run: Run, tmp_path: Path, umask: int) -> None:
    result = run("keygen", "--alg", "HS256", "-o", "ring.json", umask=umask)
    assert result.status == 0
    assert result.stdout == "", "the secret went to the file, not to standard output"
    path = tmp_path / "ring.json"
    assert mode(path) == 0o600
    assert Keyring.from_jwks(path.read_text()).signing_key.alg == "HS256"
    for secret in secrets_of(path.read_text()):
        assert secret not in result.stderr
    assert "ring.json" in result.stderr
    assert "0600" in result.stderr


def test_keygen_refuses_to_overwrite_a_file_without_force(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "ring.json"
    path.write_text("precious")
    line = run("keygen", "--alg", "EdDSA", "-o", "ring.json").error_line()
    assert "exists" in line
    assert "--force" in line
    assert path.read_text() == "precious"


def test_keygen_refuses_to_write_through_a_symbolic_link(run: Run, tmp_path: Path) -> None:
    (tmp_path / "link.json").symlink_to(tmp_path / "elsewhere.json")
    run("keygen", "--alg", "EdDSA", "-o", "link.json").error_line()
    assert not (tmp_path / "elsewhere.json").exists()


def test_force_replaces_the_file_whole_with_mode_0600_and_leaves_no_temporary_file(
    run: Run, tmp_path: Path
) -> None:
    path = tmp_path / "ring.json"
    path.write_text("old")
    path.chmod(0o644)
    result = run("keygen", "--alg", "EdDSA", "-o", "ring.json", "--force")
    assert result.status == 0
    assert mode(path) == 0o600
    assert Keyring.from_jwks(path.read_text()).signing_key.alg == "EdDSA"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ring.json"]


def test_force_replaces_a_symbolic_link_itself_not_the_file_it_points_to(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "target.json"
    target.write_text("untouched")
    (tmp_path / "link.json").symlink_to(target)
    assert run("keygen", "--alg", "EdDSA", "-o", "link.json", "--force").status == 0
    assert target.read_text() == "untouched"
    assert not (tmp_path / "link.json").is_symlink()


@pytest.mark.parametrize(
    ("output", "expected"),
    [("missing-dir/ring.json", "No such file"), (".", "directory")],
)
def test_an_output_that_cannot_be_written_is_bad_input(
    run: Run, tmp_path: Path, output: str, expected: str
) -> None:
    assert expected in run("keygen", "--alg", "EdDSA", "-o", output).error_line()
    assert expected in run("keygen", "--alg", "EdDSA", "-o", output, "--force").error_line()


def test_add_puts_a_new_signing_key_first_and_old_tokens_still_open(run: Run, rings: Rings) -> None:
    old_ring = rings.ring(rings.eddsa)
    old_token = seal(old_ring)
    result = run("keygen", "--alg", "EdDSA", "--add", "eddsa.json", "--force", secrets=rings.secrets)
    assert result.status == 0
    assert result.stdout == ""
    new_ring = rings.ring(rings.eddsa)
    assert [key.kid for key in new_ring.keys[1:]] == [key.kid for key in old_ring]
    assert new_ring.signing_key.kid not in old_ring
    assert mode(rings.eddsa) == 0o600
    sealer = StateSealer(new_ring, issuer=ISSUER, clock=lambda: NOW)
    assert sealer.open(old_token, user="alice", tool="deploy") == {"step": 2}
    new_token = sealer.seal({"step": 3}, user="alice", tool="deploy")
    with pytest.raises(InvalidRequestState) as refusal:
        StateSealer(old_ring, issuer=ISSUER, clock=lambda: NOW).open(new_token, user="alice", tool="deploy")
    assert refusal.value.reason == "unknown_key"


def test_add_without_force_or_output_changes_nothing(run: Run, rings: Rings) -> None:
    before = rings.eddsa.read_text()
    line = run("keygen", "--alg", "EdDSA", "--add", "eddsa.json", secrets=rings.secrets).error_line()
    assert "--force" in line
    assert "-o" in line
    assert rings.eddsa.read_text() == before


def test_add_with_output_writes_the_new_ring_there_and_leaves_the_old_one(
    run: Run, rings: Rings, tmp_path: Path
) -> None:
    before = rings.hs256.read_text()
    result = run("keygen", "--alg", "HS256", "--add", "hs256.json", "-o", "next.json", secrets=rings.secrets)
    assert result.status == 0
    assert rings.hs256.read_text() == before
    assert len(Keyring.from_jwks((tmp_path / "next.json").read_text())) == 2
    assert mode(tmp_path / "next.json") == 0o600


def test_add_with_output_dash_writes_the_new_ring_to_stdout(run: Run, rings: Rings) -> None:
    result = run("keygen", "--alg", "EdDSA", "--add", "mixed.json", "-o", "-", secrets=rings.secrets)
    assert result.status == 0
    ring = Keyring.from_jwks(result.stdout)
    assert [key.alg for key in ring] == ["EdDSA", "HS256", "EdDSA"]


def test_add_refuses_a_kid_already_in_the_ring(run: Run, rings: Rings) -> None:
    kid = rings.ring(rings.eddsa).signing_key.kid
    before = rings.eddsa.read_text()
    line = run(
        "keygen", "--alg", "EdDSA", "--kid", kid, "--add", "eddsa.json", "--force", secrets=rings.secrets
    ).error_line()
    assert "kid" in line
    assert rings.eddsa.read_text() == before


def test_add_to_a_file_that_is_not_a_ring_is_bad_input(run: Run, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    line = run("keygen", "--alg", "EdDSA", "--add", "notes.txt", "--force").error_line()
    assert "not JSON" in line
    assert (tmp_path / "notes.txt").read_text() == "hello"


def test_keygen_output_is_a_jwks_with_every_member_a_loader_needs(run: Run) -> None:
    jwk = json.loads(run("keygen", "--alg", "EdDSA").stdout)["keys"][0]
    assert {"kty", "crv", "alg", "use", "kid", "x", "d"} <= set(jwk)
    assert jwk["use"] == "sig"
