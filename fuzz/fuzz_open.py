"""Coverage-guided fuzzing of StateSealer.open (atheris, libFuzzer).

    .venv/bin/python fuzz/fuzz_open.py -max_total_time=600 -max_len=12000 fuzz/corpus/open

The promise under test: for any input, open() either returns the state this server sealed
for exactly this user, tool and request, or raises InvalidRequestState. Anything else (another
exception, an acceptance of a token that is not one of the valid vectors, a hang) is a crash.
The corpus is seeded with every token of spec/vectors/tokens.json and encrypted.json, and the
ring holds the encryption key too, so both forms (JWS and JWE) are fuzzed.
"""

from __future__ import annotations

import json
from pathlib import Path

import atheris
from _runner import run

with atheris.instrument_imports():
    from mrtr_state import InvalidRequestState, Keyring, StateSealer

VECTORS = Path(__file__).resolve().parent.parent / "spec" / "vectors"
KEYS = json.loads((VECTORS / "keys.json").read_text(encoding="utf-8"))
TOKENS = json.loads((VECTORS / "tokens.json").read_text(encoding="utf-8"))
ENCRYPTED = json.loads((VECTORS / "encrypted.json").read_text(encoding="utf-8"))
ALL_VECTORS = TOKENS["vectors"] + ENCRYPTED["vectors"]
DEFAULTS = TOKENS["defaults"]
BASIC = next(v for v in TOKENS["vectors"] if v["id"] == "valid-hs256-basic")
SEALER = StateSealer(
    Keyring.from_jwks(KEYS["encrypted_verifier_jwks"]), issuer=DEFAULTS["issuer"], clock=lambda: BASIC["now"]
)


def _opens(token: str) -> bool:
    try:
        SEALER.open(token, user=BASIC["user"], tool=BASIC["tool"], arguments=BASIC["arguments"])
    except InvalidRequestState:
        return False
    return True


# The vector tokens this sealer opens for the basic request (minted for it, or not bound to its
# arguments): only these may ever open. Any other accepted input would be a forgery. A few refused
# vectors are a minted token with a segment added (".AAAA", a second signature), which the fuzzer
# finds again by dropping it: the first three (signed) or five (encrypted) segments count as minted.
OPENABLE = {
    minted
    for v in ALL_VECTORS
    for minted in (v["token"], ".".join(v["token"].split(".")[:3]), ".".join(v["token"].split(".")[:5]))
    if _opens(minted)
}
if BASIC["token"] not in OPENABLE:
    raise SystemExit("the basic vector does not open: the fuzzing oracle is broken")


def seed_files() -> dict[str, bytes]:
    """The vector tokens, as the fuzzer's starting corpus."""
    return {f"vector-{i:03d}": v["token"].encode("utf-8") for i, v in enumerate(ALL_VECTORS)}


def test_one_input(data: bytes) -> None:
    token = data.decode("utf-8", "replace")
    if _opens(token) and token not in OPENABLE:
        raise AssertionError(f"open accepted a token it never sealed: {token!r}")


if __name__ == "__main__":
    run("open", test_one_input, seed_files)
