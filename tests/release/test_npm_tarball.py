"""The npm release check: the tarball ``npm pack`` makes installs and works outside the repository, both
as a file and published to a local npm registry, as typescript/README.md's install section says.

Issue 25: no test installed the npm package as a user gets it. Here ``npm pack`` builds the tarball from
``typescript/`` (its ``prepack`` compiles ``dist/``), a fresh folder outside the clone gets it with
``npm init -y`` and ``npm install <tarball>`` (its one dependency, ``jose``, from the registry), and an ESM
quick start runs there from the installed package's public entry point: a token sealed and opened, and a
changed byte refused as ``bad_signature``, in both signed forms.

Issue 33: the install as it will be once published, rehearsed. ``npm publish`` puts the same tarball into a
local npm registry on loopback (tests/release/npm_registry.py; every other package comes from the public
registry through it), and a fresh project outside the clone follows typescript/README.md's install block
word for word (its ``sh`` block's commands, with the registry in the project's ``.npmrc``, and its
``tsconfig.json``): ``npm install mrtr-state`` resolves from the local registry, the README's quick start
(typescript/examples/quickstart.ts) compiles under ``tsc --strict`` and runs. Without Node.js these skip,
except under ``CI=true``, where they fail. The module took about 2 min here on 2 shared cores (most of it
``npm ci`` and the downloads of typescript and @types/node); each npm command is bounded by TIMEOUT.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ci import missing_tool
from tests.release.npm_registry import LocalNpmRegistry

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "typescript"
README = PACKAGE / "README.md"
QUICKSTART_TS = PACKAGE / "examples" / "quickstart.ts"
TIMEOUT = 300
PUBLISH_TOKEN = "rehearsal-publish-token"  # a fixed value the local registry asks for, no credential

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


def _run(command: list[str], *, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NODE_PATH", "NODE_OPTIONS")}
    env.update(npm_config_audit="false", npm_config_fund="false", npm_config_update_notifier="false")
    env.update(extra)
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


def _install_section() -> tuple[list[list[str]], str]:
    """typescript/README.md's install block for a project of one's own: its first ``sh`` block's commands
    (each line split on ``&&``, comments dropped) and its ``json`` block, the tsconfig.json."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Install") : text.index("\nToday, before it is published")]
    shell = re.search(r"^```sh\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    config = re.search(r"^```json\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    assert shell, "typescript/README.md's install section lost its sh block"
    assert config, "typescript/README.md's install section lost its json block (the tsconfig.json)"
    commands: list[list[str]] = []
    for line in shell.group(1).splitlines():
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            commands.append(words[:cut])
            words = words[cut + 1 :]
    return commands, config.group(1)


def _tested_versions(command: list[str]) -> list[str]:
    """``command`` with each bare devDependency name at the version this package is tested with."""
    pinned = json.loads((PACKAGE / "package.json").read_text(encoding="utf-8"))["devDependencies"]
    return [f"{word}@{pinned[word]}" if word in pinned else word for word in command]


@pytest.fixture(scope="module")
def registry(tarball: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalNpmRegistry]:
    """A local npm registry on loopback into which ``npm publish`` has put the tarball."""
    npm = _tool("npm")
    with LocalNpmRegistry(PUBLISH_TOKEN) as local:
        config = tmp_path_factory.mktemp("npm-publisher") / ".npmrc"
        address = local.url.removeprefix("http:")
        config.write_text(f"{address}:_authToken={PUBLISH_TOKEN}\n", encoding="utf-8")
        _run(
            [npm, "publish", str(tarball), "--registry", local.url, "--userconfig", str(config)],
            cwd=config.parent,
        )
        yield local


def test_the_readme_install_from_a_registry_compiles_the_quick_start_strictly_and_runs_it(
    tarball: Path, registry: LocalNpmRegistry, tmp_path_factory: pytest.TempPathFactory
) -> None:
    app = tmp_path_factory.mktemp("npm-registry-app")
    assert not app.resolve().is_relative_to(ROOT.resolve()), "the app must live outside the clone"
    npm, node = _tool("npm"), _tool("node")
    commands, tsconfig = _install_section()
    assert ["npm", "install", "mrtr-state"] in commands, commands
    (app / ".npmrc").write_text(f"registry={registry.url}\n", encoding="utf-8")
    # The install of mrtr-state gets an empty npm cache, so its tarball can only come from the registry.
    fresh_cache = str(tmp_path_factory.mktemp("npm-cache"))
    for command in commands:
        assert command[0] == "npm", command
        cache = {"npm_config_cache": fresh_cache} if "mrtr-state" in command else {}
        _run([npm, *_tested_versions(command[1:])], cwd=app, **cache)

    lock = json.loads((app / "package-lock.json").read_text(encoding="utf-8"))
    installed = lock["packages"]["node_modules/mrtr-state"]
    packed = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    assert installed["integrity"] == packed, installed
    assert "mrtr-state" in registry.served, registry.served
    assert f"mrtr-state/-/{tarball.name}" in registry.served, registry.served

    (app / "tsconfig.json").write_text(tsconfig, encoding="utf-8")
    shutil.copyfile(QUICKSTART_TS, app / "quickstart.ts")
    _run([npm, "exec", "--no", "--", "tsc", "--strict"], cwd=app)
    keys = _run(
        [
            node,
            "--input-type=module",
            "-e",
            'import { Keyring } from "mrtr-state"; '
            'console.log(JSON.stringify(Keyring.generate("EdDSA").privateJwks()));',
        ],
        cwd=app,
    ).stdout.strip()
    run = _run([node, "dist/quickstart.js"], cwd=app, MRTR_STATE_KEYS=keys)
    assert run.stdout.splitlines() == [
        "{ step: 'confirm' }",
        "wrong_user",
        "The request state belongs to another user.",
    ], run.stdout
