"""Keys and key rings (profile, section 7).

A :class:`Key` is one HS256 secret, one Ed25519 key pair (or its public half), or
one A256GCM encryption key of the encrypted form (profile, section 3.6), loaded
from a JWK (RFC 7517, RFC 8037) or generated. A :class:`Keyring` is an
ordered set of keys: the first one signs, every one verifies, each is found by its
``kid``. Keys and rings are immutable; rotation builds a new ring.

The cryptography itself is ``cryptography``'s: HMAC-SHA256 (HS256, keyed once
per key), Ed25519 key objects (EdDSA) and AES-GCM (the encrypted form); this
module adds the profile's rules on top: the
algorithm is a property of the key (never of a token), HS256 secrets have at
least 32 bytes, no ``oct`` secret is one byte or a short pattern repeated, an
encryption key shares its secret with no other key of its ring, an explicit
``kid`` is 1 to 128 printable ASCII characters (else the thumbprint of RFC 7638),
and no secret ever appears in a ``repr``, a message or a public JWKS. Each rule is
checked when a key or a ring is loaded, never when a token is checked.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar, Final, Literal

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.hmac import HMAC
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from mrtr_state.errors import KeyringError
from mrtr_state.keys._ed25519 import public_key_problem
from mrtr_state.token import _b64, _json

__all__ = [
    "ALGORITHMS",
    "DEFAULT_KEYS_VARIABLE",
    "ENCRYPTION_ALGORITHM",
    "KEY_ALGORITHMS",
    "MIN_SECRET_BYTES",
    "A256GCMKey",
    "Algorithm",
    "Key",
    "KeyAlgorithm",
    "Keyring",
]

#: The algorithms of the profile (section 3.1). ``Ed25519`` (RFC 9864) is not one.
Algorithm = Literal["HS256", "EdDSA"]
ALGORITHMS: Final[tuple[Algorithm, ...]] = ("HS256", "EdDSA")

#: The algorithm of an encryption key: the encrypted form's ``enc`` (profile, 3.6).
ENCRYPTION_ALGORITHM: Final = "A256GCM"
#: What a key's ``alg`` can be: a signing algorithm, or ``A256GCM`` for an encryption key.
KeyAlgorithm = Literal["HS256", "EdDSA", "A256GCM"]
KEY_ALGORITHMS: Final[tuple[KeyAlgorithm, ...]] = ("HS256", "EdDSA", "A256GCM")
#: The length of an A256GCM key, in bytes: exactly 256 bits (profile, section 7.6).
ENCRYPTION_KEY_BYTES: Final = 32

#: The shortest HS256 secret the profile allows, in bytes (section 7.1).
MIN_SECRET_BYTES: Final = 32

#: The environment variable :meth:`Keyring.from_env` reads by default.
DEFAULT_KEYS_VARIABLE: Final = "MRTR_STATE_KEYS"

#: Signature lengths in bytes, checked before any cryptography runs.
SIGNATURE_BYTES: Final[dict[str, int]] = {"HS256": 32, "EdDSA": 64}

_KEYGEN_ADVICE: Final = (
    "make one with `mrtr-state keygen --alg HS256` or "
    '`python -c "import secrets; print(secrets.token_urlsafe(32))"`'
)
_KID_PATTERN: Final = re.compile(r"[\x21-\x7e]{1,128}")


def _thumbprint(required: dict[str, str]) -> str:
    """RFC 7638: SHA-256 over the required members, sorted, without white space."""
    text = json.dumps(required, sort_keys=True, separators=(",", ":"))
    return _b64.encode(hashlib.sha256(text.encode("utf-8")).digest())


# A JWKS nests three levels ({"keys": [{...}]}); x5c and key_ops arrays add one.
_MAX_JWKS_DEPTH: Final = 8


def _parse_json(text: str, what: str) -> Any:
    """Parse operator-supplied JSON strictly (no duplicate members, bounded nesting)."""
    try:
        return _json.loads(text.encode("utf-8", "surrogatepass"), max_depth=_MAX_JWKS_DEPTH)
    except UnicodeError:
        raise KeyringError(f"{what} is not valid UTF-8 text") from None
    except json.JSONDecodeError as exc:  # its message gives a position, never the text
        raise KeyringError(f"{what} is not JSON: {exc.msg} at character {exc.pos}") from None
    except ValueError as exc:  # duplicate members, nesting, non-JSON numbers: fixed messages
        raise KeyringError(f"{what} is not strict JSON: {exc}") from None


def _check_kid(kid: object) -> str:
    """Profile 7.4: an explicit ``kid`` is 1 to 128 characters of U+0021..U+007E; others are refused."""
    if not isinstance(kid, str) or not _KID_PATTERN.fullmatch(kid):
        raise KeyringError("a kid must be 1 to 128 printable ASCII characters without spaces")
    return kid


def _jwk_kid(jwk: Mapping[str, Any]) -> str | None:
    """The JWK's explicit ``kid``, checked; ``None`` when the member is absent (the thumbprint is used).

    A ``kid`` member that is present is explicit whatever its value: ``null``, a
    number or an empty string is refused, never read as absent (profile, 7.4).
    """
    return _check_kid(jwk["kid"]) if "kid" in jwk else None


class Key:
    """One key of a :class:`Keyring`: an HS256 secret or an Ed25519 key.

    Make keys with :meth:`generate`, :meth:`from_jwk` or :meth:`from_secret`. A key
    is immutable and safe to share between threads; its ``repr`` shows the
    algorithm and ``kid``, never the secret.
    """

    __slots__ = ("_kid", "_private", "_public", "_secret")

    alg: ClassVar[KeyAlgorithm]
    _kid: str

    def __init__(self) -> None:
        raise TypeError("make a Key with Key.generate(), Key.from_jwk() or Key.from_secret()")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} objects are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} objects are immutable")

    def __repr__(self) -> str:
        return f"Key(alg={self.alg!r}, kid={self._kid!r}, can_sign={self.can_sign})"

    def __reduce__(self) -> Any:
        raise TypeError("keys are not pickled; store them as a JWKS with Keyring.private_jwks()")

    @property
    def kid(self) -> str:
        """The key id a token names in its ``kid`` header parameter."""
        return self._kid

    @property
    def can_sign(self) -> bool:
        """Whether this key can mint tokens (false for an Ed25519 public key)."""
        raise NotImplementedError

    @classmethod
    def generate(cls, alg: str, *, kid: str | None = None) -> Key:
        """Generate a new key of ``alg``: ``"HS256"``, ``"EdDSA"`` or ``"A256GCM"``.

        32 random bytes for HS256, a new key pair for EdDSA, 32 random bytes for an
        A256GCM encryption key (the encrypted form). ``kid`` defaults to the RFC 7638 thumbprint of the key.
        """
        if alg == "HS256":
            return HS256Key._make(os.urandom(MIN_SECRET_BYTES), kid)
        if alg == "EdDSA":
            return EdDSAKey._make(Ed25519PrivateKey.generate(), None, kid)
        if alg == ENCRYPTION_ALGORITHM:
            return A256GCMKey._make(os.urandom(ENCRYPTION_KEY_BYTES), kid)
        raise KeyringError(f"unsupported algorithm {alg!r}; the profile allows {', '.join(KEY_ALGORITHMS)}")

    @classmethod
    def from_secret(cls, secret: bytes, *, kid: str | None = None) -> Key:
        """Make an HS256 key from raw secret bytes: at least 32, not one byte or a short pattern repeated."""
        if not isinstance(secret, (bytes, bytearray)):
            raise TypeError(f"an HS256 secret is bytes, not {type(secret).__name__}")
        return HS256Key._make(bytes(secret), kid)

    @classmethod
    def from_jwk(cls, jwk: Mapping[str, Any] | str) -> Key:
        """Load one key from a JWK (a mapping or its JSON text).

        Accepted: ``{"kty": "oct", "k": ...}`` for HS256 (``k`` of at least 32 bytes),
        ``{"kty": "OKP", "crv": "Ed25519", "x": ..., "d": ...}`` for EdDSA (``d``
        absent for a verify-only public key), and ``{"kty": "oct", "alg": "A256GCM",
        "k": ...}`` for an encryption key (``k`` exactly 32 bytes; ``alg`` required).
        ``alg``, if present, must match; ``use``, if present, must be ``sig`` for a
        signing key and ``enc`` for an encryption key; ``kid`` defaults to the RFC
        7638 thumbprint. Base64url members must be canonical and unpadded.
        """
        if isinstance(jwk, str):
            jwk = _parse_json(jwk, "a JWK")
        if not isinstance(jwk, Mapping):
            raise KeyringError("a JWK must be a JSON object")
        kty = jwk.get("kty")
        if kty == "oct" and jwk.get("alg") == ENCRYPTION_ALGORITHM:
            return A256GCMKey._from_jwk(jwk)
        if jwk.get("use", "sig") != "sig":
            raise KeyringError(
                "a signing JWK must have use 'sig' (or no 'use' member); "
                "an encryption JWK has alg 'A256GCM' and use 'enc'"
            )
        kid = _jwk_kid(jwk)
        if kty == "oct":
            if jwk.get("alg", "HS256") != "HS256":
                raise KeyringError("an 'oct' JWK must be for alg HS256 (or A256GCM for an encryption key)")
            return HS256Key._make(_member_bytes(jwk, "k"), kid)
        if kty == "OKP":
            if jwk.get("crv") != "Ed25519":
                raise KeyringError("an 'OKP' JWK must be on curve Ed25519 (crv 'Ed25519')")
            if jwk.get("alg", "EdDSA") not in ("EdDSA", "Ed25519"):
                raise KeyringError("an Ed25519 JWK must be for alg EdDSA")
            x = _member_bytes(jwk, "x")
            if len(x) != 32:
                raise KeyringError("an Ed25519 JWK's 'x' must be 32 bytes")
            if "d" not in jwk:
                return EdDSAKey._make(None, x, kid)
            d = _member_bytes(jwk, "d")
            if len(d) != 32:
                raise KeyringError("an Ed25519 JWK's 'd' must be 32 bytes")
            return EdDSAKey._make(Ed25519PrivateKey.from_private_bytes(d), x, kid)
        # Only a registered key type is named: any other value is never shown, since a key
        # file's members can hold a secret pasted in the wrong place and a message reaches logs.
        named = repr(kty) if kty in ("RSA", "EC") else "(its 'kty' member)"
        raise KeyringError(
            f"unsupported JWK key type {named}; the profile uses 'oct' (HS256, A256GCM) and 'OKP' (Ed25519)"
        )

    def thumbprint(self) -> str:
        """The RFC 7638 JWK thumbprint (SHA-256, base64url) of this key."""
        raise NotImplementedError

    def public_jwk(self) -> dict[str, str]:
        """The public JWK of an Ed25519 key; an HS256 secret has none (KeyringError)."""
        raise NotImplementedError

    def private_jwk(self) -> dict[str, str]:
        """The full JWK, secret included, for storing the key. Handle it as a secret."""
        raise NotImplementedError

    def sign(self, message: bytes) -> bytes:
        """Sign ``message`` with this key's algorithm."""
        raise NotImplementedError

    def verify(self, message: bytes, signature: bytes) -> bool:
        """Tell whether ``signature`` is this key's signature of ``message``."""
        raise NotImplementedError


