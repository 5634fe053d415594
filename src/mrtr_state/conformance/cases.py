"""The cases a conformance run asks an implementation: the profile's vectors.

Every vector file of ``spec/vectors/`` becomes cases of one of three operations
(the protocol's ``op``): ``verify`` for token vectors, ``digest`` for argument
vectors and ``load_key`` for key vectors (a ``jwk``, or a ring as a ``jwks``). The
valid keys and rings of ``keys.json`` are sent to ``load_key`` too and must load,
so that an implementation that refuses every key cannot pass. A case carries the
request to send and the reference answer it must get.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

__all__ = ["SETTINGS", "Case", "Number", "RawJson", "load_cases", "to_json"]

#: The verifier settings a token vector may override, and their names in the protocol.
SETTINGS: Final = ("issuer", "max_lifetime", "leeway", "max_token_bytes", "require_arguments")

_TARGETS: Final = ("tool", "prompt", "resource")

#: The ring each token vector file is verified against, by file (profile, section 12); others use
#: ``verifier_jwks``.
_RINGS: Final = {"encrypted": "encrypted_verifier_jwks"}

#: The valid keys and rings of ``keys.json`` every implementation must load (issue 24, item 10), with
#: the form whose implementations must load them (``None``: every implementation).
_VALID_KEYS: Final = (
    ("hs256", "jwk", None),
    ("eddsa", "jwk", None),
    ("eddsa_public", "jwk", None),
    ("unknown", "jwk", None),
    ("verifier_jwks", "jwks", None),
    ("a256gcm", "jwk", "encrypted"),
    ("encrypted_verifier_jwks", "jwks", "encrypted"),
)


@dataclass(frozen=True)
class Case:
    """One question for an implementation, with the reference answer.

    ``request`` is the protocol message without its ``id``; ``expected`` is the
    answer without its ``id``. ``keyless`` says that a party holding no key could
    produce this input (profile, section 12.5): a baseline verifier must refuse it.
    ``reencoding`` marks a token whose segments decode to the bytes of a valid
    token: a baseline verifier whose replay store is not keyed on the text may
    accept it. ``form`` is ``signed`` or ``encrypted`` for a token case (the form of
    the vector it comes from), ``encrypted`` for a valid encryption key that must
    load, and ``None`` otherwise (every implementation is asked).
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
    cases: list[Case] = [
        Case(f"keys/{name}", {"op": "load_key", member: keys[name]}, {"loaded": True}, form=form)
        for name, member, form in _VALID_KEYS
        if name in keys
    ]
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


class Number(float):
    """A JSON number with a fraction or exponent, read from a vector file, that keeps its spelling.

    It is the double the literal names, for the reference and the judge; :func:`to_json`
    writes it back exactly as the vector spells it, so an implementation reads the
    literal itself (``9007199254740991.5``, ``1e-400``), never a rounded re-spelling.
    """

    literal: str

    def __new__(cls, literal: str) -> Number:
        """The double nearest ``literal`` (a JSON number), remembering ``literal``."""
        number = super().__new__(cls, literal)
        number.literal = literal
        return number


class RawJson:
    """JSON text sent exactly as written: what no JSON value writes (a member name repeated).

    An argument vector's ``arguments_text`` (profile 12.3) becomes one, so the
    implementation reads that text with its own parser, as it reads a request.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        """Hold ``text``, one JSON value on one line."""
        self.text = text

    def __repr__(self) -> str:
        return f"RawJson({self.text!r})"


def to_json(value: Any, *, ensure_ascii: bool = False) -> str:
    """``json.dumps`` of ``value`` on one line: a :class:`Number` as its literal, :class:`RawJson` as is."""
    literals: list[str] = []
    nonce = secrets.token_hex(8)

    def marked(item: Any) -> Any:
        if isinstance(item, RawJson):
            literals.append(item.text)
            return f"@@{nonce}:{len(literals) - 1}@@"
        if isinstance(item, Number):
            literals.append(item.literal)
            return f"@@{nonce}:{len(literals) - 1}@@"
        if isinstance(item, Mapping):
            return {key: marked(member) for key, member in item.items()}
        if isinstance(item, (list, tuple)):
            return [marked(member) for member in item]
        return item

    text = json.dumps(marked(value), ensure_ascii=ensure_ascii)
    for index, literal in enumerate(literals):
        text = text.replace(f'"@@{nonce}:{index}@@"', literal, 1)
    return text


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"), parse_float=Number)
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
    if "jwks" in vector:  # a ring-level rule (profile 7.6): each key loads alone, the ring must not
        return Case(name, {"op": "load_key", "jwks": vector["jwks"]}, {"loaded": False})
    if "arguments" in vector:
        expected = {"unbindable": True} if vector.get("unbindable") else {"digest": vector["digest"]}
        # A vector with arguments_text (a member name repeated, profile 12.3) is sent as that text.
        arguments = RawJson(vector["arguments_text"]) if "arguments_text" in vector else vector["arguments"]
        return Case(name, {"op": "digest", "arguments": arguments}, expected)
    raise ValueError(f"{name}: a vector with no token, jwk, jwks or arguments")


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
