"""The Go install rehearsal: ``go get github.com/mrtr-state/mrtr-state/go@v0.1.0`` as go/README.md
says, from a module proxy, into a fresh module outside the clone.

Issue 33: ``go get`` failed for a new user (the module is not published) and nothing tried it. Here the
module is laid out as a module proxy serves it (the GOPROXY protocol's ``@v/list``, ``.info``, ``.mod``
and ``.zip``; the zip in the module zip layout, with every file the module's git tree holds under
``go/``, less the nested module ``go/benchmarks``, plus the repository's LICENSE, as the go command adds
it for a module in a subdirectory) in a temporary folder, and served to the go command as
``GOPROXY=file:///...``; every other module (the MCP SDK, go-redis) still comes from the real proxy.
``GONOSUMDB`` names the rehearsed module, which no checksum database knows yet. A fresh module cache
(``GOMODCACHE``) makes sure nothing comes from an earlier copy. In a fresh module outside the clone:
``go mod init``, the README's ``go get``, then go/README.md's own programs: "Without MCP" runs and prints
what it says, and the one-screen server builds after the README's ``go mod tidy``, as it is and with the
README's Redis store in place of the memory store. Today's
alternative, the README's ``go mod edit -require ... -replace ...`` to a clone's ``go/`` and ``go mod tidy``,
runs the same program in another fresh module. The README's client for manual rounds
(``MultiRoundTripOptions{Disabled: true}``, ``NeedsInput()``) is built there too and run against the README's
server, both by the README's own run commands (a free loopback port in place of 8000); the test stops the
server. Without a go toolchain this skips,
except under CI=true, where it fails. It took 4 min here on 2 shared cores busy with other builds (the
SDK's modules are downloaded once into the temporary cache); each go command is bounded by TIMEOUT.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.ci import missing_tool
from tests.docs.fenced_blocks import fenced_blocks
from tests.ports import free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
MODULE = "github.com/mrtr-state/mrtr-state/go"
VERSION = "v0.1.0"
README_PROGRAMS = ROOT / "go" / "examples" / "readme"
TIMEOUT = 300


def _module_files() -> dict[str, Path]:
    """The module's files as a published zip holds them: its git tree under go/, without nested modules,
    plus the repository's LICENSE (the go command adds a root LICENSE to a subdirectory module's zip)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "go"], cwd=ROOT, capture_output=True, check=True, timeout=60
    ).stdout.decode()
    paths = [Path(name) for name in listed.split("\0") if name]
    nested = {path.parent for path in paths if path.name == "go.mod" and path.parent != Path("go")}
    files = {
        path.relative_to("go").as_posix(): ROOT / path
        for path in paths
        if not any(parent in nested for parent in path.parents) and (ROOT / path).is_file()
    }
    files.setdefault("LICENSE", ROOT / "LICENSE")
    return files


