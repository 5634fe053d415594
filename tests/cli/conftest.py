"""Run the installed ``mrtr-state`` console script in a subprocess, as an operator would.

Every run here also checks the two rules that hold for every command: bad input
never shows a traceback, and standard error never carries a secret.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mrtr_state import Key, Keyring, StateSealer

SCRIPT = Path(sys.executable).parent / ("mrtr-state.exe" if os.name == "nt" else "mrtr-state")
ISSUER = "https://files.example.com"
NOW = 1_767_225_600  # 2026-01-01T00:00:00Z


@dataclass(frozen=True)
class Result:
    """What a run of the command printed, and its exit status."""

    status: int
    stdout: str
    stderr: str

    def error_line(self) -> str:
        """The single line a bad input must produce on standard error."""
        assert self.status == 2, self
        assert self.stdout == "", self
        lines = self.stderr.splitlines()
        assert len(lines) == 1, self.stderr
        assert lines[0].startswith("mrtr-state"), lines[0]
        return lines[0]


def secrets_of(jwks: Mapping[str, Any] | str) -> list[str]:
    """Every secret member (``k``, ``d``) of a JWKS, to look for where it must not be."""
    document = json.loads(jwks) if isinstance(jwks, str) else jwks
    return [jwk[name] for jwk in document["keys"] for name in ("k", "d") if name in jwk]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def craft(key: Key, header: Any, claims: Any, *, raw_claims: bytes | None = None) -> str:
    """A token with any header and claims, correctly signed by ``key``: for rules the sealer never breaks."""
    head = b64url(json.dumps(header, separators=(",", ":")).encode())
    body = b64url(
        raw_claims if raw_claims is not None else json.dumps(claims, separators=(",", ":")).encode()
    )
    signing_input = f"{head}.{body}"
    return f"{signing_input}.{b64url(key.sign(signing_input.encode('ascii')))}"


def _drop_file_permission_override() -> None:
    """Run the child as root without the power to read files it has no permission for.

    Drops CAP_DAC_OVERRIDE (1) and CAP_DAC_READ_SEARCH (2) from the capability
    bounding set (PR_CAPBSET_DROP, 24); the exec that follows loses them.
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):
        if libc.prctl(24, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


@pytest.fixture(scope="session")
def script() -> Path:
    if not SCRIPT.exists():
        message = f"the console script {SCRIPT} is not installed; run scripts/bootstrap"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return SCRIPT


Run = Callable[..., Result]


@pytest.fixture
def run(script: Path, tmp_path: Path) -> Run:
    """Run ``mrtr-state ARGS...`` in ``tmp_path``; ``env`` adds variables, ``secrets`` must not leak."""

    def run_(
        *args: str,
        stdin: str | bytes | None = None,
        env: Mapping[str, str] | None = None,
        secrets: Iterable[str] = (),
        module: bool = False,
        without_file_override: bool = False,
        umask: int | None = None,
        stdin_closed: bool = False,
    ) -> Result:
        environ = {k: v for k, v in os.environ.items() if k != "MRTR_STATE_KEYS"}
        environ.update(env or {})
        command = [sys.executable, "-m", "mrtr_state"] if module else [str(script)]
        preexec = None
        if without_file_override:
            preexec = _drop_file_permission_override
        elif umask is not None:

            def preexec() -> None:
                os.umask(umask)

        if stdin_closed:
            # The child starts with file descriptor 0 closed, as `cmd <&-` does in a shell.
            command = ["/bin/sh", "-c", 'exec "$0" "$@" <&-', *command]
        completed = subprocess.run(
            [*command, *args],
            input=stdin.encode() if isinstance(stdin, str) else stdin,
            capture_output=True,
            cwd=tmp_path,
            env=environ,
            timeout=60,
            check=False,
            preexec_fn=preexec,  # the test process starts no threads of its own
        )
        result = Result(
            completed.returncode,
            completed.stdout.decode("utf-8"),
            completed.stderr.decode("utf-8"),
        )
        assert "Traceback" not in result.stderr, result.stderr
        for secret in secrets:
            assert secret not in result.stderr, f"a secret reached standard error: {result.stderr}"
        return result

    return run_


@dataclass(frozen=True)
class Rings:
    """Key ring files written in the working directory, with their secrets."""

    eddsa: Path
    hs256: Path
    mixed: Path
    public: Path
    other: Path
    secrets: list[str]

    def ring(self, path: Path) -> Keyring:
        return Keyring.from_jwks(path.read_text())


@pytest.fixture
def rings(tmp_path: Path) -> Rings:
    eddsa = Keyring.generate("EdDSA")
    hs256 = Keyring.generate("HS256")
    mixed = Keyring([*hs256.keys, *eddsa.keys])
    other = Keyring.generate("EdDSA")
    files = {}
    for name, ring in (("eddsa", eddsa), ("hs256", hs256), ("mixed", mixed), ("other", other)):
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps(ring.private_jwks()))
    files["public"] = tmp_path / "public.json"
    files["public"].write_text(json.dumps(eddsa.public_jwks()))
    secrets = [s for ring in (mixed, other) for s in secrets_of(ring.private_jwks())]
    return Rings(secrets=secrets, **files)


def seal(
    ring: Keyring,
    state: Any = None,
    *,
    now: int = NOW,
    user: str = "alice",
    arguments: Mapping[str, Any] | None = None,
    max_token_bytes: int = 8192,
    **target: str,
) -> str:
    """A token from the library, at a fixed time: by default for alice's ``deploy`` tool."""
    sealer = StateSealer(ring, issuer=ISSUER, max_token_bytes=max_token_bytes, clock=lambda: now)
    return sealer.seal(
        {"step": 2} if state is None else state,
        user=user,
        arguments=arguments,
        **(target or {"tool": "deploy"}),
    )