class _OctKey(Key):
    """The one shape of every ``oct`` key (HS256 and A256GCM alike).

    A secret ``k``, an RFC 7638 thumbprint over ``{"k", "kty"}``, never published,
    and one weak-secret rule (profile, 7.1). :class:`HS256Key` and :class:`A256GCMKey`
    differ only in what they do with the secret, the length they allow and the
    JWK's ``alg`` and ``use``.
    """

    __slots__ = ()
    _secret: bytes
    #: The JWK ``use`` of this kind of key (``sig`` or ``enc``).
    _use: ClassVar[str]
    #: What the key is, in messages ("an HS256 secret", ...).
    _what: ClassVar[str]

    @classmethod
    def _length_problem(cls, length: int) -> str | None:
        """Why a secret of ``length`` bytes cannot be this kind of key, or ``None``."""
        raise NotImplementedError

    @classmethod
    def _make(cls, secret: bytes, kid: str | None) -> _OctKey:
        problem = cls._length_problem(len(secret))
        if problem is not None:
            raise KeyringError(problem)
        # Profile 7.1: one rule for every oct secret, whatever form it came in.
        period = _repeat_period(secret)
        if period is not None:
            raise KeyringError(f"{cls._what} {_weak_secret(period)}, not random bytes; {_KEYGEN_ADVICE}")
        key = object.__new__(cls)
        object.__setattr__(key, "_secret", secret)
        object.__setattr__(key, "_kid", _check_kid(kid) if kid is not None else key.thumbprint())
        return key

    @property
    def can_sign(self) -> bool:
        """Always true: whoever holds an ``oct`` secret can mint tokens (sign or encrypt)."""
        return True

    def thumbprint(self) -> str:
        """The RFC 7638 thumbprint over ``{"k", "kty"}`` (profile, 7.4 and 7.6)."""
        return _thumbprint({"k": _b64.encode(self._secret), "kty": "oct"})

    def public_jwk(self) -> dict[str, str]:
        """Refuse: a secret is never published (profile, 7.5)."""
        raise KeyringError(f"key {self._kid!r} is {self._what}, which has no public JWK")

    def private_jwk(self) -> dict[str, str]:
        """The ``oct`` JWK with this key's ``alg`` and ``use`` and the secret in ``k``."""
        return {
            "kty": "oct",
            "alg": self.alg,
            "use": self._use,
            "kid": self._kid,
            "k": _b64.encode(self._secret),
        }

    def _same_secret(self, other: _OctKey) -> bool:
        """Whether ``other`` holds the same secret bytes (compared in constant time)."""
        return hmac.compare_digest(self._secret, other._secret)