def _write_proxy(proxy: Path) -> None:
    """``proxy`` as a GOPROXY serving MODULE at VERSION (the protocol of `go help goproxy`)."""
    versions = proxy / MODULE / "@v"
    versions.mkdir(parents=True)
    (versions / "list").write_text(f"{VERSION}\n", encoding="utf-8")
    (versions / f"{VERSION}.info").write_text(
        json.dumps({"Version": VERSION, "Time": "2026-12-01T00:00:00Z"}), encoding="utf-8"
    )
    shutil.copyfile(ROOT / "go" / "go.mod", versions / f"{VERSION}.mod")
    with zipfile.ZipFile(versions / f"{VERSION}.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for name, source in sorted(_module_files().items()):
            archive.write(source, f"{MODULE}@{VERSION}/{name}")


def _run(go: str, args: list[str], *, cwd: Path, env: dict[str, str]) -> str:
    run = subprocess.run(
        [go, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert run.returncode == 0, (
        f"go {' '.join(args)} exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    )
    return run.stdout


@pytest.fixture(scope="module")
def user_module(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, dict[str, str]]:
    """A fresh module outside the clone that has run the README's ``go get``: (go, its folder, its env)."""
    go = shutil.which("go")
    if go is None:
        missing_tool("go is not installed; the Go install rehearsal needs a go toolchain")
    proxy = tmp_path_factory.mktemp("goproxy")
    _write_proxy(proxy)
    app = tmp_path_factory.mktemp("go-app")
    assert not app.resolve().is_relative_to(ROOT.resolve()), "the user's module must live outside the clone"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GO")}
    env.update(
        GOPROXY=f"{proxy.as_uri()},https://proxy.golang.org",
        GONOSUMDB=MODULE,
        GOFLAGS="-modcacherw",  # so the temporary module cache can be removed
        GOMODCACHE=str(tmp_path_factory.mktemp("gomodcache")),
        GOTOOLCHAIN="local",
        GOWORK="off",
    )
    _run(go, ["mod", "init", "example.com/app"], cwd=app, env=env)
    _run(go, ["get", f"{MODULE}@{VERSION}"], cwd=app, env=env)
    return go, app, env


def test_go_get_at_the_version_tag_resolves_the_module_from_the_proxy(
    user_module: tuple[str, Path, dict[str, str]],
) -> None:
    go, app, env = user_module
    required = json.loads(_run(go, ["list", "-m", "-json", MODULE], cwd=app, env=env))
    assert required["Version"] == VERSION, required
    downloaded = Path(required["Dir"]).resolve()
    assert downloaded.is_relative_to(Path(env["GOMODCACHE"]).resolve()), downloaded
    assert (downloaded / "LICENSE").is_file()


def test_the_readme_program_without_mcp_runs_from_the_installed_module(
    user_module: tuple[str, Path, dict[str, str]],
) -> None:
    go, app, env = user_module
    program = app / "withoutmcp"
    program.mkdir()
    shutil.copyfile(README_PROGRAMS / "withoutmcp" / "main.go", program / "main.go")
    lines = _run(go, ["run", "./withoutmcp"], cwd=app, env=env).splitlines()
    assert lines == [
        '{"step":"confirm"} <nil>',
        "wrong_user | The request state belongs to another user.",
        "<nil>",
        "true",
    ], lines


MEMORY_STORE = """\
	sealer, err := mrtrstate.New(ring, "https://git.example.com",
		mrtrstate.WithReplayStore(replay.NewMemoryStore(0, nil))) // or redisstore.NewFromURL for a fleet
"""
REDIS_STORE = """\
	store, err := redisstore.NewFromURL("redis://127.0.0.1:6379/0")
	if err != nil {
		log.Fatal(err)
	}
	sealer, err := mrtrstate.New(ring, "https://git.example.com", mrtrstate.WithReplayStore(store))
"""


def test_the_readme_server_builds_after_go_mod_tidy_with_the_memory_or_the_redis_store(
    user_module: tuple[str, Path, dict[str, str]],
) -> None:
    go, app, env = user_module
    server = (README_PROGRAMS / "server" / "main.go").read_text(encoding="utf-8")
    assert MEMORY_STORE in server
    assert REDIS_STORE in (ROOT / "go" / "README.md").read_text(encoding="utf-8")
    redis = server.replace(MEMORY_STORE, REDIS_STORE).replace(
        f'"{MODULE}/replay"', f'"{MODULE}/replay/redisstore"'
    )
    for name, text in (("server", server), ("redisserver", redis)):
        (app / name).mkdir(exist_ok=True)
        (app / name / "main.go").write_text(text, encoding="utf-8")
    _run(go, ["mod", "tidy"], cwd=app, env=env)
    for name in ("server", "redisserver"):
        _run(go, ["build", "-o", os.devnull, f"./{name}"], cwd=app, env=env)


def test_the_replace_directive_alternative_runs_the_readme_program(
    user_module: tuple[str, Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    go, _, env = user_module
    app = tmp_path_factory.mktemp("go-app-replace")
    clone = ROOT / "go"
    _run(go, ["mod", "init", "example.com/app"], cwd=app, env=env)
    _run(
        go,
        ["mod", "edit", f"-require={MODULE}@{VERSION}", f"-replace={MODULE}={clone}"],
        cwd=app,
        env=env,
    )
    shutil.copyfile(README_PROGRAMS / "withoutmcp" / "main.go", app / "main.go")
    _run(go, ["mod", "tidy"], cwd=app, env=env)
    written = (app / "go.mod").read_text(encoding="utf-8")
    assert f"require {MODULE} {VERSION}" in written, written
    assert f"replace {MODULE} => {clone}" in written, written
    lines = _run(go, ["run", "."], cwd=app, env=env).splitlines()
    assert lines[1] == "wrong_user | The request state belongs to another user.", lines


def _readme_run_block(command: str, port: int) -> str:
    """go/README.md's one ``sh`` block holding ``command``, its one port, 8000, replaced by ``port``."""
    found = [text for _, text, _ in fenced_blocks(ROOT / "go" / "README.md", "sh") if command in text]
    assert len(found) == 1, f"go/README.md: {len(found)} sh blocks hold {command!r}"
    assert found[0].count("8000") == 1, found[0]
    return found[0].replace("8000", str(port))


def test_the_readme_client_does_manual_rounds_against_the_readme_server(
    user_module: tuple[str, Path, dict[str, str]],
) -> None:
    # go/README.md's run commands as written (a free port in place of 8000), in the fresh module.
    go, app, env = user_module
    bash = shutil.which("bash")
    if bash is None or shutil.which("openssl") is None:
        missing_tool("bash or openssl is not installed; go/README.md's run commands need both")
    for name in ("server", "client"):
        (app / name).mkdir(exist_ok=True)
        shutil.copyfile(README_PROGRAMS / name / "main.go", app / name / "main.go")
    _run(go, ["mod", "tidy"], cwd=app, env=env)
    for name in ("server", "client"):  # built once here, so the run commands' go run only links
        _run(go, ["build", "-o", os.devnull, f"./{name}"], cwd=app, env=env)
    port = free_port()
    env = {k: v for k, v in env.items() if k not in ("EXAMPLE_BEARER_TOKEN", "MRTR_STATE_KEYS")}
    log = app / "server.log"
    with log.open("w", encoding="utf-8") as output:
        # Its own process group, so that stopping it stops bash, go run and the server it started.
        server = subprocess.Popen(
            [bash, "-c", _readme_run_block("go run ./server", port)],
            cwd=app,
            env=env,
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
        try:
            wait_for_port(port, server, bound_s=120, log=lambda: log.read_text(encoding="utf-8")[-2000:])
            run = subprocess.run(
                [bash, "-c", _readme_run_block("go run ./client", port)],
                cwd=app,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                check=False,
            )
            assert run.returncode == 0, run.stdout + run.stderr
            assert run.stdout.splitlines() == ["true 1", "true bad_signature", "false deleted"], run.stdout
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
