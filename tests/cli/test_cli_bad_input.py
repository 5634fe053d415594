"""Bad key input is one clear line on standard error and exit status 2: no traceback, no secret."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path

import pytest

from .conftest import ISSUER, NOW, Rings, Run, b64url, seal

SHORT_SECRET = b64url(b"sixteen byte key")
GOOD_X = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"  # RFC 8037 A.1's public key

BAD_KEY_FILES: dict[str, tuple[bytes, str]] = {
    "empty file": (b"", "not JSON"),
    "invalid JSON": (b'{"keys": [', "not JSON"),
    "not UTF-8": (b"\xff\xfe{\x00}\x00", "not UTF-8"),
    "a PEM key": (
        b"-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI\n-----END PRIVATE KEY-----\n",
        "not JSON",
    ),
    "a JSON array": (b"[]", '"keys" array'),
    "keys not a list": (b'{"keys": "all of them"}', '"keys" array'),
    "no keys": (b'{"keys": []}', "at least one key"),
    "a key that is not an object": (b'{"keys": [42]}', "JSON object"),
    "a short HS256 secret": (json.dumps({"keys": [{"kty": "oct", "k": SHORT_SECRET}]}).encode(), "32"),
    "padded base64": (json.dumps({"keys": [{"kty": "oct", "k": SHORT_SECRET + "=="}]}).encode(), "base64url"),
    "an RSA key": (b'{"keys": [{"kty": "RSA", "n": "AQAB", "e": "AQAB"}]}', "RSA"),
    "a P-256 key": (b'{"keys": [{"kty": "EC", "crv": "P-256"}]}', "EC"),
    "an X25519 key": (
        json.dumps({"keys": [{"kty": "OKP", "crv": "X25519", "x": GOOD_X}]}).encode(),
        "Ed25519",
    ),
    "x of the wrong length": (b'{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "AAAA"}]}', "32 bytes"),
    "d that is not x's": (
        json.dumps(
            {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": GOOD_X, "d": b64url(bytes(32))}]}
        ).encode(),
        "not the public key",
    ),
    "use enc": (
        json.dumps({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": GOOD_X, "use": "enc"}]}).encode(),
        "use",
    ),
    "a kid with a space": (
        json.dumps({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": GOOD_X, "kid": "a b"}]}).encode(),
        "kid",
    ),
    "a kid that is a number": (
        json.dumps({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": GOOD_X, "kid": 7}]}).encode(),
        "kid",
    ),
    "two keys with one kid": (
        json.dumps({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": GOOD_X, "kid": "a"}] * 2}).encode(),
        "two keys",
    ),
    "JSON nested too deeply": (b"[" * 200_000, "nested"),
    "a duplicate member": (
        (
            '{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "' + GOOD_X + '", "x": "' + GOOD_X + '"}]}'
        ).encode(),
        "duplicate",
    ),
    "deeper than any JWKS": (b'{"keys": [{"kty": [[[[[[[[[]]]]]]]]]}]}', "nest"),
    "a file over 1 MiB": (b" " * (1 << 20) + b"{}", "larger than 1 MiB"),
    "an integer of 5000 digits": (
        b'{"keys": [{"kty": "oct", "k": ' + b"9" * 5000 + b"}]}",
        "too long to read",
    ),
    "a small-order Ed25519 key (the identity)": (
        json.dumps(
            {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": b64url((1).to_bytes(32, "little"))}]}
        ).encode(),
        "small order",
    ),
    "a non-canonical Ed25519 key (y = p + 1)": (
        json.dumps(
            {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": b64url((2**255 - 18).to_bytes(32, "little"))}]}
        ).encode(),
        "canonical encoding",
    ),
}


def run_with_key_file(run: Run, command: str, name: str, rings: Rings) -> str:
    """The error line of ``command`` given the key file ``name``."""
    return run(*command_with_key_file(command, name, rings), secrets=rings.secrets).error_line()


def command_with_key_file(command: str, name: str, rings: Rings) -> list[str]:
    token = seal(rings.ring(rings.eddsa))
    return {
        "jwks": ["jwks", name],
        "verify": [
            "verify",
            token,
            "--keys",
            name,
            "--issuer",
            ISSUER,
            "--user",
            "a",
            "--tool",
            "t",
            "--now",
            str(NOW),
        ],
        "keygen --add": ["keygen", "--alg", "EdDSA", "--add", name, "-o", "new.json"],
    }[command]


COMMANDS = ["jwks", "verify", "keygen --add"]

# Every command reads keys through one loader: every bad file against verify, a few against the others.
KEY_FILE_CASES = [("verify", case) for case in sorted(BAD_KEY_FILES)] + [
    (command, case)
    for command in ("jwks", "keygen --add")
    for case in ("invalid JSON", "a short HS256 secret", "no keys", "not UTF-8")
]


@pytest.mark.parametrize(("command", "case"), KEY_FILE_CASES)
def test_a_key_file_that_cannot_be_used_is_one_line_and_status_2(
    run: Run, rings: Rings, tmp_path: Path, command: str, case: str
) -> None:
    content, expected = BAD_KEY_FILES[case]
    (tmp_path / "bad.json").write_bytes(content)
    line = run_with_key_file(run, command, "bad.json", rings)
    assert "'bad.json'" in line
    assert expected in line
    assert SHORT_SECRET not in line
    assert not (tmp_path / "new.json").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_missing_key_file_is_one_line_and_status_2(run: Run, rings: Rings, command: str) -> None:
    assert "no such file" in run_with_key_file(run, command, "nowhere.json", rings)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_directory_as_key_file_is_one_line_and_status_2(
    run: Run, rings: Rings, tmp_path: Path, command: str
) -> None:
    (tmp_path / "keys.d").mkdir()
    assert "is a directory" in run_with_key_file(run, command, "keys.d", rings)


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unreadable_key_file_is_one_line_and_status_2(
    run: Run, rings: Rings, tmp_path: Path, command: str
) -> None:
    locked = tmp_path / "locked.json"
    locked.write_text(rings.eddsa.read_text())
    locked.chmod(0)
    # root reads any file; without CAP_DAC_OVERRIDE it obeys the permission bits like anyone.
    result = run(
        *command_with_key_file(command, "locked.json", rings),
        without_file_override=getattr(os, "geteuid", lambda: -1)() == 0,
        secrets=rings.secrets,
    )
    assert "permission denied" in result.error_line()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("not base64!", "neither JSON nor a base64 secret"),
        ("{not json", "not JSON"),
        (SHORT_SECRET, "at least 32"),
        ('{"kty": "oct", "k": "' + SHORT_SECRET + '"}', "at least 32"),
        ('{"keys": 1}', '"keys" array'),
        ("   ", "not set"),
        (b64url(b"ab" * 20), "not random bytes"),
        (b64url(bytes(32)), "mrtr-state keygen"),
        ('{"keys": [{"kty": "oct", "k": ' + "7" * 5000 + "}]}", "not strict JSON"),
    ],
)
def test_a_bad_environment_variable_is_one_line_naming_it(
    run: Run, rings: Rings, value: str, expected: str
) -> None:
    token = seal(rings.ring(rings.eddsa))
    env = {"MRTR_STATE_KEYS": value}
    for args in (["jwks"], ["verify", token, "--issuer", ISSUER, "--user", "a", "--tool", "t"]):
        line = run(*args, env=env, secrets=[SHORT_SECRET]).error_line()
        assert "MRTR_STATE_KEYS" in line
        assert expected in line


def test_standard_input_that_is_not_a_ring_is_bad_input(run: Run) -> None:
    assert "standard input" in run("jwks", "-", stdin="nope").error_line()


def test_token_and_keys_cannot_both_come_from_standard_input(run: Run) -> None:
    assert (
        "standard input"
        in run("verify", "-", "--keys", "-", "--issuer", "i", "--user", "u", "--tool", "t").error_line()
    )


def test_closed_standard_input_is_bad_input(run: Run) -> None:
    assert "closed" in run("inspect", "-", stdin_closed=True).error_line()


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ('{"id": ' + "9" * 5000 + "}", "too long to read"),
        ('{"id": [' + "1" * 4301 + "]}", "too long to read"),
        ('{"id": ', "not JSON"),
        ("[1, 2]", "JSON object"),
    ],
)
def test_bad_arguments_are_one_line_and_status_2(
    run: Run, rings: Rings, arguments: str, expected: str
) -> None:
    token = seal(rings.ring(rings.eddsa))
    line = run(
        "verify",
        token,
        "--keys",
        str(rings.eddsa),
        "--issuer",
        ISSUER,
        "--user",
        "a",
        "--tool",
        "t",
        "--arguments",
        arguments,
    ).error_line()
    assert "--arguments" in line
    assert expected in line


def test_an_unexpected_error_is_one_line_and_status_2_never_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mrtr_state import cli
    from mrtr_state.cli import _inspect

    def broken(args: object) -> int:
        raise RuntimeError("secret-looking text that must not be shown")

    monkeypatch.setattr(_inspect, "_inspect", broken)
    status = cli.main(["inspect", "x.y.z"])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.err.count("\n") == 1
    assert "RuntimeError" in captured.err
    assert "secret-looking" not in captured.err


def _release_fifo_after(path: Path, seconds: float) -> threading.Timer:
    """Open the FIFO for writing and close it after ``seconds``, so a reader blocked on it goes on."""

    def release() -> None:
        with contextlib.suppress(OSError):  # no reader waiting: nothing to release
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    timer = threading.Timer(seconds, release)
    timer.start()
    return timer


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("command", COMMANDS)
def test_a_fifo_as_key_file_is_refused_at_once_never_waited_on(
    run: Run, rings: Rings, tmp_path: Path, command: str
) -> None:
    fifo = tmp_path / "keys.fifo"
    os.mkfifo(fifo)
    # A reader that blocks on the FIFO is let go after 5 s, and then reads no keys at all.
    timer = _release_fifo_after(fifo, 5)
    try:
        started = time.monotonic()
        line = run_with_key_file(run, command, "keys.fifo", rings)
        elapsed = time.monotonic() - started
    finally:
        timer.cancel()
    assert "'keys.fifo'" in line
    assert "not a regular file (a FIFO)" in line
    assert elapsed < 5


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
@pytest.mark.parametrize("mode", [0o666, 0o602], ids=oct)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_key_file_anyone_may_write_is_refused_naming_the_fix_never_its_contents(
    run: Run, rings: Rings, tmp_path: Path, command: str, mode: int
) -> None:
    writable = tmp_path / "writable.json"
    writable.write_text(rings.mixed.read_text())
    writable.chmod(mode)
    line = run_with_key_file(run, command, "writable.json", rings)  # checks that no secret is shown
    assert "'writable.json'" in line
    assert f"anyone may write it (mode {mode:04o}): make it 0600 (chmod 600 FILE)" in line
    assert "allow_world_writable" not in line  # the library's option, not the command line's
    assert not (tmp_path / "new.json").exists()
