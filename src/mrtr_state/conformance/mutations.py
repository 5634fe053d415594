"""Generated mutations of the valid vectors, with the reference verdict of each.

Four kinds, drawn from a seeded random generator so that a run can be repeated:

``flip``
    one character of a valid token changed, deleted or inserted (no key needed);
``reencode``
    a segment padded, or the unused bits of its last character set (no key
    needed; the bytes are those of a valid token);
``context``
    a valid token presented with another user, target, arguments or issuer, or
    after it expired (no key needed: a client holds such tokens), or before it
    was issued (a verifier's clock behind the minter's: no client can cause it);
``resign``
    the header or the claims changed and the token signed (or encrypted) again
    with the vector key that made it (only a key holder can do this).

A fifth of the mutations (:data:`~mrtr_state.conformance.key_mutations.KEY_SHARE`)
are of a fifth kind, ``key``: a valid key or ring of ``keys.json`` changed the
ways the profile's key rules speak of, sent to ``load_key``
(:mod:`~mrtr_state.conformance.key_mutations`).

The expected answer of every mutation is :func:`~mrtr_state.conformance.answer`'s.
"""

from __future__ import annotations

import base64
import binascii
import json
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from mrtr_state.conformance.cases import Case
from mrtr_state.conformance.key_mutations import KEY_SHARE, mutate_key
from mrtr_state.conformance.reference import answer
from mrtr_state.keys.keys import A256GCMKey, Key
from mrtr_state.token import _b64, _json

__all__ = ["mutate"]

_ALPHABET: Final = _b64.ALPHABET.decode("ascii")
_Edit = Callable[[bytes, bytes, Mapping[str, Any]], tuple[bytes, bytes]]


def mutate(cases: Sequence[Case], keys: Mapping[str, Any], *, count: int, seed: int) -> list[Case]:
    """``count`` mutations of the valid token, key and ring cases among ``cases``, with reference verdicts.

    ``keys`` is ``spec/vectors/keys.json``: its private and secret keys re-sign
    (or re-encrypt) the ``resign`` mutations. A token whose key is not among them
    gets the other three kinds only. About a fifth are key mutations of the valid
    keys and rings among ``cases`` (those that must load); an encryption key is
    among them only when ``cases`` hold one.
    """
    valid = [case for case in cases if case.op == "verify" and case.expected["valid"]]
    loadable = [case for case in cases if case.op == "load_key" and case.expected["loaded"] is True]
    if not (valid or loadable) or count <= 0:
        return []
    encryption = any(case.form == "encrypted" for case in loadable)
    signers = _signers(keys)
    rng = random.Random(seed)  # noqa: S311  (reproducible test inputs, not secrets)
    made: list[Case] = []
    for number in range(count):
        if loadable and (not valid or rng.random() < KEY_SHARE):
            made.append(mutate_key(rng, number, loadable, encryption=encryption))
            continue
        base = rng.choice(valid)
        kind = rng.choices(("flip", "reencode", "context", "resign"), weights=(40, 10, 15, 35))[0]
        kid = _kid(base.request["token"])
        signer = None if kid is None else signers.get(kid)
        if kind == "resign" and signer is None:
            kind = "flip"
        request = dict(base.request)
        reencoding = False
        keyless = kind != "resign"
        if kind == "flip":
            request["token"] = _flip(rng, base.request["token"])
            reencoding = _same_bytes(request["token"], base.request["token"])
        elif kind == "reencode":
            request["token"] = _reencode(rng, base.request["token"])
            reencoding = True
        elif kind == "context":
            keyless = _change_context(rng, request)
        else:
            assert signer is not None  # noqa: S101  (checked above)
            request["token"] = _remake(rng, base.request["token"], signer, base.request)
        made.append(
            Case(
                f"mutation/{number}-{kind}-of-{base.id.split('/', 1)[-1]}",
                request,
                answer(request),
                keyless=keyless,
                reencoding=reencoding,
                origin=kind,
                form=base.form,
            )
        )
    return made


def _signers(keys: Mapping[str, Any]) -> dict[str, Key]:
    signers: dict[str, Key] = {}
    for jwk in keys.values():
        if isinstance(jwk, dict) and (
            "d" in jwk or (jwk.get("kty") == "oct" and jwk.get("alg", "HS256") == "HS256")
        ):
            try:
                key = Key.from_jwk(jwk)
            except ValueError:
                continue
            if key.can_sign:
                signers[key.kid] = key
    return signers


def _kid(token: str) -> str | None:
    segments = token.split(".")
    if len(segments) not in (3, 5):
        return None
    try:
        header = json.loads(_lax(segments[0]))
    except ValueError:
        return None
    kid = header.get("kid") if isinstance(header, dict) else None
    return kid if isinstance(kid, str) else None


