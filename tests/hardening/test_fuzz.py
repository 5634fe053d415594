"""Short coverage-guided fuzzing runs (atheris) of open(), the key loaders and the command line.

Each target runs for FUZZ_SECONDS (default 30) here; fuzz/README.md says how to run longer.
Under CI=true a missing atheris is a failure, not a skip.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECONDS = int(os.environ.get("FUZZ_SECONDS", "30"))


def atheris_available() -> bool:
    try:
        import atheris  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("target", ["fuzz_open.py", "fuzz_jwks.py", "fuzz_cli.py"])
def test_fuzzing_finds_no_crash(target: str, tmp_path: Path) -> None:
    if not atheris_available():
        message = "atheris is not installed (it comes with the dev extra on Linux x86_64)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "fuzz" / target),
            f"-max_total_time={SECONDS}",
            "-max_len=12000",
            "-timeout=10",
            f"-artifact_prefix={tmp_path}/",
            str(tmp_path / "corpus"),
        ],
        capture_output=True,
        text=True,
        timeout=SECONDS + 120,
        check=False,
    )
    crashes = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("crash-", "timeout-", "oom-")))
    assert result.returncode == 0, f"{target}: {crashes}\n{result.stderr[-3000:]}"
    assert "Done" in result.stderr
