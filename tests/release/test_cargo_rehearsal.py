"""The Rust install rehearsal: the two crates as ``cargo package`` makes them, used by a fresh crate outside
the clone that has exactly the dependency lines of rust/README.md and rust/rmcp/README.md, and runs their
programs.

Issue 34, "Done when": a Rust author following rust/README.md, in a crate outside the repository, gets a
protected round trip with the rmcp client. Here ``cargo package`` packs ``rust/`` (``mrtr-state``) and
``rust/rmcp`` (``mrtr-state-rmcp``) as ``cargo publish`` would upload them. ``--no-verify``: a verify build
compiles each crate alone from its unpacked sources, the rmcp crate with rmcp's server features only (a
feature set nothing else builds, so rmcp and its dependencies would compile once more); the fresh crate
below builds both unpacked crates anyway, which is the check that matters. Packing ``mrtr-state-rmcp``
resolves its dependency on ``mrtr-state``, not on crates.io yet, so that one command gets ``--config
patch.crates-io.mrtr-state.path=...``. ``--allow-dirty`` so it packs the working tree being tested (a
release packs its tagged commit).

The .crate files are unpacked into a temporary folder, and a fresh crate outside the clone gets a
``Cargo.toml`` whose ``[dependencies]`` are rust/README.md's install block and the lines of
rust/rmcp/README.md's "A protected round trip in one program" as written, with the ``[patch.crates-io]``
that rust/README.md tells a user to write today, pointed at the unpacked crates instead of a clone. Its
``src/main.rs`` is that section's program and ``src/bin/quickstart.rs`` rust/README.md's quick start, both
as written. To keep it cheap, the crate gets rust/rmcp/Cargo.lock (the lock of the build that already
compiled rmcp's client for rust/rmcp/tests/rmcp_client.rs: examples/server-rust/Cargo.lock holds the same
versions but no client) and builds with ``--target-dir rust/target``, so only the two unpacked crates and
the program compile; the test checks that no resolved version moved. The round trip (a server on a loopback
port and rmcp's own client, in one process that stops its server) prints what rust/rmcp/README.md says it
prints.

Without cargo this skips, except under CI=true, where it fails. The module took 35 s warm here on 2 shared
cores (64 s while another build ran) (rust/target built by scripts/check-rust: the two crates and the
program compile) and its build 8 min 53 s cold (an empty target directory: rmcp, reqwest, axum and the rest
compile too); each cargo command is bounded by TIMEOUT.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import tomllib

from tests.ci import missing_tool
from tests.docs.fenced_blocks import fenced_blocks

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "rust"
RMCP = CORE / "rmcp"
VERSION = "0.1.0"
TARGET_DIR = Path(os.environ.get("CARGO_TARGET_DIR", CORE / "target"))
TIMEOUT = 900  # a cold build of rmcp, reqwest and axum on two busy cores; not a claim about speed
APP = "mrtr-rehearsal-app"
QUICKSTART = "mrtr-rehearsal-quickstart"


def _run(command: list[str], *, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("CARGO_TARGET_DIR", "RUSTFLAGS")}
    run = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert run.returncode == 0, (
        f"{' '.join(command[:3])} exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-4000:]}"
    )
    return run.stdout


def _block(readme: Path, heading: str, language: str, contains: str, *, for_copying: bool = True) -> str:
    """The one fenced ``language`` block of ``readme`` after ``heading`` (up to the next heading of its
    level) that holds ``contains`` and is (or, with ``for_copying`` false, is not) for copying."""
    text = readme.read_text(encoding="utf-8")
    assert f"\n{heading}\n" in text, f"{readme.name}: no heading {heading!r}"
    start = text.index(f"\n{heading}\n") + 1
    level = heading.split(" ", 1)[0]
    end = text.find(f"\n{level} ", start + len(heading))
    first, last = text.count("\n", 0, start) + 1, text.count("\n", 0, end if end != -1 else len(text)) + 1
    found = [
        block
        for line, block, exempt in fenced_blocks(readme, language)
        if first < line < last and exempt != for_copying and contains in block
    ]
    assert len(found) == 1, f"{readme}, {heading!r}: {len(found)} {language} blocks hold {contains!r}"
    return found[0]


@pytest.fixture(scope="module")
def packaged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The two crates packed by ``cargo package`` and unpacked: crate name to its unpacked folder."""
    cargo = shutil.which("cargo")
    if cargo is None:
        missing_tool("cargo is not installed; the Rust install rehearsal needs a Rust toolchain")
    out = tmp_path_factory.mktemp("cargo-package")
    package = [cargo, "package", "--no-verify", "--allow-dirty", "--target-dir", str(out)]
    _run(package, cwd=CORE)
    _run([*package, "--config", f"patch.crates-io.mrtr-state.path={str(CORE)!r}"], cwd=RMCP)
    unpacked = tmp_path_factory.mktemp("crates")
    crates = {}
    for name in ("mrtr-state", "mrtr-state-rmcp"):
        with tarfile.open(out / "package" / f"{name}-{VERSION}.crate") as archive:
            archive.extractall(unpacked, filter="data")
        crates[name] = unpacked / f"{name}-{VERSION}"
    return crates


