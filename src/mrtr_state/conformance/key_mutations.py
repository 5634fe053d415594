"""Generated mutations of the valid keys and rings, with the reference verdict of each.

A key rule checked by one fixed vector can be broken in a way that vector does
not show (a verifier that trims a ``kid`` passes every ``kid`` vector without a
space at either end). These mutations start from the valid keys and rings of
``keys.json`` that the run sends to ``load_key`` and change them the ways the
profile's key rules speak of (sections 7.1 to 7.6), each time with random
parameters:

``kid``
    the ``kid`` edited: a space or a control character at either end or inside,
    empty, 128 or 129 characters, U+007F or a character beyond U+007E, a
    number, ``null`` (on every key type), or removed (the thumbprint);
``alg``
    ``alg`` removed, ``null``, the key's own value, or another one;
``use``
    ``use`` removed, ``null``, ``sig``, ``enc`` or another value;
``secret``
    an ``oct`` secret replaced by one byte or a pattern of up to 8 bytes repeated,
    a pattern of 9 to 16 bytes (which loads), a short or long secret, or random
    bytes, with ``alg`` and ``use`` kept or removed;
``encoding``
    a base64url member (``k``, ``x``, ``d``) padded, its unused bits set, or
    written with the standard alphabet;
``shared``
    rings in which two keys hold one secret across forms: an encryption key and
    an HS256 key, two encryption keys, two HS256 keys (which load), an HS256 or
    encryption key holding an Ed25519 key's ``d`` or ``x``, with explicit or
    thumbprint ``kid``s, in either order;
``ring``
    the empty ring, a ring with one ``kid`` twice, one key, or its keys reversed.

A fifth of the mutations edit one more member (``kid``, ``alg`` or ``use``) of
the result. The expected answer of every mutation is the reference's
(:func:`~mrtr_state.conformance.answer`); a run for the signed form only is sent
no mutation that holds an encryption key.
"""

from __future__ import annotations

import base64
import copy
import random
from collections.abc import Callable, Sequence
from typing import Any, Final

from mrtr_state.conformance.cases import Case
from mrtr_state.conformance.reference import answer
from mrtr_state.token import _b64

__all__ = ["KEY_SHARE", "mutate_key"]

#: The share of the generated mutations that are key mutations.
KEY_SHARE: Final = 0.2

_Jwk = dict[str, Any]
_Made = _Jwk | list[_Jwk]
_STANDARD: Final = str.maketrans("-_", "+/")
_ALPHABET: Final = _b64.ALPHABET.decode("ascii")


def mutate_key(rng: random.Random, number: int, bases: Sequence[Case], *, encryption: bool) -> Case:
    """One mutation of a key or ring among ``bases`` (valid ``load_key`` cases), with its reference answer.

    ``encryption`` says whether encryption keys may be sent (the run is not for the signed form only).
    """
    base = rng.choice(bases)
    names = tuple(_FAMILIES)
    family = rng.choices(names, weights=tuple(_FAMILIES[name][0] for name in names))[0]
    made = _FAMILIES[family][1](rng, _keys_of(base), encryption)
    jwks = made if isinstance(made, list) else [made]
    if jwks and rng.random() < 0.2:
        _edit_member(rng, rng.choice(jwks), encryption)
    request: dict[str, Any] = {"op": "load_key"}
    if isinstance(made, list):
        request["jwks"] = {"keys": made}
    else:
        request["jwk"] = made
    return Case(
        f"mutation/{number}-key-{family}-of-{base.id.split('/', 1)[-1]}",
        request,
        answer(request),
        origin="key",
        form="encrypted" if any(jwk.get("alg") == "A256GCM" for jwk in jwks) else None,
    )


def _keys_of(base: Case) -> list[_Jwk]:
    """The JWKs of a base case: its one key, or the keys of its ring (deep copies)."""
    if "jwks" in base.request:
        return copy.deepcopy(list(base.request["jwks"]["keys"]))
    return [copy.deepcopy(dict(base.request["jwk"]))]


