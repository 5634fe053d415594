"""The Maven install rehearsal: the Java library deployed with its sources and javadoc jars to a ``file:``
repository, then resolved by its coordinates alone by a fresh Maven project outside the clone.

Issue 33: nothing proved that the coordinates java/README.md gives resolve to a working library. Here a
copy of ``java/`` (so the clone's ``target/`` is left alone) is deployed as a release is, ``mvn -B
source:jar-no-fork javadoc:jar deploy`` (tests skipped: ``scripts/check-java`` runs them), into a ``file:``
repository in a temporary folder. A fresh project outside the clone, whose ``pom.xml`` has exactly the
dependency block of java/README.md's install section, builds with its own empty local repository, so the
library can only come from the rehearsal repository: the settings list that repository first, then the
default local repository (``~/.m2/repository``) read as a plain remote repository, which only saves
downloads, then Maven Central. The test checks that the library was downloaded from the rehearsal
repository, byte for byte the deployed jar, and runs java/README.md's ``SealAndOpen`` program against the
resolved class path. The README's install for today (``mvn install`` from a clone) is run as written too,
into a local repository of the test's own, and serves a second fresh project. A third fresh project is a
user's server: exactly the dependency block of java/README.md's "Dependencies of a server", resolved from the
same rehearsal repository, with the README's ``OneScreenServer`` and ``ManualRounds`` blocks copied from the
README as they are, built by the README's own build command (one Maven run); the README's run commands start
the server (on a free loopback port in place of 8080) and run the client, which completes the round trip
against it; raw JSON-RPC (tests/crosslang/edge_inputs.py) shows a changed state, a replayed state and a
request without the bearer token refused; the test stops the server. Without java or mvn this skips,
except under CI=true, where it fails. The module's four tests took 104 s here on 2 shared cores (the deploy,
today's install and three fresh projects, their dependencies copied from ~/.m2 into the temporary local
repositories; 271 s when they had to be downloaded); each Maven command is bounded by TIMEOUT.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import httpx2
import pytest

from tests.ci import missing_tool
from tests.crosslang.edge_inputs import BRANCH, answer, body, http, valid_state
from tests.docs.fenced_blocks import fenced_blocks
from tests.ports import free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
JAVA = ROOT / "java"
README = JAVA / "README.md"
PROGRAM = JAVA / "src" / "test" / "java" / "SealAndOpen.java"
COORDINATES = ("dev.mrtrstate", "mrtr-state", "0.1.0")
TIMEOUT = 600

CONSUMER_POM = """\
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>app</artifactId>
  <version>1.0.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
{dependencies}
  </dependencies>
  <build>
    <pluginManagement>
      <plugins>
        <plugin>
          <groupId>org.apache.maven.plugins</groupId>
          <artifactId>maven-compiler-plugin</artifactId>
          <version>3.13.0</version>
        </plugin>
        <plugin>
          <groupId>org.apache.maven.plugins</groupId>
          <artifactId>maven-dependency-plugin</artifactId>
          <version>3.8.1</version>
        </plugin>
        <plugin>
          <groupId>org.apache.maven.plugins</groupId>
          <artifactId>maven-resources-plugin</artifactId>
          <version>3.3.1</version>
        </plugin>
      </plugins>
    </pluginManagement>
  </build>
</project>
"""

SETTINGS = """\
<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">
  <localRepository>{local}</localRepository>
  <profiles>
    <profile>
      <id>rehearsal</id>
      <repositories>
        <repository><id>rehearsal</id><url>{rehearsal}</url></repository>
        <repository><id>m2-cache</id><url>{cache}</url></repository>
      </repositories>
      <pluginRepositories>
        <pluginRepository><id>m2-cache</id><url>{cache}</url></pluginRepository>
      </pluginRepositories>
    </profile>
  </profiles>
  <activeProfiles><activeProfile>rehearsal</activeProfile></activeProfiles>
