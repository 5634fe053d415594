"""The npm release check: the tarball ``npm pack`` makes installs and works outside the repository.

Issue 25: no test installed the npm package as a user gets it. Here ``npm pack`` builds the tarball from
``typescript/`` (its ``prepack`` compiles ``dist/``), a fresh folder outside the clone gets it with
``npm init -y`` and ``npm install <tarball>`` (its one dependency, ``jose``, from the registry), and an ESM
quick start runs there from the installed package's public entry point: a token sealed and opened, and a
changed byte refused as ``bad_signature``, in both signed forms. Without Node.js this skips, except under
``CI=true``, where it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.ci import missing_tool

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "typescript"
TIMEOUT = 300

QUICKSTART = """\
import { InvalidRequestState, Keyring, StateSealer } from "mrtr-state";

const where = import.meta.resolve("mrtr-state");
const retry = { user: "alice", tool: "deploy", arguments: { env: "prod" } };
const verdict = async (sealer, token, request) => {
  try {
    await sealer.open(token, request);
    return "valid";
  } catch (error) {
    if (!(error instanceof InvalidRequestState)) throw error;
    return error.reason;
  }
};
const results = {};
for (const alg of ["HS256", "EdDSA"]) {
  const sealer = new StateSealer(Keyring.generate(alg), { issuer: "https://files.example.com" });
  const token = await sealer.seal({ step: "confirm" }, retry);
  const opened = await sealer.open(token, retry);
  const [header, payload, signature] = token.split(".");
  const changed = `${header}.${payload}.${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`;
  results[alg] = {
    opened,
    changed: await verdict(sealer, changed, retry),
    otherUser: await verdict(sealer, token, { ...retry, user: "bob" }),
  };
}
console.log(JSON.stringify({ where, results }));
"""


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        missing_tool(f"{name} is not installed; the npm release check needs Node.js with npm")
    return found


def _run(command: list[str], *, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NODE_PATH", "NODE_OPTIONS")}
    env.update(npm_config_audit="false", npm_config_fund="false", npm_config_update_notifier="false")
    run = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert run.returncode == 0, (
        f"{command[:4]} exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    )
    return run


@pytest.fixture(scope="module")
def tarball(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tarball ``npm pack`` makes from this clone, in a temporary folder."""
    npm = _tool("npm")
    _tool("node")
    _run([npm, "ci"], cwd=PACKAGE)  # prepack's tsc comes from the lock file
    destination = tmp_path_factory.mktemp("npm-pack")
    packed = json.loads(
        _run([npm, "pack", "--json", "--pack-destination", str(destination)], cwd=PACKAGE).stdout
    )
    path = destination / packed[0]["filename"]
    assert path.is_file(), packed
    return path


def test_the_tarball_holds_the_build_and_no_sources(tarball: Path) -> None:
    with tarfile.open(tarball) as archive:
        names = set(archive.getnames())
    for needed in (
        "package/package.json",
        "package/README.md",
        "package/dist/index.js",
        "package/dist/index.d.ts",
    ):
        assert needed in names, sorted(names)
    extra = sorted(name for name in names if not (name.startswith("package/dist/") or name.count("/") == 1))
    assert not extra, f"the tarball ships more than dist/ and its top-level files: {extra}"
    assert not [name for name in names if name.endswith(".ts") and not name.endswith(".d.ts")], sorted(names)


def test_the_installed_tarball_runs_the_quick_start_outside_the_clone(
    tarball: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    app = tmp_path_factory.mktemp("npm-app")
    assert not app.resolve().is_relative_to(ROOT.resolve()), "the app must live outside the clone"
    npm, node = _tool("npm"), _tool("node")
    _run([npm, "init", "-y"], cwd=app)
    _run([npm, "install", str(tarball)], cwd=app)
    (app / "quickstart.mjs").write_text(QUICKSTART, encoding="utf-8")
    output = json.loads(_run([node, "quickstart.mjs"], cwd=app).stdout)
    installed = (app / "node_modules" / "mrtr-state").resolve()
    assert output["where"] == (installed / "dist" / "index.js").as_uri(), output["where"]
    for alg in ("HS256", "EdDSA"):
        assert output["results"][alg] == {
            "opened": {"step": "confirm"},
            "changed": "bad_signature",
            "otherUser": "wrong_user",
        }, output
