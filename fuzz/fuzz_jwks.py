"""Coverage-guided fuzzing of the key loaders (atheris, libFuzzer).

    .venv/bin/python fuzz/fuzz_jwks.py -max_total_time=600 -max_len=12000 fuzz/corpus/jwks

Keyring.from_jwks and Key.from_jwk take operator input (files, environment variables). For any
text they either load keys or raise KeyringError; anything else is a crash.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import atheris
from _runner import run

with atheris.instrument_imports():
    from mrtr_state import Key, Keyring, KeyringError

VECTORS = Path(__file__).resolve().parent.parent / "spec" / "vectors"


def test_one_input(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    try:
        ring = Keyring.from_jwks(text)
    except KeyringError:
        pass
    else:
        ring.public_jwks()
        for key in ring:
            repr(key)
    with contextlib.suppress(KeyringError):
        Key.from_jwk(text)


def seed_files() -> dict[str, bytes]:
    """The vector keys, as the fuzzer's starting corpus."""
    keys = json.loads((VECTORS / "keys.json").read_text(encoding="utf-8"))
    names = (
        "hs256",
        "eddsa",
        "eddsa_public",
        "unknown",
        "verifier_jwks",
        "a256gcm",
        "encrypted_verifier_jwks",
    )
    return {f"{name}.json": json.dumps(keys[name]).encode() for name in names}


if __name__ == "__main__":
    run("jwks", test_one_input, seed_files)
