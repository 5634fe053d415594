"""The cases a conformance run asks an implementation: the profile's vectors.

Every vector file of ``spec/vectors/`` becomes cases of one of three operations
(the protocol's ``op``): ``verify`` for token vectors, ``digest`` for argument
vectors and ``load_key`` for key vectors. A case carries the request to send and
the reference answer it must get.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

__all__ = ["SETTINGS", "Case", "load_cases"]

#: The verifier settings a token vector may override, and their names in the protocol.
SETTINGS: Final = ("issuer", "max_lifetime", "leeway", "max_token_bytes", "require_arguments")

_TARGETS: Final = ("tool", "prompt", "resource")

#: The ring each token vector file is verified against, by file (profile, section 12); others use
#: ``verifier_jwks``.
_RINGS: Final = {"encrypted": "encrypted_verifier_jwks"}


@dataclass(frozen=True)
class Case:
    """One question for an implementation, with the reference answer.

    ``request`` is the protocol message without its ``id``; ``expected`` is the
    answer without its ``id``. ``keyless`` says that a party holding no key could
    produce this input (profile, section 12.5): a baseline verifier must refuse it.
    ``reencoding`` marks a token whose segments decode to the bytes of a valid
    token: a baseline verifier whose replay store is not keyed on the text may
    accept it. ``form`` is ``signed`` or ``encrypted`` for a token case (the form of
    the vector it comes from) and ``None`` otherwise.
    """

    id: str
    request: Mapping[str, Any]
    expected: Mapping[str, Any]
    keyless: bool = False
    reencoding: bool = False
    origin: str = field(default="vector")
    form: str | None = None

    @property
    def op(self) -> str:
        """The protocol operation: ``verify``, ``digest`` or ``load_key``."""
        return str(self.request["op"])


def load_cases(directory: Path) -> list[Case]:
    """Every vector under ``directory`` (a ``spec/vectors`` folder) as cases, in file order.

    Raises:
        ValueError: a file is not a vector file of the profile.
    """
    keys = _read(directory / "keys.json")
    cases: list[Case] = []
    for path in sorted(directory.glob("*.json")):
        if path.name == "keys.json":
            continue
        data = _read(path)
        vectors = data.get("vectors")
        if not isinstance(vectors, list):
            raise ValueError(f"{path.name}: no 'vectors' list")
        for vector in vectors:
            cases.append(_case(path.stem, data, keys, vector))
    return cases


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path.name}: cannot read the vector file ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path.name}: not a JSON object")
    return data


def _case(stem: str, data: Mapping[str, Any], keys: Mapping[str, Any], vector: Mapping[str, Any]) -> Case:
    name = f"{stem}/{vector['id']}"
    if "token" in vector:
        return _token_case(stem, name, data, keys, vector)
    if "jwk" in vector:
        return Case(name, {"op": "load_key", "jwk": vector["jwk"]}, {"loaded": False})
    if "arguments" in vector:
        expected = {"unbindable": True} if vector.get("unbindable") else {"digest": vector["digest"]}
        return Case(name, {"op": "digest", "arguments": vector["arguments"]}, expected)
    raise ValueError(f"{name}: a vector with no token, jwk or arguments")


def _token_case(
    stem: str, name: str, data: Mapping[str, Any], keys: Mapping[str, Any], vector: Mapping[str, Any]
) -> Case:
    defaults = data.get("defaults", {})
    request: dict[str, Any] = {
        "op": "verify",
        "keys": keys[_RINGS.get(stem, "verifier_jwks")],
        "token": vector["token"],
        "user": vector["user"],
        "now": vector["now"],
    }
    for target in _TARGETS:
        if target in vector:
            request[target] = vector[target]
    if "arguments" in vector:
        request["arguments"] = vector["arguments"]
    for setting in SETTINGS:
        if setting in vector or setting in defaults:
            request[setting] = vector.get(setting, defaults.get(setting))
    expected = vector["expected"]
    keyless = bool(vector.get("keyless", False)) and not expected["valid"]
    form = "encrypted" if stem == "encrypted" else "signed"
    return Case(
        name, request, dict(expected), keyless=keyless, reencoding=bool(vector.get("reencoding")), form=form
    )