def _lax(segment: str) -> bytes:
    """What a lenient decoder reads: padding optional, unused bits ignored."""
    return base64.urlsafe_b64decode(segment.rstrip("=") + "=" * (-len(segment.rstrip("=")) % 4))


def _same_bytes(token: str, original: str) -> bool:
    mine, theirs = token.split("."), original.split(".")
    if len(mine) != len(theirs):
        return False
    try:
        return all(_lax(a) == _lax(b) for a, b in zip(mine, theirs, strict=True))
    except (binascii.Error, ValueError):
        return False


def _flip(rng: random.Random, token: str) -> str:
    position = rng.randrange(len(token))
    action = rng.random()
    if action < 0.1:
        return token[:position] + token[position + 1 :]
    if action < 0.2:
        return token[:position] + rng.choice(_ALPHABET + ".=") + token[position:]
    choices = [c for c in _ALPHABET + "." if c != token[position]]
    return token[:position] + rng.choice(choices) + token[position + 1 :]


def _reencode(rng: random.Random, token: str) -> str:
    segments = token.split(".")
    index = rng.randrange(len(segments))
    segment = segments[index]
    unused = {2: 0x0F, 3: 0x03}.get(len(segment) % 4)
    if segment and unused and rng.random() < 0.5:
        value = _ALPHABET.index(segment[-1]) | rng.randint(1, unused)
        segments[index] = segment[:-1] + _ALPHABET[value]
    else:
        segments[index] = segment + "=" * max(1, -len(segment) % 4)
    return ".".join(segments)


def _change_context(rng: random.Random, request: dict[str, Any]) -> bool:
    """Present the token in another context; return whether a client could make this change."""
    change = rng.choice(("user", "target", "arguments", "issuer", "expired", "future"))
    if change == "user":
        request["user"] = request["user"] + "-other"
    elif change == "target":
        for name in ("tool", "prompt", "resource"):
            request.pop(name, None)
        request[rng.choice(("tool", "prompt", "resource"))] = "other-target"
    elif change == "arguments":
        request["arguments"] = {"changed": True}
    elif change == "issuer":
        request["issuer"] = request["issuer"] + "/other"
    elif change == "expired":  # a verifier's clock stays where a NumericDate does (3.2): 0..2**53-1
        request["now"] = min(request["now"] + request.get("max_lifetime", 600), _json.MAX_SAFE_INTEGER)
    else:
        request["now"] = max(request["now"] - request.get("max_lifetime", 600), 0)
        return False
    return True


def _remake(rng: random.Random, token: str, key: Key, request: Mapping[str, Any]) -> str:
    """Edit the header or the claims of a valid token, then sign or encrypt it again with ``key``."""
    segments = token.split(".")
    if isinstance(key, A256GCMKey):
        payload = key.decrypt(_lax(segments[2]), _lax(segments[3]) + _lax(segments[4]), segments[0].encode())
        if payload is None:
            raise ValueError("a valid vector's token does not decrypt under its key")
    else:
        payload = _lax(segments[1])
    header_bytes, payload_bytes = _compact(json.loads(_lax(segments[0]))), _compact(json.loads(payload))
    for edit in rng.sample(_EDITS, k=rng.choice((1, 1, 2))):
        header_bytes, payload_bytes = edit(header_bytes, payload_bytes, request)
    header = _b64.encode(header_bytes)
    if isinstance(key, A256GCMKey):
        iv = rng.randbytes(12)
        sealed = key.encrypt(iv, payload_bytes, header.encode("ascii"))
        return f"{header}..{_b64.encode(iv)}.{_b64.encode(sealed[:-16])}.{_b64.encode(sealed[-16:])}"
    signing_input = f"{header}.{_b64.encode(payload_bytes)}"
    return f"{signing_input}.{_b64.encode(key.sign(signing_input.encode('ascii')))}"


def _compact(value: Any) -> bytes:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate read from an escape: write it escaped again
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def _with(name: str, value: Any, *, header: bool = False) -> _Edit:
    """An edit that sets (or, with ``...``, deletes) one member of the header or the claims."""

    def edit(head_text: bytes, claims_text: bytes, request: Mapping[str, Any]) -> tuple[bytes, bytes]:
        try:
            head, claims = json.loads(head_text), json.loads(claims_text)
        except ValueError:  # an earlier edit broke the JSON: nothing to set
            return head_text, claims_text
        target = head if header else claims
        if not isinstance(target, dict):
            return head_text, claims_text
        if value is ...:
            target.pop(name, None)
        else:
            target[name] = value(target, request) if callable(value) else value
        return _compact(head), _compact(claims)

    return edit