def test_the_packages_hold_the_sources_and_a_registry_manifest(packaged: dict[str, Path]) -> None:
    for name, folder in packaged.items():
        manifest = tomllib.loads((folder / "Cargo.toml").read_text(encoding="utf-8"))
        assert manifest["package"]["name"] == name
        assert manifest["package"]["version"] == VERSION
        assert (folder / "src" / "lib.rs").is_file()
        assert (folder / "README.md").is_file()
    rmcp_manifest = tomllib.loads((packaged["mrtr-state-rmcp"] / "Cargo.toml").read_text(encoding="utf-8"))
    # The path to the core crate is gone: a published crate names it by version, from the registry.
    assert rmcp_manifest["dependencies"]["mrtr-state"] == {"version": VERSION}, rmcp_manifest["dependencies"]


def _manifest(crates: dict[str, Path]) -> str:
    core = _block(CORE / "README.md", "## Install", "toml", 'mrtr-state = "')
    round_trip = _block(RMCP / "README.md", "## A protected round trip in one program", "toml", "rmcp =")
    # The user's [patch.crates-io] of rust/README.md, pointed at the unpacked packages instead of a clone.
    patch = _block(CORE / "README.md", "## Install", "toml", "[patch.crates-io]")
    assert patch.count("path = ") == 2, patch
    patch = "[patch.crates-io]\n" + "".join(
        f"{name} = {{ path = {str(folder)!r} }}\n" for name, folder in crates.items()
    )
    return (
        f'[package]\nname = "{APP}"\nversion = "0.1.0"\nedition = "2024"\npublish = false\n\n'
        f'[[bin]]\nname = "{APP}"\npath = "src/main.rs"\n\n'
        f'[[bin]]\nname = "{QUICKSTART}"\npath = "src/bin/quickstart.rs"\n\n'
        f"{core}{round_trip}\n{patch}"
    )


def _versions(lock: Path) -> dict[str, str]:
    packages = tomllib.loads(lock.read_text(encoding="utf-8"))["package"]
    return {p["name"]: p["version"] for p in packages if "source" in p}


def test_a_fresh_crate_with_the_readme_lines_runs_the_quick_start_and_the_rmcp_round_trip(
    packaged: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    cargo = shutil.which("cargo")
    assert cargo is not None
    app = tmp_path_factory.mktemp("rust-app")
    assert not app.resolve().is_relative_to(ROOT.resolve()), "the user's crate must live outside the clone"
    (app / "Cargo.toml").write_text(_manifest(packaged), encoding="utf-8")
    (app / "src" / "bin").mkdir(parents=True)
    program = _block(RMCP / "README.md", "## A protected round trip in one program", "rust", "fn main")
    (app / "src" / "main.rs").write_text(program, encoding="utf-8")
    quickstart = _block(CORE / "README.md", "## Quick start", "rust", "fn main")
    (app / "src" / "bin" / "quickstart.rs").write_text(quickstart, encoding="utf-8")
    shutil.copyfile(RMCP / "Cargo.lock", app / "Cargo.lock")

    _run([cargo, "build", "--bins", "--target-dir", str(TARGET_DIR)], cwd=app)
    built = _versions(app / "Cargo.lock")
    pinned = _versions(RMCP / "Cargo.lock")
    moved = {name: (pinned.get(name), got) for name, got in built.items() if pinned.get(name) != got}
    assert not moved, f"the fresh crate resolved other versions than rust/rmcp/Cargo.lock: {moved}"
    # The unpacked packages, not the clone, served the two crates.
    for name, folder in packaged.items():
        pkgid = _run([cargo, "pkgid", "--offline", name], cwd=app).strip()
        assert pkgid == f"path+{folder.as_uri()}#{name}@{VERSION}", pkgid

    binaries = TARGET_DIR / "debug"
    quick = _run([str(binaries / QUICKSTART)], cwd=app)
    assert quick.splitlines() == ["opened once, then replayed and wrong_user"], quick
    output = _run([str(binaries / APP)], cwd=app)
    section = "## A protected round trip in one program"
    expected = _block(RMCP / "README.md", section, "text", "bob:", for_copying=False).splitlines()
    assert len(expected) == 4, expected
    assert output.splitlines() == expected, output