def _one_or_ring(rng: random.Random, keys: list[_Jwk], index: int) -> _Made:
    """The edited key alone, or in the ring of its base (so the ring's rules see it too)."""
    if len(keys) > 1 or rng.random() < 0.3:
        return keys
    return keys[index]


def _set(jwk: _Jwk, name: str, value: Any) -> None:
    """Set a member, or remove it when ``value`` is ``...``."""
    if value is ...:
        jwk.pop(name, None)
    else:
        jwk[name] = value


def _kid_value(rng: random.Random, jwk: _Jwk) -> Any:
    kid = jwk["kid"] if isinstance(jwk.get("kid"), str) and jwk["kid"] else "key-1"
    inner = kid[: len(kid) // 2] + rng.choice((" ", "\t")) + kid[len(kid) // 2 :]
    return rng.choice(
        (
            " " + kid,
            kid + " ",
            " " + kid + " ",
            "\t" + kid,
            kid + "\n",
            inner,
            "",
            "k" * 128,
            "k" * 129,
            kid + "\u007f",
            kid + "\u00e9",
            "a",
            "!~",
            7,
            None,  # on every key type (profile 7.4): drawn three times as often as one other value
            None,
            None,
            True,
            [kid],
            ...,
        )
    )


def _alg_value(rng: random.Random, jwk: _Jwk, encryption: bool) -> Any:
    own = jwk.get("alg", "EdDSA" if jwk.get("kty") == "OKP" else "HS256")
    others: list[Any] = ["HS256", "EdDSA", "none", "RS256", "HS512", "", "hs256", 1]
    if encryption:
        others.append("A256GCM")
    return rng.choice((..., None, own, rng.choice(others)))


def _use_value(rng: random.Random) -> Any:
    return rng.choice((..., None, "sig", "enc", "", "SIG", 1))


def _kid(rng: random.Random, keys: list[_Jwk], encryption: bool) -> _Made:
    index = rng.randrange(len(keys))
    _set(keys[index], "kid", _kid_value(rng, keys[index]))
    return _one_or_ring(rng, keys, index)


def _alg(rng: random.Random, keys: list[_Jwk], encryption: bool) -> _Made:
    index = rng.randrange(len(keys))
    _set(keys[index], "alg", _alg_value(rng, keys[index], encryption))
    return _one_or_ring(rng, keys, index)


def _use(rng: random.Random, keys: list[_Jwk], encryption: bool) -> _Made:
    index = rng.randrange(len(keys))
    _set(keys[index], "use", _use_value(rng))
    return _one_or_ring(rng, keys, index)


def _edit_member(rng: random.Random, jwk: _Jwk, encryption: bool) -> None:
    """One more edit of ``kid``, ``alg`` or ``use`` (a fifth of the mutations get one)."""
    member = rng.choice(("kid", "alg", "use"))
    if member == "kid":
        _set(jwk, "kid", _kid_value(rng, jwk))
    elif member == "alg":
        _set(jwk, "alg", _alg_value(rng, jwk, encryption))
    else:
        _set(jwk, "use", _use_value(rng))


def _weak(rng: random.Random, length: int) -> bytes:
    """One byte or a pattern of up to 8 bytes, repeated to ``length`` bytes (profile 7.1 refuses it)."""
    period = rng.randint(1, 8)
    pattern = rng.randbytes(period)
    return (pattern * (length // period + 1))[:length]


def _secret(rng: random.Random, keys: list[_Jwk], encryption: bool) -> _Made:
    octs = [index for index, jwk in enumerate(keys) if jwk.get("kty") == "oct"]
    if octs:
        index = rng.choice(octs)
    else:  # a key or ring of Ed25519 keys only: an HS256 key joins it
        keys.append({"kty": "oct", "kid": "secret"})
        index = len(keys) - 1
    jwk = keys[index]
    kind = rng.choice(("weak", "weak", "period-9-to-16", "short", "long", "random"))
    if kind == "weak":
        secret = _weak(rng, rng.choice((32, 32, 33, 47, 64)))
    elif kind == "period-9-to-16":  # only patterns of up to 8 bytes are refused (profile 7.1)
        pattern = rng.randbytes(rng.randint(9, 16))
        secret = (pattern * 8)[: rng.choice((32, 48))]
    elif kind == "short":
        secret = rng.randbytes(rng.choice((0, 1, 16, 31)))
    elif kind == "long":
        secret = rng.randbytes(rng.choice((33, 48, 64)))
    else:
        secret = rng.randbytes(32)
    jwk["k"] = _b64.encode(secret)
    if rng.random() < 0.5:  # an oct JWK without alg is an HS256 secret, with every rule of one (profile 7.6)
        jwk.pop("alg", None)
        if rng.random() < 0.7:
            jwk.pop("use", None)
    return _one_or_ring(rng, keys, index)


def _encoding(rng: random.Random, keys: list[_Jwk], encryption: bool) -> _Made:
    index = rng.randrange(len(keys))
    jwk = keys[index]
    name = rng.choice([member for member in ("k", "x", "d") if isinstance(jwk.get(member), str)])
    text: str = jwk[name]
    how = rng.choice(("pad", "unused-bits", "standard-alphabet"))
    if how == "pad":
        jwk[name] = text + "=" * rng.choice((1, 2))
    elif how == "unused-bits" and len(text) % 4 in (2, 3):
        unused = {2: 0x0F, 3: 0x03}[len(text) % 4]
        jwk[name] = text[:-1] + _ALPHABET[_ALPHABET.index(text[-1]) | rng.randint(1, unused)]
    elif "-" in text or "_" in text:
        jwk[name] = text.translate(_STANDARD)
    else:
        jwk[name] = text + "="
    return _one_or_ring(rng, keys, index)


def _raw(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _shared(rng: random.Random, keys: list[_Jwk], encryption: bool) -> list[_Jwk]:
    """Two keys of one secret across forms, or an ``oct`` key holding an Ed25519 key's ``d`` or ``x``."""
    algs: list[str | None] = ["HS256", "HS256", None] + (["A256GCM", "A256GCM"] if encryption else [])
    pairs = [jwk for jwk in keys if jwk.get("kty") == "OKP"]
    explicit = rng.random() < 0.7

    def oct_key(secret: bytes, kid: str) -> _Jwk:
        alg = rng.choice(algs)
        jwk: _Jwk = {"kty": "oct", "k": _b64.encode(secret)}
        if alg is not None:
            jwk["alg"] = alg
            if rng.random() < 0.7:
                jwk["use"] = "enc" if alg == "A256GCM" else "sig"
        if explicit:
            jwk["kid"] = kid
        return jwk

    if pairs and rng.random() < 0.5:
        pair = rng.choice(pairs)
        parts = [pair["x"]] + ([pair["d"]] if "d" in pair else [])
        secret = _raw(rng.choice(parts)) if rng.random() < 0.85 else rng.randbytes(32)
        ring = [pair, oct_key(secret, "oct")]
    else:
        secret = rng.randbytes(32)
        other = secret if rng.random() < 0.85 else rng.randbytes(32)
        ring = [oct_key(secret, "one"), oct_key(other, "two")]
        if rng.random() < 0.3:
            ring.append(rng.choice(keys))
    rng.shuffle(ring)
    return ring


def _ring(rng: random.Random, keys: list[_Jwk], encryption: bool) -> list[_Jwk]:
    shape = rng.choice(("empty", "same-kid", "twice", "one", "reversed"))
    if shape == "empty":
        return []
    if shape == "same-kid" and len(keys) > 1:
        for jwk in keys:
            jwk["kid"] = "same"
        return keys
    if shape == "twice":
        return [*keys, copy.deepcopy(rng.choice(keys))]
    if shape == "one":
        return [rng.choice(keys)]
    return keys[::-1]


#: Each family of key mutations: its weight, and what makes one.
_FAMILIES: Final[dict[str, tuple[int, Callable[[random.Random, list[_Jwk], bool], _Made]]]] = {
    "kid": (25, _kid),
    "alg": (12, _alg),
    "use": (12, _use),
    "secret": (20, _secret),
    "encoding": (10, _encoding),
    "shared": (15, _shared),
    "ring": (6, _ring),
}
