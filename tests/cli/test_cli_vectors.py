"""``mrtr-state verify`` gives the profile's verdict on its test vectors (spec/vectors/).

One vector per expected verdict, and one per target kind, each through the
installed command: the command line must agree with the library and every other
implementation. Text whose header is not even JSON is bad input for the command
(exit status 2) where the library says ``malformed``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import Run

VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors"
TOKENS = json.loads((VECTORS / "tokens.json").read_text(encoding="utf-8"))
KEYS = json.loads((VECTORS / "keys.json").read_text(encoding="utf-8"))


def _sample() -> list[dict[str, Any]]:
    chosen: dict[str, dict[str, Any]] = {}
    for vector in TOKENS["vectors"]:
        verdict = vector["expected"].get("reason", "valid")
        target = next(kind for kind in ("tool", "prompt", "resource") if kind in vector)
        chosen.setdefault(verdict, vector)
        if vector["expected"]["valid"]:
            chosen.setdefault(f"valid {target}", vector)
        if vector.get("require_arguments"):
            chosen.setdefault(f"{verdict} {target} with the binding required", vector)
    return list(chosen.values())


@pytest.mark.parametrize("vector", _sample(), ids=lambda v: v["id"])
def test_verify_gives_each_vectors_expected_verdict(run: Run, tmp_path: Path, vector: dict[str, Any]) -> None:
    (tmp_path / "verifier.json").write_text(json.dumps(KEYS["verifier_jwks"]))
    settings = {**TOKENS["defaults"], **{k: vector[k] for k in TOKENS["defaults"] if k in vector}}
    args = [
        "verify",
        "-",
        "--keys",
        "verifier.json",
        "--json",
        "--issuer",
        settings["issuer"],
        "--max-lifetime",
        str(settings["max_lifetime"]),
        "--leeway",
        str(settings["leeway"]),
        "--max-token-bytes",
        str(settings["max_token_bytes"]),
        "--now",
        str(vector["now"]),
        "--user",
        vector["user"],
    ]
    for kind in ("tool", "prompt", "resource"):
        if kind in vector:
            args += [f"--{kind}", vector[kind]]
    if "arguments" in vector:
        args += ["--arguments", json.dumps(vector["arguments"])]
    if settings["require_arguments"]:
        args.append("--require-arguments")
    result = run(*args, stdin=vector["token"])
    expected = vector["expected"]
    if expected["valid"]:
        assert result.status == 0, result
        assert json.loads(result.stdout)["state"] == expected["state"]
    elif result.status == 2:
        assert expected["reason"] == "malformed", result
        assert "not a requestState token" in result.error_line()
    else:
        assert result.status == 1, result
        assert json.loads(result.stdout)["reason"] == expected["reason"]
