"""The Rust crates' minimum supported Rust version (MSRV, 1.88) against what their lock files pin.

rust/Cargo.toml, rust/rmcp/Cargo.toml and examples/server-rust/Cargo.toml say ``rust-version = "1.88"``
(rmcp's own), and rust/README.md tells users "Rust 1.88 or later". This machine has one toolchain
(1.95), so what this project can check is:

- the crate's own code: ``cargo clippy`` in scripts/check-rust reads ``rust-version`` and its
  ``incompatible_msrv`` lint (on by default, an error under ``-D warnings``) refuses a standard-library
  item stabilised after it;
- every locked dependency: this test. Each package ``cargo metadata --locked`` resolves for the three
  lock files must declare no ``rust-version`` above the crate's own, so that a 1.88 toolchain does not
  meet a dependency that needs a newer compiler. A ``cargo update`` that moves a dependency past the
  MSRV fails here, in the change that makes it.

What neither checks is a language feature of the crate's own code that is newer than 1.88; building with
a 1.88 toolchain is the check for that, and is not run here (RELEASING.md says so).

Without cargo this skips, except under CI=true, where it fails.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import tomllib

from tests.ci import missing_tool

ROOT = Path(__file__).resolve().parents[2]
CRATES = (ROOT / "rust", ROOT / "rust" / "rmcp", ROOT / "examples" / "server-rust")


def _version(text: str) -> tuple[int, int, int]:
    """``1.88`` and ``1.88.0`` alike, as (major, minor, patch)."""
    parts = [int(part) for part in text.split(".")] + [0, 0]
    return (parts[0], parts[1], parts[2])


def _msrv(crate: Path) -> str:
    with (crate / "Cargo.toml").open("rb") as manifest:
        declared: str = tomllib.load(manifest)["package"]["rust-version"]
    return declared


def test_the_three_crates_state_one_msrv_and_the_readme_says_it() -> None:
    versions = {_msrv(crate) for crate in CRATES}
    assert versions == {"1.88"}, versions
    assert "Rust 1.88 or later" in (ROOT / "rust" / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("crate", CRATES, ids=lambda crate: str(crate.relative_to(ROOT)))
def test_no_locked_dependency_needs_a_newer_rust_than_the_crate(crate: Path) -> None:
    if shutil.which("cargo") is None:
        missing_tool("cargo not found on PATH; the Rust crates' dependencies cannot be resolved")
    metadata = subprocess.run(
        ["cargo", "metadata", "--locked", "--format-version", "1"],
        cwd=crate,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert metadata.returncode == 0, metadata.stderr[-4000:]
    msrv = _version(_msrv(crate))
    packages = json.loads(metadata.stdout)["packages"]
    newer = sorted(
        f"{package['name']} {package['version']} (rust-version {package['rust_version']})"
        for package in packages
        if package.get("rust_version") and _version(package["rust_version"]) > msrv
    )
    assert len(packages) > 20, "cargo metadata resolved almost nothing: the check would prove nothing"
    assert newer == [], f"locked dependencies that need a newer Rust than {_msrv(crate)}: {newer}"
