"""Coverage-guided fuzzing of the ``mrtr-state`` command line (atheris, libFuzzer).

    .venv/bin/python fuzz/fuzz_cli.py -max_total_time=600 -max_len=12000 fuzz/corpus/cli

The command reads operator input four ways: the ``--arguments`` JSON, a key file,
the token, and the ``MRTR_STATE_KEYS`` environment variable. The promise under
test: for any of them, ``verify``, ``inspect``, ``jwks`` and ``keygen --add`` exit
with 0, 1 (``verify`` refused the token) or 2 (bad input, exactly one line on
standard error), never a traceback, never the last-resort "unexpected" error
(which would be a bug the catch hid), and never a secret of the key file on
standard error. The corpus is seeded with the vector tokens, keys and arguments.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Final

import atheris
from _runner import run

with atheris.instrument_imports():
    from mrtr_state import cli

VECTORS = Path(__file__).resolve().parent.parent / "spec" / "vectors"
KEYS = json.loads((VECTORS / "keys.json").read_text(encoding="utf-8"))
TOKENS = json.loads((VECTORS / "tokens.json").read_text(encoding="utf-8"))
ARGUMENTS = json.loads((VECTORS / "arguments.json").read_text(encoding="utf-8"))

WORKDIR: Final = Path(tempfile.mkdtemp(prefix="mrtr-state-fuzz-cli-"))
atexit.register(shutil.rmtree, WORKDIR, ignore_errors=True)
KEY_FILE: Final = WORKDIR / "keys.json"
VARIABLE: Final = "MRTR_STATE_KEYS"
SEPARATOR: Final = b"\x00\xff"


def _fields(data: bytes) -> tuple[int, str, str, str, str]:
    """The command selector, arguments text, key file text, token and environment value."""
    selector = data[0] if data else 0
    parts = data[1:].split(SEPARATOR, 3)
    parts += [b""] * (4 - len(parts))
    arguments, key_file, token, environ = (part.decode("utf-8", "replace") for part in parts)
    return selector, arguments, key_file, token, environ.replace("\x00", "")


def _argv(selector: int, arguments: str, token: str) -> list[str]:
    keys = [] if selector & 0x10 else ["--keys", str(KEY_FILE)]
    command = selector % 4
    if command == 0:
        return [
            "verify", token, *keys, "--issuer", TOKENS["defaults"]["issuer"], "--user", "alice",
            "--tool", "deploy", "--now", "1767225600", "--arguments", arguments, "--json",
        ]  # fmt: skip
    if command == 1:
        return ["inspect", token, "--json"] if selector & 0x20 else ["inspect", token]
    if command == 2:
        return ["jwks"] if selector & 0x10 else ["jwks", str(KEY_FILE)]
    return ["keygen", "--alg", "HS256", "--add", str(KEY_FILE), "-o", "-"]


def _secrets(key_file: str) -> list[str]:
    """The secret members of a key file that parses, to look for on standard error."""
    try:
        document = json.loads(key_file)
    except (ValueError, RecursionError):
        return []
    found = []
    jwks = document.get("keys") if isinstance(document, dict) else None
    for jwk in jwks if isinstance(jwks, list) else [document]:
        if isinstance(jwk, dict):
            found += [v for k, v in jwk.items() if k in ("k", "d") and isinstance(v, str) and len(v) >= 8]
    return found


def test_one_input(data: bytes) -> None:
    selector, arguments, key_file, token, environ = _fields(data)
    KEY_FILE.write_text(key_file, encoding="utf-8", errors="surrogatepass")
    before = os.environ.get(VARIABLE)
    os.environ[VARIABLE] = environ
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(_argv(selector, arguments, token))
    finally:
        if before is None:
            os.environ.pop(VARIABLE, None)
        else:
            os.environ[VARIABLE] = before
    stderr = err.getvalue()
    if status not in (0, 1, 2):
        raise AssertionError(f"exit status {status}")
    if "Traceback" in stderr or "this is a bug in" in stderr:
        raise AssertionError(f"a bug reached the operator: {stderr!r}")
    if status == 2 and stderr.count("\n") != 1:
        raise AssertionError(f"bad input must be one line on standard error: {stderr!r}")
    for secret in _secrets(key_file):
        if secret in stderr:
            raise AssertionError("a secret of the key file reached standard error")


def seed_files() -> dict[str, bytes]:
    """The vector tokens, keys and arguments, spread over the four inputs and commands."""
    seeds: dict[str, bytes] = {}
    key_texts = [json.dumps(KEYS["verifier_jwks"]), json.dumps(KEYS["hs256"]), ""]
    argument_texts = [json.dumps(case["arguments"]) for case in ARGUMENTS["vectors"]]
    for i, vector in enumerate(TOKENS["vectors"][::4]):
        fields = [
            argument_texts[i % len(argument_texts)],
            key_texts[i % len(key_texts)],
            vector["token"],
            "" if i % 3 else json.dumps(KEYS["verifier_jwks"]),
        ]
        seeds[f"vector-{i:03d}"] = bytes([i % 64]) + SEPARATOR.join(f.encode() for f in fields)
    return seeds


if __name__ == "__main__":
    run("cli", test_one_input, seed_files)