class HS256Key(_OctKey):
    """An HS256 secret of at least 32 bytes (``kty: oct``)."""

    __slots__ = ("_mac",)
    alg: ClassVar[Algorithm] = "HS256"
    _use: ClassVar[str] = "sig"
    _what: ClassVar[str] = "an HS256 secret"
    #: HMAC-SHA256 keyed with the secret and fed nothing: never updated, only copied.
    _mac: HMAC

    @classmethod
    def _make(cls, secret: bytes, kid: str | None) -> _OctKey:
        key = super()._make(secret, kid)
        # The secret is hashed into HMAC's inner and outer pads once, here; every
        # sign and verify copies that state instead of keying HMAC again (RFC 2104,
        # section 4), a measurable part of a small state's open (docs/benchmarks.md).
        object.__setattr__(key, "_mac", HMAC(secret, SHA256()))
        return key

    @classmethod
    def _length_problem(cls, length: int) -> str | None:
        if length >= MIN_SECRET_BYTES:
            return None
        return (
            f"an HS256 secret must be at least {MIN_SECRET_BYTES} random bytes, "
            f"this one has {length}; {_KEYGEN_ADVICE}"
        )

    def sign(self, message: bytes) -> bytes:
        """HMAC-SHA256 of ``message`` (RFC 7518, section 3.2)."""
        mac = self._mac.copy()
        mac.update(message)
        return mac.finalize()

    def verify(self, message: bytes, signature: bytes) -> bool:
        """Compare in constant time with the HMAC-SHA256 of ``message``."""
        mac = self._mac.copy()
        mac.update(message)
        try:
            mac.verify(signature)  # constant time
        except InvalidSignature:
            return False
        return True


