"""The token format: JWS compact serialization as the profile restricts it.

This layer knows segments, base64url, JSON and the JOSE header; it knows nothing of
claims. It implements steps 1 to 10 of the validation procedure (profile, section
5): size, segments, base64url, header JSON, header allowlist, ``alg``, ``typ``,
``kid``, algorithm pinned to the key, signature; and the payload's JSON
strictness (step 11). It owns the compact format: the known-header fast path
(:func:`known_headers`, :func:`verify`) and the size of a token before it is
made (:func:`size`); :mod:`mrtr_state.sealer` only orchestrates.

Why this is not PyJWT's ``jwt.decode``: the keys (:mod:`mrtr_state.keys`) sign and
verify, and parsing is done here, once. ``jwt.decode`` parses leniently (a
duplicate member wins last, ``exp`` may be a float) and checks none of the
profile's header or JSON rules, so using it would mean a second, strict parse of
the same segments; it also checks the base64url alphabet one byte at a time in
Python. Measured on the same token, it costs more than the whole of
``StateSealer.open`` before any profile check (the figure is in
docs/benchmarks.md, "The design choice"). So the
profile's checks are the single parsing pass, and where a rule needs more than the
C JSON parser gives, it is a C-speed pass over the bytes rather than a Python loop.
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

from mrtr_state.errors import InvalidRequestState
from mrtr_state.keys.keys import ALGORITHMS, SIGNATURE_BYTES, Key, Keyring
from mrtr_state.token import _b64, _json

__all__ = [
    "HEADER_PARAMETERS",
    "TYP",
    "Payload",
    "check_header",
    "check_size",
    "decode_header",
    "decode_payload",
    "decode_unverified",
    "header_segment",
    "key_for_header",
    "known_headers",
    "not_canonical",
    "read_object",
    "read_payload",
    "sign",
    "size",
    "split",
    "verify",
    "verify_known",
    "verify_signature",
]

#: The ``typ`` header value of the profile (explicit typing, RFC 8725 section 3.11).
TYP: Final = "mrtr-state+jwt"

#: The only header parameters a token may carry. Everything else (``crit``, ``b64``,
#: ``jku``, ``jwk``, ``x5u``, ``x5c``, ``zip``, ``cty``, ...) is refused.
HEADER_PARAMETERS: Final = frozenset({"alg", "kid", "typ"})


def header_segment(key: Key) -> str:
    """The encoded header a minter emits for ``key``: ``alg``, ``typ``, ``kid``, in that order."""
    return _b64.encode(_json.dumps({"alg": key.alg, "typ": TYP, "kid": key.kid}))


def known_headers(ring: Keyring) -> dict[str, Key]:
    """The exact header segments the ring's signing-form keys mint with, and their keys.

    A token carrying one of them needs no header parsing: steps 4 to 9 hold by
    construction (:func:`verify`). Any other header takes the full path.
    """
    return {header_segment(key): key for key in ring if key.alg in ALGORITHMS}


def size(header: str, payload_bytes: int, alg: str) -> int:
    """The length of the token :func:`sign` makes from a payload of this many bytes."""
    return len(header) + 2 + _b64.encoded_length(payload_bytes) + _b64.encoded_length(SIGNATURE_BYTES[alg])


def sign(key: Key, header: str, payload: bytes) -> str:
    """Return the compact JWS of ``payload`` under the encoded ``header``, signed by ``key``."""
    signing_input = f"{header}.{_b64.encode(payload)}"
    return f"{signing_input}.{_b64.encode(key.sign(signing_input.encode('ascii')))}"


def check_size(token: object, max_bytes: int) -> bytes:
    """Step 1, for both forms: ``token`` is a string of at most ``max_bytes`` UTF-8 bytes.

    Returns those bytes (the form's step 2 reads them). The length alone is
    checked first (a string never has fewer bytes than characters), so an
    oversized input is refused before it is encoded, whatever its content.
    """
    # Profile 5, step 1: size, checked before any decoding (a value that is not a string is malformed).
    if not isinstance(token, str):
        raise InvalidRequestState("malformed", "the token is not a string")
    if len(token) <= max_bytes:
        data = token.encode("utf-8", "surrogatepass")  # an ASCII string's own bytes
        if len(data) <= max_bytes:
            return data
    raise InvalidRequestState("too_large", f"the token is longer than {max_bytes} bytes")


def split(token: object, max_bytes: int) -> tuple[str, str, str]:
    """Steps 1 to 3: size cap (:func:`check_size`), three base64url segments, each canonical."""
    _, header, payload, signature = _segments(token, max_bytes)
    # Profile 5, step 3: each segment canonical unpadded base64url.
    if not (_b64.is_canonical(header) and _b64.is_canonical(payload) and _b64.is_canonical(signature)):
        raise not_canonical()
    return header, payload, signature


def not_canonical() -> InvalidRequestState:
    """Step 3's refusal, for both forms."""
    return InvalidRequestState("malformed", "a segment is not canonical unpadded base64url")


def _segments(token: object, max_bytes: int) -> tuple[bytes, str, str, str]:
    """Steps 1 and 2: the size cap, then three non-empty segments of the base64url alphabet.

    Returns the token's bytes and its three segments.
    """
    data = check_size(token, max_bytes)
    # Profile 5, step 2: three non-empty segments of the base64url alphabet.
    # Deleting every base64url character must leave exactly the two dots: one C-speed
    # pass checks the alphabet and the segment count (a byte that is not ASCII is
    # never deleted; a regex costs more, the figure is in docs/benchmarks.md).
    if _b64.outside_alphabet(data) != b"..":
        raise InvalidRequestState("malformed", "the token is not three base64url segments joined by '.'")
    header, payload, signature = token.split(".")  # type: ignore[attr-defined]  # check_size: a str
    if not (header and payload and signature):
        raise InvalidRequestState("malformed", "a segment of the token is empty")
    return data, header, payload, signature


def read_object(raw: bytes, what: str) -> dict[str, Any]:
    """Steps 4 and 11: ``raw`` is one strict UTF-8 JSON object (:mod:`mrtr_state.token._json`).

    For both forms. ``what`` (``"header"`` or ``"payload"``) names it in the refusal's message.
    """
    try:
        value = _json.loads(raw, max_depth=_json.MAX_TEXT_DEPTH)
    except ValueError:
        raise InvalidRequestState("malformed", f"the {what} is not strict UTF-8 JSON") from None
    if not isinstance(value, dict):
        raise InvalidRequestState("malformed", f"the {what} is not a JSON object")
    return value


class Payload(NamedTuple):
    """The claims of a token (steps 1 to 11 passed), the JSON text they were read from, and what it is.

    What :func:`~mrtr_state.token._json.loads_written` vouched for while reading
    the text: ``written``, that it is byte for byte what writing ``claims`` as
    compact JSON gives (as this library seals them); ``numbers_as_written``,
    that at least its number literals are as writing spells them.
    """

    claims: dict[str, Any]
    text: bytes
    written: bool
    numbers_as_written: bool


def read_payload(raw: bytes, *, vouch: bool = False) -> Payload:
    """Step 11 (both forms): :func:`read_object` of the payload's text, with what reading it showed.

    With ``vouch``, the reader finds out whether the text is as writing gives it
    (:func:`~mrtr_state.token._json.loads_written`, at a Python call per float
    literal); without, ``written`` and ``numbers_as_written`` are ``False``.
    """
    try:
        value, written, numbers_as_written = _json.loads_written(
            raw, max_depth=_json.MAX_TEXT_DEPTH, vouch=vouch
        )
    except ValueError:
        raise InvalidRequestState("malformed", "the payload is not strict UTF-8 JSON") from None
    if not isinstance(value, dict):
        raise InvalidRequestState("malformed", "the payload is not a JSON object")
    # tuple.__new__: the NamedTuple's own __new__ is a Python function, a call more per token.
    return tuple.__new__(Payload, (value, raw, written, numbers_as_written))


def decode_header(segment: str) -> dict[str, Any]:
    """Step 4: the header is a strict UTF-8 JSON object."""
    # Profile 5, step 4: the header is strict JSON, a single object.
    return read_object(_b64.decode_checked(segment), "header")


def check_header(header: dict[str, Any]) -> None:
    """Steps 5 to 7, which need no key: allowlisted parameters, ``alg``, ``typ``."""
    # Profile 5, step 5: no header member other than alg, typ and kid.
    if not HEADER_PARAMETERS.issuperset(header):
        raise InvalidRequestState("unsupported_header", "the header has a parameter the profile forbids")
    # Profile 5, step 6: alg is HS256 or EdDSA.
    if header.get("alg") not in ALGORITHMS:
        raise InvalidRequestState("unsupported_header", "the header's alg is not HS256 or EdDSA")
    # Profile 5, step 7: typ is exactly mrtr-state+jwt, as a decoded string.
    if header.get("typ") != TYP:
        raise InvalidRequestState("wrong_type", f"the header's typ is not exactly {TYP!r}")


def key_for_header(header: dict[str, Any], ring: Keyring) -> Key:
    """Steps 5 to 9: :func:`check_header`, then ``kid`` and the key's algorithm."""
    check_header(header)
    alg = header["alg"]
    # Profile 5, step 8: kid is a string naming a key of the ring.
    kid = header.get("kid")
    key = ring.get(kid) if isinstance(kid, str) else None
    if key is None:
        raise InvalidRequestState("unknown_key", "the header's kid names no key in the ring")
    # Profile 5, step 9: the algorithm is pinned to the key, never chosen by the token.
    if key.alg != alg:
        raise InvalidRequestState("algorithm_mismatch", "the header's alg is not the algorithm of its key")
    return key


def verify_signature(key: Key, signing_input: bytes, signature: str) -> None:
    """Step 10: the signature has the algorithm's length and verifies under ``key``.

    ``signing_input`` is the token's bytes up to its second dot (header and payload segments).
    """
    # Profile 5, step 10: the signature's length, then it verifies (HS256 compared in constant time).
    raw = _b64.decode_checked(signature)
    if len(raw) != SIGNATURE_BYTES[key.alg] or not key.verify(signing_input, raw):
        raise InvalidRequestState("bad_signature", "the signature does not verify")


def decode_payload(segment: str) -> dict[str, Any]:
    """Step 11: the payload is a strict UTF-8 JSON object."""
    # Profile 5, step 11: the claims set is strict JSON (I-JSON, depth 33), a single object.
    return read_object(_b64.decode_checked(segment), "payload")


def verify(
    token: object, max_bytes: int, known: dict[str, Key], ring: Keyring, *, vouch: bool = False
) -> Payload:
    """Steps 1 to 11 of the signed form: the claims of a token whose signature verifies, and their text.

    The text is the payload's JSON the claims were read from; with ``vouch``,
    the reader also tells whether it is as writing gives it (:func:`read_payload`).

    ``known`` is :func:`known_headers` of ``ring``: a header segment found there
    names its key without being parsed, and is canonical by construction.
    """
    data, header, payload, signature = _segments(token, max_bytes)
    # Profile 5, step 3: each segment canonical unpadded base64url (a known header is).
    if not (_b64.is_canonical(payload) and _b64.is_canonical(signature)):
        raise not_canonical()
    key = known.get(header)
    if key is None:
        if not _b64.is_canonical(header):
            raise not_canonical()
        key = key_for_header(decode_header(header), ring)
    verify_signature(key, data[: len(header) + 1 + len(payload)], signature)
    # Profile 5, step 11: the claims set is strict JSON (I-JSON, depth 33), a single object.
    body = _b64.decode_checked(payload)
    return read_payload(body, vouch=vouch)


def verify_known(
    token: object, max_bytes: int, known: dict[str, Key], *, vouch: bool = False
) -> Payload | None:
    """Steps 1 to 11 for the common token, in fewer passes; ``None``: :func:`verify` decides.

    The common token is ASCII, under the cap, and has three segments of which
    the first is a header in ``known`` (:func:`verify` first, in
    :meth:`~mrtr_state.StateSealer.open`). Its dots are found with ``str.find`` (a
    memchr), the alphabet of the other two segments is checked by binascii's
    strict decoding of them (:func:`~mrtr_state.token._b64.decode_strict`, after
    three memchr passes for the ``+``, ``/`` and ``=`` it would take), where
    :func:`verify` deletes every alphabet byte of the whole token and splits it.
    Steps 1 to 9 hold then exactly as :func:`verify` checks them; a token that
    fails any of them returns ``None``, so that those refusals are :func:`verify`'s
    own. Steps 10 and 11 are :func:`verify`'s own code: the same refusals.
    """
    if type(token) is not str or len(token) > max_bytes or not token.isascii():
        return None
    first = token.find(".")
    key = known.get(token[:first]) if first > 0 else None
    if key is None:
        return None
    second = token.find(".", first + 1)
    if second < 0 or token.find(".", second + 1) >= 0 or "+" in token or "/" in token or "=" in token:
        return None
    payload, signature = token[first + 1 : second], token[second + 1 :]
    if not (payload and signature):
        return None
    # The alphabet first (strict decoding): is_canonical looks only at alphabet characters.
    body = _b64.decode_strict(payload)
    if body is None or _b64.decode_strict(signature) is None:
        return None
    if not (_b64.is_canonical(payload) and _b64.is_canonical(signature)):
        return None
    verify_signature(key, token[:second].encode("ascii"), signature)
    return read_payload(body, vouch=vouch)


def decode_unverified(token: object, *, max_bytes: int = 1 << 20) -> tuple[dict[str, Any], dict[str, Any]]:
    """Decode header and claims WITHOUT verifying anything: for inspection only.

    Nothing returned here may be trusted or acted on; use
    :meth:`mrtr_state.StateSealer.open` for that. Raises :class:`InvalidRequestState`
    (``too_large`` or ``malformed``) when the text is not a compact JWS at all.
    """
    header, payload, _ = split(token, max_bytes)
    return decode_header(header), decode_payload(payload)
