"""The core never needs the MCP SDK; the integration names the extra when the SDK is missing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from conftest import EXAMPLES

# Runs before any import: makes `mcp` and `mcp_types` unimportable, as without the extra.
_WITHOUT_SDK = textwrap.dedent(
    """
    import importlib.abc, sys

    class NoSdk(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("mcp", "mcp_types"):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoSdk())
    """
)


def run_without_sdk(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _WITHOUT_SDK + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_core_imports_and_works_without_the_mcp_sdk() -> None:
    result = run_without_sdk(
        """
        import sys
        from mrtr_state import Keyring, StateSealer
        sealer = StateSealer(Keyring.generate("HS256"), issuer="https://x.example")
        token = sealer.seal({"a": 1}, user="alice", tool="t")
        assert sealer.open(token, user="alice", tool="t") == {"a": 1}
        assert not any(name.split(".")[0] in ("mcp", "mcp_types") for name in sys.modules)
        print("ok")
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_importing_the_integration_without_the_sdk_names_the_extra() -> None:
    result = run_without_sdk(
        """
        try:
            import mrtr_state.mcp
        except ImportError as exc:
            print(exc)
        else:
            raise SystemExit("imported without the SDK")
        """
    )
    assert result.returncode == 0, result.stderr
    assert "pip install 'mrtr-state[mcp]'" in result.stdout
    # Issue 25: the package is on no registry yet, so the message also says what works today.
    assert "pip install './[mcp]' from a clone" in result.stdout


def test_the_example_server_without_its_packages_says_how_to_run_it() -> None:
    # Issue 25: `python examples/server --dev-key` with a Python that lacks the library and the SDK
    # ended in a traceback. `-S` leaves out site-packages, as a bare system Python has them.
    run = subprocess.run(
        [sys.executable, "-S", str(EXAMPLES / "server"), "--dev-key"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert "scripts/bootstrap mcp, then .venv/bin/python examples/server --dev-key" in run.stderr