class EdDSAKey(Key):
    """An Ed25519 key pair, or its public half only (``kty: OKP``, ``crv: Ed25519``)."""

    __slots__ = ()
    alg: ClassVar[Algorithm] = "EdDSA"
    _private: Ed25519PrivateKey | None
    _public: Ed25519PublicKey

    @classmethod
    def _make(cls, private: Ed25519PrivateKey | None, x: bytes | None, kid: str | None) -> EdDSAKey:
        if private is not None:
            public = private.public_key()
            if x is not None and public.public_bytes(Encoding.Raw, PublicFormat.Raw) != x:
                raise KeyringError("an Ed25519 JWK's 'x' is not the public key of its 'd'")
        else:
            if x is None:
                raise KeyringError("an Ed25519 key needs its private or its public half")
            # Profile 7.2: a canonical point of large order, checked at load, so a
            # small-order key (which a constant signature verifies under) never enters a ring.
            problem = public_key_problem(x)
            if problem is not None:
                raise KeyringError(problem)
            try:
                public = Ed25519PublicKey.from_public_bytes(x)
            except ValueError:
                raise KeyringError("an Ed25519 JWK's 'x' is not a valid public key") from None
        key = object.__new__(cls)
        object.__setattr__(key, "_private", private)
        object.__setattr__(key, "_public", public)
        object.__setattr__(key, "_kid", _check_kid(kid) if kid is not None else key.thumbprint())
        return key

    @property
    def can_sign(self) -> bool:
        """Whether the private half is present."""
        return self._private is not None

    def _x(self) -> str:
        return _b64.encode(self._public.public_bytes(Encoding.Raw, PublicFormat.Raw))

    def thumbprint(self) -> str:
        """The RFC 7638 thumbprint over ``{"crv", "kty", "x"}``."""
        return _thumbprint({"crv": "Ed25519", "kty": "OKP", "x": self._x()})

    def public_jwk(self) -> dict[str, str]:
        """The public JWK: ``kty``, ``crv``, ``x``, ``kid``, ``alg``, ``use``."""
        return {
            "kty": "OKP",
            "crv": "Ed25519",
            "alg": "EdDSA",
            "use": "sig",
            "kid": self._kid,
            "x": self._x(),
        }

    def private_jwk(self) -> dict[str, str]:
        """The JWK with the private key in ``d`` (or the public JWK for a public key)."""
        jwk = self.public_jwk()
        if self._private is not None:
            jwk["d"] = _b64.encode(self._private.private_bytes_raw())
        return jwk

    def _secret_bytes(self) -> tuple[bytes, ...]:
        """The bytes no ``oct`` key of the ring may hold (profile, 7.6): ``x``, and ``d`` when present."""
        x = self._public.public_bytes(Encoding.Raw, PublicFormat.Raw)
        if self._private is None:
            return (x,)
        return (x, self._private.private_bytes_raw())

    def sign(self, message: bytes) -> bytes:
        """The Ed25519 signature of ``message``; a public key cannot sign (KeyringError)."""
        if self._private is None:
            raise KeyringError(f"key {self._kid!r} is an Ed25519 public key and cannot sign")
        return self._private.sign(message)

    def verify(self, message: bytes, signature: bytes) -> bool:
        """Verify an Ed25519 signature of ``message``."""
        # cryptography directly: PyJWT's OKPAlgorithm wrapper re-checks types on
        # every call, a measurable part of an EdDSA open (the figure is in
        # docs/benchmarks.md).
        try:
            self._public.verify(signature, message)
        except InvalidSignature:
            return False
        return True


