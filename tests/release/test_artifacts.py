"""The release check: the sdist and the wheel install and work outside the repository.

``python -m build`` makes both artifacts (the wheel from the sdist, so the sdist is
proved complete); each goes into a fresh virtual environment in a temporary folder
outside the clone, and from there the README's quick start runs (and, from the wheel
installed with the ``mcp`` extra, the stdio MCP quick start through a round trip), and
``mrtr-state conformance`` runs the installed package through its packaged vectors. Issue 25: an
installed wheel could not run the conformance command (it carried no vectors), and no
test installed an artifact. Issue 33: the vectors reach the wheel through pyproject.toml's
package-dir mapping instead of a setup.py hook, which lists the packages by name, so the wheel is
checked to hold every module. The npm tarball has its own check: tests/release/test_npm_tarball.py.

Issue 33: the install as it will be once published, rehearsed. Both artifacts are served from a local
package index (a PEP 503 simple directory on a loopback ``http.server``), and each environment gets its
artifact with the README's own command, ``pip install 'mrtr-state[mcp]'``, the index as ``--index-url``
and PyPI as the extra index for the dependencies (the sdist with ``--no-binary mrtr-state`` and no extra);
pip's installation report must show the package came from the local index, byte for byte the built file.
The module took 177 s here on 2 shared cores (the build and two installs); each command has a timeout.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
import threading
import venv
import zipfile
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.ci import missing_tool

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "spec" / "vectors"
CONSTRAINTS = ROOT / "requirements" / "constraints.txt"
QUICKSTART = ROOT / "docs" / "examples" / "quickstart.py"


def _digests(paths: dict[str, bytes]) -> dict[str, str]:
    return {name: hashlib.sha256(data).hexdigest() for name, data in paths.items()}


def _spec_vectors() -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(VECTORS.glob("*.json"))}


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without whatever points at the clone's venv or sources."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update(extra)
    return env


def _run(command: list[str], *, cwd: Path, timeout: float, **extra: str) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(
        command,
        cwd=cwd,
        env=_clean_env(**extra),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert run.returncode == 0, (
        f"{command[:4]} exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    )
    return run


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel, built from this clone into a temporary folder."""
    # Ask the interpreter the build runs with, outside the clone: an import here could find a stray
    # setuptools "build/" folder of the clone instead of the package.
    probe = subprocess.run(
        [sys.executable, "-m", "build", "--version"], cwd=tmp_path_factory.getbasetemp(), capture_output=True
    )
    if probe.returncode != 0:
        missing_tool("the release check needs 'build' (pip install -e '.[dev]')")
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], cwd=out, timeout=300)
    wheels, sdists = sorted(out.glob("*.whl")), sorted(out.glob("*.tar.gz"))
    assert len(wheels) == 1, sorted(p.name for p in out.iterdir())
    assert len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0]}


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """Quiet: pytest shows a failing command's own output."""


