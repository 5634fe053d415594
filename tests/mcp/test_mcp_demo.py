"""The demo, the project's main job: it passes against the example server and fails when a step misbehaves."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from types import ModuleType

import pytest

from conftest import EXAMPLES, example_server

REASONS_SHOWN = ["bad_signature", "wrong_user", "wrong_tool", "wrong_request", "replayed", "expired"]


def load_demo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mrtr_demo", EXAMPLES / "demo.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_demo_completes_a_round_trip_and_shows_every_refusal() -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "demo.py")], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "ok: the confirmed delete completed" in out
    assert "ok: the two-round form completed" in out
    signed, encrypted = out.split("B. Encrypted states (A256GCM)")
    for reason in REASONS_SHOWN:
        assert f"refused as a tool error, reason {reason}" in signed
        assert f"refused as a tool error, reason {reason}" in encrypted
    assert "All 9 checks of this pass behaved as rule AGT-18 asks (signed states):" in signed
    assert "ok: the client cannot read the state" in encrypted
    assert "All 10 checks of this pass behaved as rule AGT-18 asks (encrypted states):" in encrypted
    assert "authentication tag no longer verifies" in " ".join(encrypted.split())
    assert "It checks rule AGT-18" in out
    assert "Both passes behaved as rule AGT-18 asks" in out
    assert "NOT OK" not in out


def test_the_demo_fails_when_the_server_answers_otherwise(capsys: pytest.CaptureFixture[str]) -> None:
    demo = load_demo()
    # A server that refuses with JSON-RPC errors instead of tool errors: every refusal step misbehaves.
    with example_server("--dev-key", "--ttl", "3", "--tool-refusal", "jsonrpc") as server:
        status = demo.report(server)
    out = capsys.readouterr().out
    assert status == 1
    assert "NOT OK: one byte changed" in out
    assert "6 step(s) did not behave as rule AGT-18 asks" in out