class A256GCMKey(_OctKey):
    """A 256-bit AES-GCM key for the encrypted form (``kty: oct``, ``alg: A256GCM``).

    It mints and opens tokens of the encrypted form (profile, section 3.6): a JWE
    with ``"alg": "dir"`` and ``"enc": "A256GCM"``. It never signs or verifies a JWS,
    and it is never published: whoever holds it can read and mint tokens.
    """

    __slots__ = ("_aead",)
    alg: ClassVar[KeyAlgorithm] = "A256GCM"
    _use: ClassVar[str] = "enc"
    _what: ClassVar[str] = "an A256GCM encryption key"
    _aead: AESGCM

    @classmethod
    def _length_problem(cls, length: int) -> str | None:
        if length == ENCRYPTION_KEY_BYTES:
            return None
        return (
            f"an A256GCM key must be exactly {ENCRYPTION_KEY_BYTES} random bytes, this one has "
            f"{length}; make one with `mrtr-state keygen --alg A256GCM`"
        )

    @classmethod
    def _make(cls, secret: bytes, kid: str | None) -> A256GCMKey:
        key = super()._make(secret, kid)
        assert isinstance(key, A256GCMKey)  # noqa: S101  (cls is A256GCMKey)
        object.__setattr__(key, "_aead", AESGCM(secret))
        return key

    @classmethod
    def _from_jwk(cls, jwk: Mapping[str, Any]) -> A256GCMKey:
        """Load ``{"kty": "oct", "alg": "A256GCM", "use": "enc", "k": ..., "kid": ...}``."""
        if jwk.get("use", "enc") != "enc":
            raise KeyringError("an A256GCM JWK must have use 'enc' (or no 'use' member)")
        return cls._make(_member_bytes(jwk, "k"), _jwk_kid(jwk))

    def sign(self, message: bytes) -> bytes:
        """Refuse: an encryption key never signs a JWS (profile, section 9.10)."""
        raise KeyringError(f"key {self._kid!r} is an A256GCM encryption key and does not sign")

    def verify(self, message: bytes, signature: bytes) -> bool:
        """Always false: an encryption key never verifies a JWS."""
        return False

    def encrypt(self, iv: bytes, plaintext: bytes, aad: bytes) -> bytes:
        """AES-256-GCM: the ciphertext followed by the 16-byte tag."""
        return self._aead.encrypt(iv, plaintext, aad)

    def decrypt(self, iv: bytes, data: bytes, aad: bytes) -> bytes | None:
        """The plaintext of ``data`` (ciphertext then tag), or ``None`` if the tag does not verify."""
        try:
            return self._aead.decrypt(iv, data, aad)
        except InvalidTag:
            return None


