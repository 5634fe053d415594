"""Short coverage-guided fuzzing runs (atheris) of open(), the key loaders and the command line.

The three targets run at the same time, each for FUZZ_SECONDS (default 45) of wall time: on the two cores
CI has, that is about the CPU time of three 30-second runs one after the other, in half the wall time
(each target is one single-threaded process). fuzz/README.md says how to run longer.
Under CI=true a missing atheris is a failure, not a skip.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECONDS = int(os.environ.get("FUZZ_SECONDS", "45"))
TARGETS = ("fuzz_open.py", "fuzz_jwks.py", "fuzz_cli.py")


def atheris_available() -> bool:
    try:
        import atheris  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[int, str, Path]]]:
    """Every target fuzzed at once; per target its exit status, its stderr and its artifact directory."""
    if not atheris_available():
        message = "atheris is not installed (it comes with the dev extra on Linux x86_64)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    started: dict[str, tuple[subprocess.Popen[bytes], Path]] = {}
    try:
        for target in TARGETS:
            directory = tmp_path_factory.mktemp(target.removesuffix(".py"))
            command = [
                sys.executable,
                str(ROOT / "fuzz" / target),
                f"-max_total_time={SECONDS}",
                "-max_len=12000",
                "-timeout=10",
                f"-artifact_prefix={directory}/",
                str(directory / "corpus"),
            ]
            # stderr to a file: libFuzzer writes a line per new coverage, which would fill a pipe
            # that nobody reads while the other targets are waited for.
            with (directory / "stderr.txt").open("w") as log:
                process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
            started[target] = (process, directory)
        finished: dict[str, tuple[int, str, Path]] = {}
        for target, (process, directory) in started.items():
            process.wait(timeout=SECONDS + 120)
            stderr = (directory / "stderr.txt").read_text(errors="replace")
            finished[target] = (process.returncode, stderr, directory)
        yield finished
    finally:
        for process, _ in started.values():
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.mark.parametrize("target", TARGETS)
def test_fuzzing_finds_no_crash(runs: dict[str, tuple[int, str, Path]], target: str) -> None:
    returncode, stderr, directory = runs[target]
    crashes = sorted(p.name for p in directory.iterdir() if p.name.startswith(("crash-", "timeout-", "oom-")))
    assert returncode == 0, f"{target}: {crashes}\n{stderr[-3000:]}"
    assert "Done" in stderr
