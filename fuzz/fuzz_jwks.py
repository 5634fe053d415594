"""Coverage-guided fuzzing of the key loaders (atheris, libFuzzer).

    .venv/bin/python fuzz/fuzz_jwks.py -max_total_time=600 -max_len=12000 fuzz/corpus/jwks

Keyring.from_jwks and Key.from_jwk take operator input (files, environment variables). For any
text they either load keys or raise KeyringError; anything else is a crash.
"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import atheris

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
    names = ("hs256", "eddsa", "eddsa_public", "unknown", "verifier_jwks")
    return {f"{name}.json": json.dumps(keys[name]).encode() for name in names}


def main() -> None:
    """Run libFuzzer; the first corpus directory is seeded when it is empty."""
    corpora = [arg for arg in sys.argv[1:] if not arg.startswith("-")]
    if not corpora:
        corpora = [str(Path(__file__).resolve().parent / "corpus" / "jwks")]
        sys.argv.append(corpora[0])
    corpus = Path(corpora[0])
    if not corpus.is_file():  # a file argument is an input to replay, not a corpus
        corpus.mkdir(parents=True, exist_ok=True)
    if corpus.is_dir() and not any(corpus.iterdir()):
        for seed_name, seed in seed_files().items():
            (corpus / seed_name).write_bytes(seed)
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