def _member_bytes(jwk: Mapping[str, Any], name: str) -> bytes:
    value = jwk.get(name)
    if not isinstance(value, str):
        raise KeyringError(f"a JWK's {name!r} member must be a base64url string")
    try:
        return _b64.decode(value)
    except ValueError:
        raise KeyringError(f"a JWK's {name!r} member is not canonical unpadded base64url") from None


def _check_secrets_apart(keys: tuple[Key, ...]) -> None:
    """Profile 7.6 and 9.10: an encryption key holds a secret no other key of the ring holds.

    Whatever the kids: the thumbprint catches two keys of one secret only when
    both ids are thumbprints. Two HS256 keys of one secret are left alone (they
    serve one algorithm; the profile does not forbid them). The ``d`` and the
    ``x`` of an Ed25519 key count as secret bytes too (decision D4 of issue 32):
    no ``oct`` key (HS256 or encryption) may hold either, since an ``x`` is public
    and a ``d`` signs.
    """
    octs = [key for key in keys if isinstance(key, _OctKey)]
    for index, key in enumerate(octs):
        for other in octs[index + 1 :]:
            if (key.alg == ENCRYPTION_ALGORITHM or other.alg == ENCRYPTION_ALGORITHM) and key._same_secret(
                other
            ):
                raise KeyringError(
                    f"the keys {key.kid!r} and {other.kid!r} hold the same secret; an encryption key "
                    "must hold a secret of its own, never one that also signs or encrypts under "
                    "another kid (profile, 7.6): generate one with `mrtr-state keygen --alg A256GCM`"
                )
    for pair in keys:
        if not isinstance(pair, EdDSAKey):
            continue
        for key in octs:
            if any(hmac.compare_digest(key._secret, part) for part in pair._secret_bytes()):
                raise KeyringError(
                    f"the key {key.kid!r} holds the bytes of the Ed25519 key {pair.kid!r} (its 'd' or "
                    "its 'x') as its secret; an oct key must hold a secret of its own (profile, 7.6): "
                    f"generate one with `mrtr-state keygen --alg {key.alg}`"
                )


