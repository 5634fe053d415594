"""The encrypted form: JWE compact serialization as the profile restricts it.

A token of the encrypted form (profile, section 3.6) is a JWE (RFC 7516) in
compact serialization with ``"alg": "dir"`` and ``"enc": "A256GCM"``: five
segments, the second (the encrypted key) empty, a 96-bit IV, the ciphertext of
the same claims JSON a signed token carries, and a 128-bit tag. The additional
authenticated data is the ASCII of the protected header segment (RFC 7516, 5.1
step 14), so the header cannot be changed either.

This layer implements the encrypted form's steps 1 to 10 (profile, section 5.1):
size, five segments with an empty encrypted-key segment, canonical base64url,
header JSON, header allowlist, ``alg`` and ``enc``, ``typ``, ``kid``, the key's
form, decryption; and step 11 on the decrypted claims. It knows nothing of the
claims themselves (:mod:`mrtr_state.token.claims`).
"""

from __future__ import annotations

import os
from typing import Any, Final

from mrtr_state.errors import InvalidRequestState
from mrtr_state.keys.keys import ENCRYPTION_ALGORITHM, A256GCMKey, Key, Keyring
from mrtr_state.token import _b64, _json
from mrtr_state.token.jws import (
    TYP,
    Payload,
    check_size,
    decode_header,
    not_canonical,
    read_object,
    read_payload,
)

__all__ = [
    "ALG",
    "ENC",
    "HEADER_PARAMETERS",
    "IV_BYTES",
    "SEGMENTS",
    "TAG_BYTES",
    "check_header",
    "decode_claims",
    "decrypt",
    "encrypt",
    "header_segment",
    "is_encrypted",
    "key_for_header",
    "known_headers",
    "open_claims",
    "open_known",
    "size",
    "split",
]

#: The key management algorithm of the encrypted form: the key is used directly.
ALG: Final = "dir"
#: The content encryption algorithm of the encrypted form.
ENC: Final = ENCRYPTION_ALGORITHM
#: The only protected header parameters an encrypted token may carry.
HEADER_PARAMETERS: Final = frozenset({"alg", "enc", "typ", "kid"})
#: The IV is 96 bits, the tag 128 bits (RFC 7518, section 5.3).
IV_BYTES: Final = 12
TAG_BYTES: Final = 16
#: The number of segments of a compact JWE.
SEGMENTS: Final = 5

# The encoded lengths of the IV and the tag, and the four dots and the empty key segment.
_FIXED_CHARS: Final = 4 + _b64.encoded_length(IV_BYTES) + _b64.encoded_length(TAG_BYTES)


def is_encrypted(token: object, max_bytes: int) -> bool:
    """Whether ``token`` has the shape of the encrypted form (four dots), cheaply.

    The length is looked at first, so an oversized input is never scanned; it then
    takes the signed form's path, whose step 1 refuses it as ``too_large``.
    """
    return type(token) is str and len(token) <= max_bytes and token.count(".") == SEGMENTS - 1


def header_segment(key: A256GCMKey) -> str:
    """The encoded protected header a minter emits: ``alg``, ``enc``, ``typ``, ``kid``."""
    return _b64.encode(_json.dumps({"alg": ALG, "enc": ENC, "typ": TYP, "kid": key.kid}))


def known_headers(ring: Keyring) -> dict[str, A256GCMKey]:
    """The exact protected header segments the ring's A256GCM keys mint with, and their keys."""
    return {header_segment(key): key for key in ring if isinstance(key, A256GCMKey)}


def size(header: str, plaintext_bytes: int) -> int:
    """The length of the token :func:`encrypt` makes from a plaintext of this many bytes."""
    return len(header) + _FIXED_CHARS + _b64.encoded_length(plaintext_bytes)


