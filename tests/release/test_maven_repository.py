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
resolved class path. Without java or mvn this skips, except under CI=true, where it fails. It took
175 s here on 2 shared cores; each Maven command is bounded by TIMEOUT.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.ci import missing_tool

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


def test_a_fresh_project_resolves_the_readme_coordinates_from_the_repository_and_runs_seal_and_open(
    deployed: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    mvn, java = _tool("mvn"), _tool("java")
    app = tmp_path_factory.mktemp("maven-app")
    assert not app.resolve().is_relative_to(ROOT.resolve()), "the user's project must live outside the clone"
    local = tmp_path_factory.mktemp("maven-local")
    cache = Path(os.path.expanduser("~")) / ".m2" / "repository"
    settings = app / "settings.xml"
    settings.write_text(
        SETTINGS.format(local=local, rehearsal=deployed.as_uri(), cache=cache.as_uri()), encoding="utf-8"
    )
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

    _, artifact, version = COORDINATES
    resolved = _artifact_dir(local)
    origin = (resolved / "_remote.repositories").read_text(encoding="utf-8")
    assert f"{artifact}-{version}.jar>rehearsal=" in origin, origin
    jar = f"{artifact}-{version}.jar"
    assert (resolved / jar).read_bytes() == (_artifact_dir(deployed) / jar).read_bytes()

    classpath = classpath_file.read_text(encoding="utf-8").strip()
    assert str(resolved / jar) in classpath.split(os.pathsep), classpath
    output = _run(
        [java, "-cp", os.pathsep.join([str(app / "target" / "classes"), classpath]), "SealAndOpen"], cwd=app
    )
    assert output.splitlines() == [
        '{"head":"4b1d0aa"}',
        "wrong_user",
        "The request state belongs to another user.",
        "replayed",
    ], output