class Keyring:
    """An ordered, immutable set of keys: the first signs, every key verifies.

    Tokens name their key by ``kid``; a token whose ``kid`` is not in the ring is
    refused with ``unknown_key``. Rotation without downtime (profile, 7.3): publish
    a ring with the new key second, then first (:meth:`rotated`), then drop the old
    key once every token it signed has expired (:meth:`without`).
    """

    __slots__ = ("_by_kid", "_keys")

    _keys: tuple[Key, ...]
    _by_kid: dict[str, Key]

    def __init__(self, keys: Iterable[Key]) -> None:
        keys = tuple(keys)
        if not keys:
            raise KeyringError("a key ring needs at least one key")
        by_kid: dict[str, Key] = {}
        for key in keys:
            if not isinstance(key, Key):
                raise TypeError(f"a key ring holds Key objects, not {type(key).__name__}")
            if key.kid in by_kid:
                raise KeyringError(f"two keys in the ring have the kid {key.kid!r}")
            by_kid[key.kid] = key
        _check_secrets_apart(keys)
        object.__setattr__(self, "_keys", keys)
        object.__setattr__(self, "_by_kid", by_kid)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Keyring objects are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Keyring objects are immutable")

    def __repr__(self) -> str:
        return f"Keyring({list(self._keys)!r})"

    def __reduce__(self) -> Any:
        raise TypeError("key rings are not pickled; store them with Keyring.private_jwks()")

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[Key]:
        return iter(self._keys)

    def __contains__(self, kid: object) -> bool:
        return kid in self._by_kid

    @property
    def keys(self) -> tuple[Key, ...]:
        """The keys, signing key first."""
        return self._keys

    @property
    def signing_key(self) -> Key:
        """The first key, which signs; KeyringError for a verify-only ring."""
        key = self._keys[0]
        if not key.can_sign:
            raise KeyringError(
                "this key ring is verify-only: its first key is an Ed25519 public key; "
                "load the private JWKS to mint request state"
            )
        return key

    def get(self, kid: str) -> Key | None:
        """The key with this ``kid``, or ``None``."""
        return self._by_kid.get(kid)

    @classmethod
    def generate(cls, alg: str, *, kid: str | None = None) -> Keyring:
        """A ring of one newly generated key (``"HS256"``, ``"EdDSA"`` or ``"A256GCM"``)."""
        return cls([Key.generate(alg, kid=kid)])

    @classmethod
    def from_jwks(cls, jwks: Mapping[str, Any] | str) -> Keyring:
        """Load a JWKS (``{"keys": [...]}``, a mapping or its JSON text); first key signs."""
        if isinstance(jwks, str):
            jwks = _parse_json(jwks, "a JWKS")
        if not isinstance(jwks, Mapping) or not isinstance(jwks.get("keys"), list):
            raise KeyringError('a JWKS must be a JSON object with a "keys" array')
        return cls(Key.from_jwk(jwk) for jwk in jwks["keys"])

    @classmethod
    def from_env(
        cls, name: str = DEFAULT_KEYS_VARIABLE, *, environ: Mapping[str, str] | None = None
    ) -> Keyring:
        """Load keys from an environment variable (default ``MRTR_STATE_KEYS``).

        The value is a JWKS or a single JWK as JSON, or one HS256 secret written in
        base64 or base64url (padding optional) that decodes to at least 32 bytes.
        A secret that is one byte, or a pattern of at most 8 bytes, repeated is
        refused as obviously not random (profile, section 7.1), as it is in every
        other form of an ``oct`` key. An A256GCM
        encryption key comes as a JWK or in a JWKS (``"alg": "A256GCM"``); a bare
        secret is always an HS256 key.
        """
        env = os.environ if environ is None else environ
        value = env.get(name, "").strip()
        if not value:
            raise KeyringError(
                f"the environment variable {name} is not set: set it to a JWKS "
                "(`mrtr-state keygen --alg EdDSA`) or an HS256 secret of at least "
                f"{MIN_SECRET_BYTES} bytes ({_KEYGEN_ADVICE})"
            )
        if value.startswith("{"):
            document = _parse_json(value, f"the environment variable {name}")
            if isinstance(document, dict) and "keys" in document:
                return cls.from_jwks(document)
            return cls([Key.from_jwk(document)])
        secret = _secret_from_text(value, name)
        if len(secret) < MIN_SECRET_BYTES:
            raise KeyringError(
                f"the environment variable {name} holds a secret of {len(secret)} bytes; HS256 needs "
                f"at least {MIN_SECRET_BYTES} random bytes: {_KEYGEN_ADVICE}"
            )
        period = _repeat_period(secret)
        if period is not None:  # the rule every oct key applies, said with the variable's name
            raise KeyringError(
                f"the environment variable {name} holds a secret that {_weak_secret(period)}, "
                f"not random bytes; {_KEYGEN_ADVICE}"
            )
        return cls([Key.from_secret(secret)])

    def public_jwks(self) -> dict[str, list[dict[str, str]]]:
        """The JWKS of the Ed25519 public keys, for verify-only replicas.

        HS256 secrets and A256GCM encryption keys are secret and always left out.
        """
        return {"keys": [key.public_jwk() for key in self._keys if key.alg == "EdDSA"]}

    def private_jwks(self) -> dict[str, list[dict[str, str]]]:
        """The full JWKS, secrets included, for storing the ring. Handle it as a secret."""
        return {"keys": [key.private_jwk() for key in self._keys]}

    def rotated(self, key: Key) -> Keyring:
        """A new ring with ``key`` first (it signs from now on); the old keys still verify."""
        return Keyring((key, *self._keys))

    def without(self, kid: str) -> Keyring:
        """A new ring without the key ``kid``; tokens it signed stop opening."""
        if kid not in self._by_kid:
            raise KeyringError(f"the ring has no key {kid!r}")
        return Keyring(key for key in self._keys if key.kid != kid)