@pytest.fixture(scope="module")
def index(artifacts: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a PEP 503 simple index on loopback that serves the wheel and the sdist."""
    root = tmp_path_factory.mktemp("index")
    project = root / "simple" / "mrtr-state"
    project.mkdir(parents=True)
    links = []
    for path in artifacts.values():
        (project / path.name).write_bytes(path.read_bytes())
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        links.append(f'<a href="{path.name}#sha256={digest}">{path.name}</a><br>')
    (project / "index.html").write_text(
        f"<!DOCTYPE html><html><body>{''.join(links)}</body></html>\n", encoding="utf-8"
    )
    (root / "simple" / "index.html").write_text(
        '<!DOCTYPE html><html><body><a href="mrtr-state/">mrtr-state</a></body></html>\n', encoding="utf-8"
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_the_wheel_carries_the_vectors_byte_for_byte(artifacts: dict[str, Path]) -> None:
    with zipfile.ZipFile(artifacts["wheel"]) as wheel:
        packaged = {
            name.rsplit("/", 1)[1]: wheel.read(name)
            for name in wheel.namelist()
            if name.startswith("mrtr_state/_vectors/")
        }
    assert packaged, "the wheel has no mrtr_state/_vectors/"
    assert _digests(packaged) == _digests(_spec_vectors())


def test_the_wheel_holds_every_module_of_the_package(artifacts: dict[str, Path]) -> None:
    """pyproject.toml lists the packages by name (for the vectors' mapping): a new room must be listed."""
    source = ROOT / "src"
    modules = {path.relative_to(source).as_posix() for path in (source / "mrtr_state").rglob("*.py")}
    modules |= {"mrtr_state/py.typed"}
    with zipfile.ZipFile(artifacts["wheel"]) as wheel:
        shipped = {name for name in wheel.namelist() if name.startswith("mrtr_state/")}
    assert modules - shipped == set(), "modules the wheel lacks (list their package in pyproject.toml)"
    assert {name for name in shipped - modules if not name.startswith("mrtr_state/_vectors/")} == set()


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_an_installed_artifact_runs_the_quick_start_and_conformance_outside_the_clone(
    kind: str, artifacts: dict[str, Path], index: str, tmp_path: Path
) -> None:
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = env_dir / "bin" / "python"
    cli = env_dir / "bin" / "mrtr-state"
    # The README's command from the local index: the wheel with the mcp extra (its stdio quick start runs
    # below), the sdist (pip builds it) with the core alone.
    command = ["mrtr-state[mcp]"] if kind == "wheel" else ["--no-binary", "mrtr-state", "mrtr-state"]
    report = tmp_path / "pip-report.json"
    pip = [str(python), "-m", "pip", "install", "--quiet", "-c", str(CONSTRAINTS), "--report", str(report)]
    indexes = ["--index-url", index, "--extra-index-url", "https://pypi.org/simple/"]
    _run([*pip, *indexes, *command], cwd=tmp_path, timeout=600)
    ours = [
        item for item in json.loads(report.read_text())["install"] if item["metadata"]["name"] == "mrtr-state"
    ]
    assert len(ours) == 1, ours
    assert ours[0]["download_info"]["url"] == index + f"mrtr-state/{artifacts[kind].name}", ours[0]
    built = hashlib.sha256(artifacts[kind].read_bytes()).hexdigest()
    assert ours[0]["download_info"]["archive_info"]["hashes"]["sha256"] == built, ours[0]
    where = _run(
        [str(python), "-c", "import mrtr_state; print(mrtr_state.__file__)"], cwd=tmp_path, timeout=60
    )
    installed = Path(where.stdout.strip()).resolve()
    assert env_dir.resolve() in installed.parents, installed
    assert ROOT not in installed.parents
    assert ROOT not in tmp_path.resolve().parents

    copy = installed.parent / "_vectors"
    assert _digests({p.name: p.read_bytes() for p in sorted(copy.glob("*.json"))}) == _digests(
        _spec_vectors()
    )

    # The README's quick start, with a key from the installed command.
    keys = _run([str(cli), "keygen", "--alg", "EdDSA"], cwd=tmp_path, timeout=60).stdout
    script = tmp_path / "quickstart.py"
    script.write_bytes(QUICKSTART.read_bytes())
    quick = _run([str(python), str(script)], cwd=tmp_path, timeout=60, MRTR_STATE_KEYS=keys)
    assert quick.stdout.splitlines() == [
        "{'step': 'confirm'}",
        "wrong_user",
        "The request state belongs to another user.",
    ]

    if kind == "wheel":
        # The MCP quick start (stdio, docs/mcp.md), driven by the SDK's client from this environment.
        server = tmp_path / "mcp_stdio_server.py"
        server.write_bytes((ROOT / "docs" / "examples" / "mcp_stdio_server.py").read_bytes())
        driver = tmp_path / "round_trip.py"
        driver.write_bytes(Path(__file__).with_name("stdio_round_trip.py").read_bytes())
        trip = _run(
            [str(python), str(driver), str(server)],
            cwd=tmp_path,
            timeout=120,
            MRTR_STATE_KEYS=keys,
        )
        assert trip.stdout.splitlines() == [
            "input_required",
            "bad_signature",
            "Deleted old-feature (it was at 4b1d0aa).",
        ]

    # The conformance runner against the installed reference, with the packaged vectors (no --vectors).
    run = _run(
        [
            str(cli),
            "conformance",
            "--quiet",
            "--mutations",
            "200",
            "--seed",
            "25",
            "--",
            str(cli),
            "conformance",
            "--serve",
        ],
        cwd=tmp_path,
        timeout=300,
    )
    assert "class reached: strict" in run.stdout
    assert run.stdout.rstrip().endswith(" 0 failed"), run.stdout[-2000:]
