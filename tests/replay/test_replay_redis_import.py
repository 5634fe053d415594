"""The core never needs the redis client; the Redis store says how to get it."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run_without_redis(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where ``import redis`` fails, as without the extra."""
    prelude = "import sys\nsys.modules['redis'] = None  # makes any import of redis raise ImportError\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_package_imports_and_consumes_without_the_redis_client() -> None:
    result = run_without_redis(
        """
        from mrtr_state import Keyring, MemoryReplayStore, StateSealer
        store = MemoryReplayStore()
        sealer = StateSealer(Keyring.generate("HS256"), issuer="https://x.example", replay_store=store)
        token = sealer.seal(1, user="u", tool="t")
        assert sealer.open(token, user="u", tool="t", consume=True) == 1
        assert sys.modules["redis"] is None
        print("ok")
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_the_redis_store_without_the_client_is_an_import_error_naming_the_extra() -> None:
    result = run_without_redis(
        """
        try:
            import mrtr_state.replay.replay_redis
        except ImportError as exc:
            print(exc)
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "mrtr_state.replay.replay_redis needs the Redis client: pip install 'mrtr-state[redis]'"
    )