def encrypt(key: A256GCMKey, header: str, plaintext: bytes) -> str:
    """Return the compact JWE of ``plaintext`` under the encoded protected ``header``.

    The IV is 12 fresh bytes from the operating system's generator, always: an IV
    used twice with one key loses both confidentiality and integrity (profile,
    section 9.10), so no caller, test hook or injected entropy source chooses it.
    """
    iv = os.urandom(IV_BYTES)
    sealed = key.encrypt(iv, plaintext, header.encode("ascii"))
    ciphertext, tag = sealed[:-TAG_BYTES], sealed[-TAG_BYTES:]
    return f"{header}..{_b64.encode(iv)}.{_b64.encode(ciphertext)}.{_b64.encode(tag)}"


def split(token: object, max_bytes: int) -> tuple[str, str, str, str]:
    """Steps 1 to 3: size cap, five base64url segments (the second empty), each canonical.

    Returns the protected header, IV, ciphertext and tag segments.
    """
    # Profile 5.1, step 1: size, as step 1 of section 5, before any decoding.
    data = check_size(token, max_bytes)
    # Profile 5.1, step 2: five base64url segments, the second (encrypted key) empty, the others not.
    if _b64.outside_alphabet(data) != b"....":
        raise InvalidRequestState("malformed", "the token is not five base64url segments joined by '.'")
    header, encrypted_key, iv, ciphertext, tag = token.split(".")  # type: ignore[attr-defined]
    if encrypted_key:
        raise InvalidRequestState("malformed", "the encrypted key segment of the token is not empty")
    if not (header and iv and ciphertext and tag):
        raise InvalidRequestState("malformed", "a segment of the token is empty")
    # Profile 5.1, step 3: the four non-empty segments canonical.
    if not (
        _b64.is_canonical(header)
        and _b64.is_canonical(iv)
        and _b64.is_canonical(ciphertext)
        and _b64.is_canonical(tag)
    ):
        raise not_canonical()
    return header, iv, ciphertext, tag


def check_header(header: dict[str, Any]) -> None:
    """Steps 5 to 7, which need no key: allowlisted parameters, ``alg`` and ``enc``, ``typ``."""
    # Profile 5.1, step 5: no protected header member other than alg, enc, typ and kid.
    if not HEADER_PARAMETERS.issuperset(header):
        raise InvalidRequestState("unsupported_header", "the header has a parameter the profile forbids")
    # Profile 5.1, step 6: alg is dir and enc is A256GCM.
    if header.get("alg") != ALG or header.get("enc") != ENC:
        raise InvalidRequestState("unsupported_header", "the header's alg is not dir or its enc not A256GCM")
    # Profile 5.1, step 7: typ is exactly mrtr-state+jwt.
    if header.get("typ") != TYP:
        raise InvalidRequestState("wrong_type", f"the header's typ is not exactly {TYP!r}")


def key_for_header(header: dict[str, Any], ring: Keyring) -> A256GCMKey:
    """Steps 5 to 9: :func:`check_header`, then ``kid``, then the key is an encryption key."""
    check_header(header)
    # Profile 5.1, step 8: kid is a string naming a key of the ring.
    kid = header.get("kid")
    key: Key | None = ring.get(kid) if isinstance(kid, str) else None
    if key is None:
        raise InvalidRequestState("unknown_key", "the header's kid names no key in the ring")
    # Profile 5.1, step 9: that key is an encryption key.
    if not isinstance(key, A256GCMKey):
        raise InvalidRequestState(
            "algorithm_mismatch", "the header's kid names a signing key, not an A256GCM key"
        )
    return key


def decrypt(key: A256GCMKey, header: str, iv: str, ciphertext: str, tag: str) -> bytes:
    """Step 10: a 12-byte IV, a 16-byte tag, and the tag verifies; return the plaintext."""
    return _decrypt_raw(
        key, header, _b64.decode_checked(iv), _b64.decode_checked(ciphertext), _b64.decode_checked(tag)
    )


def _decrypt_raw(key: A256GCMKey, header: str, iv: bytes, ciphertext: bytes, tag: bytes) -> bytes:
    """:func:`decrypt` on the decoded IV, ciphertext and tag."""
    # Profile 5.1, step 10: IV and tag lengths, then AES-256-GCM with the header segment as the AAD.
    if len(iv) != IV_BYTES or len(tag) != TAG_BYTES:
        raise InvalidRequestState("bad_signature", "the token's IV or tag has the wrong length")
    plaintext = key.decrypt(iv, ciphertext + tag, header.encode("ascii"))
    if plaintext is None:
        raise InvalidRequestState("bad_signature", "the token's tag does not verify")
    return plaintext