#: The longest repeated pattern refused in any ``oct`` secret (profile, 7.1).
_MAX_REFUSED_PERIOD: Final = 8


def _weak_secret(period: int) -> str:
    """The words for a secret of a short repeated pattern: never the secret itself."""
    return "is one byte repeated" if period == 1 else f"is a pattern of {period} bytes repeated"


def _repeat_period(secret: bytes) -> int | None:
    """The period of a secret that is a short pattern repeated (at most 8 bytes), else ``None``.

    A human-chosen secret cannot be told from a random one in general; these are
    the obvious placeholders (``aaaa...``, ``0000...``, ``abcabc...``), which no
    random source of 32 bytes yields in practice.
    """
    for period in range(1, _MAX_REFUSED_PERIOD + 1):
        if secret[period:] == secret[:-period]:
            return period
    return None


def _secret_from_text(value: str, name: str) -> bytes:
    text = value.rstrip("=")
    try:
        if re.fullmatch(r"[A-Za-z0-9_-]+", text):
            secret = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        elif re.fullmatch(r"[A-Za-z0-9+/]+", text):
            secret = base64.b64decode(text + "=" * (-len(text) % 4))
        else:
            raise ValueError
    except (ValueError, binascii.Error):
        raise KeyringError(
            f"the environment variable {name} is neither JSON nor a base64 secret; {_KEYGEN_ADVICE}"
        ) from None
    return secret