</settings>
"""


def _readme_dependencies() -> str:
    """The install section's dependency block of java/README.md: the first ``xml`` block."""
    found = re.search(r"^```xml\n(.*?)^```$", README.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    assert found, "java/README.md has no xml block"
    block = found.group(1)
    assert "<artifactId>mrtr-state</artifactId>" in block, block
    return block


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        missing_tool(f"{name} is not installed; the Maven install rehearsal needs java and mvn")
    return found


def _run(command: list[str], *, cwd: Path) -> str:
    run = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert run.returncode == 0, (
        f"{command[:3]} exited {run.returncode}:\n{run.stdout[-4000:]}\n{run.stderr[-3000:]}"
    )
    return run.stdout


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``file:`` repository holding the library as ``mvn deploy`` puts it there."""
    mvn = _tool("mvn")
    _tool("java")
    source = tmp_path_factory.mktemp("java-src") / "java"
    shutil.copytree(JAVA, source, ignore=shutil.ignore_patterns("target"))
    repository = tmp_path_factory.mktemp("maven-repository")
    _run(
        [
            mvn,
            "-B",
            "-q",
            "-Dmaven.test.skip=true",
            f"-DaltDeploymentRepository=rehearsal::{repository.as_uri()}",
            "source:jar-no-fork",
            "javadoc:jar",
            "deploy",
        ],
        cwd=source,
    )
    return repository


def _artifact_dir(repository: Path) -> Path:
    group, artifact, version = COORDINATES
    return repository.joinpath(*group.split("."), artifact, version)


def test_the_deployed_release_has_the_jar_its_pom_and_the_sources_and_javadoc_jars(deployed: Path) -> None:
    _, artifact, version = COORDINATES
    files = {path.name for path in _artifact_dir(deployed).iterdir()}
    for suffix in (".jar", ".pom", "-sources.jar", "-javadoc.jar"):
        assert f"{artifact}-{version}{suffix}" in files, sorted(files)
        assert f"{artifact}-{version}{suffix}.sha1" in files, sorted(files)


def _build_and_run_seal_and_open(app: Path, settings: Path) -> Path:
    """In ``app``, a project with exactly java/README.md's dependency block and its ``SealAndOpen``: build it
    with ``settings``, run the program and check what it prints; the jar of the library it resolved."""
    mvn, java = _tool("mvn"), _tool("java")
    assert not app.resolve().is_relative_to(ROOT.resolve()), "the user's project must live outside the clone"
    (app / "pom.xml").write_text(CONSUMER_POM.format(dependencies=_readme_dependencies()), encoding="utf-8")
    sources = app / "src" / "main" / "java"
    sources.mkdir(parents=True)
    shutil.copyfile(PROGRAM, sources / PROGRAM.name)
    classpath_file = app / "classpath.txt"
    _run(
        [
            mvn,
            "-B",
            "-q",
            "-s",
            str(settings),
            "compile",
            "dependency:build-classpath",
            f"-Dmdep.outputFile={classpath_file}",
        ],
        cwd=app,
    )
    classpath = classpath_file.read_text(encoding="utf-8").strip().split(os.pathsep)
    _, artifact, version = COORDINATES
    jars = [Path(entry) for entry in classpath if Path(entry).name == f"{artifact}-{version}.jar"]
    assert len(jars) == 1, classpath
    output = _run(
        [java, "-cp", os.pathsep.join([str(app / "target" / "classes"), *classpath]), "SealAndOpen"], cwd=app
    )
    assert output.splitlines() == [
        '{"head":"4b1d0aa"}',
        "wrong_user",
        "The request state belongs to another user.",
        "replayed",
    ], output
    return jars[0]


def _settings(folder: Path, local: Path, rehearsal: str) -> Path:
    cache = Path(os.path.expanduser("~")) / ".m2" / "repository"
    settings = folder / "settings.xml"
    settings.write_text(
        SETTINGS.format(local=local, rehearsal=rehearsal, cache=cache.as_uri()), encoding="utf-8"
    )
    return settings


def test_a_fresh_project_resolves_the_readme_coordinates_from_the_repository_and_runs_seal_and_open(
    deployed: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    app = tmp_path_factory.mktemp("maven-app")
    local = tmp_path_factory.mktemp("maven-local")
    jar = _build_and_run_seal_and_open(
        app, _settings(tmp_path_factory.mktemp("settings"), local, deployed.as_uri())
    )
    resolved = _artifact_dir(local)
    assert jar == resolved / jar.name, jar
    origin = (resolved / "_remote.repositories").read_text(encoding="utf-8")
    assert f"{jar.name}>rehearsal=" in origin, origin
    assert jar.read_bytes() == (_artifact_dir(deployed) / jar.name).read_bytes()


def test_todays_install_from_the_clone_serves_a_fresh_project(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # java/README.md's "today" block, run as written in a copy of java/, into a local repository of its own
    # (the -s settings stand for ~/.m2, which this test leaves alone); the rehearsal repository is empty.
    text = README.read_text(encoding="utf-8")
    today = text[text.index("Today, before it is published") :]
    block = re.search(r"^```sh\n(.*?)^```$", today, re.MULTILINE | re.DOTALL)
    assert block, "java/README.md has no sh block for today's install"
    command = block.group(1).strip()
    assert command.startswith("cd java && mvn "), command
    mvn = _tool("mvn")
    source = tmp_path_factory.mktemp("java-today") / "java"
    shutil.copytree(JAVA, source, ignore=shutil.ignore_patterns("target"))
    local = tmp_path_factory.mktemp("maven-local-today")
    empty = tmp_path_factory.mktemp("empty-repository").as_uri()
    settings = _settings(tmp_path_factory.mktemp("settings-today"), local, empty)
    _run([mvn, *command.removeprefix("cd java && mvn ").split(), "-s", str(settings)], cwd=source)
    jar = _build_and_run_seal_and_open(tmp_path_factory.mktemp("maven-app-today"), settings)
    assert jar == _artifact_dir(local) / jar.name, jar
    origin = (_artifact_dir(local) / "_remote.repositories").read_text(encoding="utf-8")
    assert f"{jar.name}>=" in origin, f"not the jar mvn install put there: {origin}"


def _readme_block(heading: str, language: str, contains: str) -> str:
    """The one fenced ``language`` block of java/README.md, after ``heading``, that holds ``contains``
    and is not marked as not for copying: what a user copies from that section."""
    text = README.read_text(encoding="utf-8")
    assert f"\n{heading}\n" in text, f"java/README.md has no heading {heading!r}"
    start = text.count("\n", 0, text.index(f"\n{heading}\n")) + 2
    found = [
        block
        for line, block, exempt in fenced_blocks(README, language)
        if line > start and not exempt and contains in block
    ]
    assert len(found) == 1, (
        f"java/README.md after {heading!r}: {len(found)} {language} blocks hold {contains!r}"
    )
    return found[0]


def _changed_signature(token: str) -> str:
    """``token`` with the first character of its signature changed (a canonical base64url character)."""
    at = token.rindex(".") + 1
    return token[:at] + ("B" if token[at] == "A" else "A") + token[at + 1 :]


def _on_port(block: str, port: int) -> str:
    """A run block of java/README.md with its one port, 8080, replaced by ``port``."""
    assert block.count("8080") == 1, block
    return block.replace("8080", str(port))


def test_a_fresh_server_project_with_the_readme_dependencies_runs_the_readme_server_and_client(
    deployed: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    mvn, bash = _tool("mvn"), _tool("bash")
    _tool("java")
    _tool("openssl")  # the README's run block makes the key with it
    dependencies = _readme_block("### Dependencies of a server", "xml", "<artifactId>mcp-core</artifactId>")
    assert "<artifactId>mrtr-state</artifactId>" in dependencies, dependencies
    server_source = _readme_block("### A server in one screen", "java", "public final class OneScreenServer")
    client_source = _readme_block("### A client, round by round", "java", "public final class ManualRounds")
    # The README's commands: build and start the server in one terminal, run the client in a second.
    build, start = _readme_block("### A server in one screen", "sh", "java OneScreenServer").split("\n", 1)
    run_client = _readme_block("### A server in one screen", "sh", "java ManualRounds")
    assert build.startswith("mvn "), build

    app = tmp_path_factory.mktemp("maven-server-app")
    assert not app.resolve().is_relative_to(ROOT.resolve()), "the user's project must live outside the clone"
    (app / "pom.xml").write_text(CONSUMER_POM.format(dependencies=dependencies), encoding="utf-8")
    sources = app / "src" / "main" / "java"
    sources.mkdir(parents=True)
    (sources / "OneScreenServer.java").write_text(server_source, encoding="utf-8")
    (sources / "ManualRounds.java").write_text(client_source, encoding="utf-8")
    local = tmp_path_factory.mktemp("maven-local-server")
    settings = _settings(tmp_path_factory.mktemp("settings-server"), local, deployed.as_uri())
    # The README's build command as written, with the settings that stand for the user's ~/.m2.
    _run([mvn, *shlex.split(build.removeprefix("mvn "), comments=True), "-s", str(settings)], cwd=app)
    _, artifact, version = COORDINATES
    origin = (_artifact_dir(local) / "_remote.repositories").read_text(encoding="utf-8")
    assert f"{artifact}-{version}.jar>rehearsal=" in origin, origin

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CLASSPATH", "MRTR_STATE_KEYS", "EXAMPLE_BEARER_TOKEN")
    }
    found = re.search(r"EXAMPLE_BEARER_TOKEN=(\S+)", start)
    assert found, start
    bearer = found.group(1)
    log = app / "server.log"
    with log.open("w", encoding="utf-8") as output:
        # Its own process group, so that stopping it stops bash and the JVM it started.
        server = subprocess.Popen(
            [bash, "-c", _on_port(start, port)],
            cwd=app,
            env=env,
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
        try:
            # A bound on a cold JVM and Tomcat on busy cores, not a claim about speed.
            wait_for_port(port, server, bound_s=120, log=lambda: log.read_text(encoding="utf-8")[-3000:])
            client = subprocess.run(
                [bash, "-c", _on_port(run_client, port)],
                cwd=app,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                check=False,
            )
            assert client.returncode == 0, client.stdout + client.stderr[-3000:]
            assert client.stdout.splitlines() == [
                "asked: [confirm]",
                'done: Deleted ({"head":"4b1d0aa"})',
            ], client.stdout

            send = http(url, bearer)
            yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}
            state = valid_state(send)
            assert answer(send, body("delete_branch", BRANCH, _changed_signature(state), yes)) == (
                "tool_error",
                "bad_signature",
            )
            assert answer(send, body("delete_branch", BRANCH, state, yes)) == ("complete",)
            assert answer(send, body("delete_branch", BRANCH, state, yes)) == ("tool_error", "replayed")
            assert httpx2.post(url, json=body("delete_branch", BRANCH), timeout=30).status_code == 401
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=60)
    written = log.read_text(encoding="utf-8")
    for secret in (bearer, state):
        assert secret not in written, "the server logged the bearer token or a state"