def open_known(
    token: object, max_bytes: int, known: dict[str, A256GCMKey], *, vouch: bool = False
) -> Payload | None:
    """Steps 1 to 11 for the common encrypted token, in fewer passes; ``None``: :func:`open_claims` decides.

    The common token is ASCII, under the cap, and has five segments of which the
    first is a protected header in ``known`` and the second is empty. Its dots are
    found with ``str.find`` (a memchr), and the alphabet of the IV, ciphertext and
    tag is checked by binascii's strict decoding of them
    (:func:`~mrtr_state.token._b64.decode_strict`, after three memchr passes for
    the ``+``, ``/`` and ``=`` it would take), where :func:`is_encrypted` counts
    the dots of the whole token, :func:`split` deletes every alphabet byte and
    splits it. Steps 1 to 9 hold then exactly as :func:`open_claims` checks them;
    a token that fails any of them returns ``None``, so that those refusals are
    :func:`open_claims`' own. Steps 10 and 11 are :func:`open_claims`' own code:
    the same refusals.
    """
    if type(token) is not str or len(token) > max_bytes or not token.isascii():
        return None
    first = token.find(".")
    key = known.get(token[:first]) if first > 0 else None
    if key is None or token[first + 1 : first + 2] != ".":
        return None
    second = first + 1
    third = token.find(".", second + 1)
    fourth = token.find(".", third + 1) if third >= 0 else -1
    if fourth < 0 or token.find(".", fourth + 1) >= 0 or "+" in token or "/" in token or "=" in token:
        return None
    iv, ciphertext, tag = token[second + 1 : third], token[third + 1 : fourth], token[fourth + 1 :]
    if not (iv and ciphertext and tag):
        return None
    # The alphabet first (strict decoding): is_canonical looks only at alphabet characters.
    raw_iv, raw_ciphertext, raw_tag = (
        _b64.decode_strict(iv),
        _b64.decode_strict(ciphertext),
        _b64.decode_strict(tag),
    )
    if raw_iv is None or raw_ciphertext is None or raw_tag is None:
        return None
    if not (_b64.is_canonical(iv) and _b64.is_canonical(ciphertext) and _b64.is_canonical(tag)):
        return None
    plaintext = _decrypt_raw(key, token[:first], raw_iv, raw_ciphertext, raw_tag)
    # Profile 5.1, step 11: the plaintext is strict JSON as in step 11 of section 5.
    return read_payload(plaintext, vouch=vouch)


def open_claims(
    token: object, max_bytes: int, known: dict[str, A256GCMKey], ring: Keyring, *, vouch: bool = False
) -> Payload:
    """Steps 1 to 11 of the encrypted form (profile, section 5.1): the decrypted claims, and their text.

    The text is the decrypted JSON the claims were read from; with ``vouch``,
    the reader also tells whether it is as writing gives it (:func:`~mrtr_state.token.jws.read_payload`).

    ``known`` is :func:`known_headers` of ``ring``: a protected header found
    there names its key without being parsed.
    """
    header, iv, ciphertext, tag = split(token, max_bytes)
    # A protected header this ring mints with passes steps 4 to 9 by construction: its key is known.
    key = known.get(header)
    if key is None:
        # Profile 5.1, step 4: the protected header is a strict JSON object, as in step 4 of section 5.
        key = key_for_header(decode_header(header), ring)
    plaintext = decrypt(key, header, iv, ciphertext, tag)
    # Profile 5.1, step 11: the plaintext is strict JSON as in step 11 of section 5.
    return read_payload(plaintext, vouch=vouch)


def decode_claims(plaintext: bytes) -> dict[str, Any]:
    """Step 11: the decrypted claims are a strict UTF-8 JSON object."""
    # Profile 5.1, step 11: the plaintext is strict JSON as in step 11 of section 5.
    return read_object(plaintext, "payload")