def _raw(change: Callable[[bytes], bytes], *, header: bool = False) -> _Edit:
    """An edit of the JSON text itself (duplicates, escapes, white space, BOM)."""

    def edit(head: bytes, claims: bytes, request: Mapping[str, Any]) -> tuple[bytes, bytes]:
        return (change(head), claims) if header else (head, change(claims))

    return edit


def _nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def _retime(iat: int | None, lifetime: int) -> _Edit:
    """An edit of the times: ``iat`` (``None``: a second past the clock), ``exp = iat + lifetime``."""

    def edit(head: bytes, claims_text: bytes, request: Mapping[str, Any]) -> tuple[bytes, bytes]:
        try:
            claims = json.loads(claims_text)
        except ValueError:
            return head, claims_text
        if not isinstance(claims, dict):
            return head, claims_text
        claims["iat"] = request["now"] + 1 if iat is None else iat
        claims["exp"] = claims["iat"] + lifetime
        return head, _compact(claims)

    return edit


def _append(text: bytes) -> Callable[[bytes], bytes]:
    return lambda raw: raw[:-1] + text + b"}"


_EDITS: Final[tuple[_Edit, ...]] = (
    # header
    _with("typ", "MRTR-STATE+JWT", header=True),
    _with("typ", "application/mrtr-state+jwt", header=True),
    _with("typ", "JWT", header=True),
    _with("typ", ..., header=True),
    _with("alg", "none", header=True),
    _with("alg", "Ed25519", header=True),
    _with("alg", "HS512", header=True),
    _with("alg", lambda head, _: "EdDSA" if head.get("alg") == "HS256" else "HS256", header=True),
    _with("alg", ..., header=True),
    _with("kid", ..., header=True),
    _with("kid", 7, header=True),
    _with("kid", "not-a-key-of-the-ring", header=True),
    _with("crit", ["exp"], header=True),
    _with("jku", "https://attacker.example/jwks.json", header=True),
    _with("zip", "DEF", header=True),
    _with("cty", "JWT", header=True),
    _with("enc", "A128GCM", header=True),
    _with("enc", ..., header=True),
    _with("alg", "dir", header=True),
    _raw(_append(b',"alg":"none"'), header=True),
    _raw(lambda raw: b" \n" + raw + b"\t ", header=True),
    _raw(lambda raw: b"\xef\xbb\xbf" + raw, header=True),
    _raw(lambda raw: raw.replace(b'"mrtr-state+jwt"', b'"\\u006drtr-state+jwt"'), header=True),
    _raw(lambda raw: b"[" + raw + b"]", header=True),
    # claims
    _with("aud", lambda claims, _: [claims.get("aud")]),
    _with("nbf", lambda claims, _: claims.get("iat")),
    _with("iat", lambda claims, _: float(claims["iat"]) if isinstance(claims.get("iat"), int) else 0.5),
    _with("exp", lambda claims, _: str(claims.get("exp"))),
    _with("exp", lambda claims, _: claims.get("iat")),
    _with("jti", "A" * 21),
    _with("jti", "A" * 22),
    _with("jti", "A" * 64),
    _with("jti", "A" * 65),
    _with("jti", "AAAAAAAAAAAAAAAAAAAAA+AAA"),
    _with("args_sha256", "A" * 44),
    _with("args_sha256", ...),
    _with("args_sha256", None),
    _with("sub", ""),
    _with("iss", ...),
    _with("sub", ...),
    _with("aud", ...),
    _with("iat", ...),
    _with("exp", ...),
    _with("jti", ...),
    _with("state", ...),
    _with("state", 2**53),
    _with("state", 9007199254740991),
    _with("state", 2.0**60),
    _with("state", _nested(32)),
    _with("state", _nested(33)),
    _with("state", "a\u0000b\u2028"),
    _retime(None, 600),
    _retime(1_767_225_000, 601),
    _retime(1_767_225_000, 600),
    _retime(0, 600),
    _raw(_append(b',"sub":"mallory"')),
    _raw(_append(b',"state":"\\ud800"')),
    _raw(lambda raw: raw.replace(b'"state":', b'"state":[1e-400,-1e-400,1e400,', 1)[:-1] + b"]}"),
    _raw(lambda raw: raw.replace(b'"state":', b'"state":[1E+2,1.5e-3,-0,0.0,', 1)[:-1] + b"]}"),
    _raw(lambda raw: b"\n" + raw + b" "),
    _raw(lambda raw: raw.replace(b'"exp":', b'"exp":1e0+', 1)),
)
