"""What sealing and opening a ``requestState`` costs, next to what people would use instead.

Run it from the repository root (``scripts/bootstrap`` installs everything it needs):

    .venv/bin/python benchmarks/bench_open_seal.py            # about 3 minutes on 2 slow cores
    .venv/bin/python benchmarks/bench_open_seal.py --quick    # a rough look in about a minute

In one process and one run, for the same state at several sizes, it times:

- ``mrtr_state`` seal and open, HS256 and EdDSA, with and without the argument digest;
- ``mrtr_state``'s encrypted form (A256GCM, a JWE), with and without the argument
  digest, next to the SDK's own AES-GCM protection, which also encrypts;
- the floors: a bare HMAC-SHA256 over base64url JSON with the same bindings, written
  as rule AGT-18's own Python example writes it, and a bare Ed25519 sign/verify of
  the very bytes ``mrtr_state`` signs;
- PyJWT ``encode``/``decode_complete`` used directly with the same claim checks
  (issuer, subject, audience, expiry, required claims, ``typ``);
- joserfc ``jwt.encode``/``jwt.decode`` with a ``JWTClaimsRegistry`` making the same checks;
- itsdangerous's ``URLSafeTimedSerializer`` (HMAC-SHA256, ``max_age``), with the
  bindings in the payload and compared after loading;
- the official MCP Python SDK's own protection: ``RequestStateBoundary`` sealing and
  unsealing its claims envelope through ``AESGCMRequestStateCodec`` (expiry, method,
  target, argument digest, audience, principal), called directly, no server;
- refusals: a token one byte over the size cap, 9 KiB, 1 MiB and 16 MiB strings, and
  a token with a bad signature;
- where the time goes: the profile's own work inside ``seal`` and ``open`` (the state
  check, the strict JSON reading, the argument digest; internal functions, called
  directly) next to the peers' whole calls.

Method (``benchmarks/_harness.py``, shared with the MCP round benchmark): every
candidate of a table runs in the same rounds, in a fresh random order each round,
for a batch of about ``--batch-ms``; a row's time is the median over rounds, a ratio
the median of same-round ratios. The clock is the process's CPU time unless
``--clock wall``. The "±" column is half the interquartile range of the per-round
times, as a percentage of the median.

Nothing here special-cases ``mrtr_state``: it is called through its public API with
its default size cap, exactly as a server calls it (the "where the time goes" parts
only time pieces of that same call).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import logging
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import jwt as pyjwt
from _harness import (
    Candidate,
    add_run_options,
    by_label,
    describe_machine,
    finish,
    make_state,
    measure,
    median,
    method_line,
    print_table,
    ratio,
    table_json,
)
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from itsdangerous import URLSafeTimedSerializer
from joserfc import jwt as jose_jwt
from joserfc.jwk import OctKey, OKPKey
from mcp.server.request_state import (
    AESGCMRequestStateCodec,
    RequestStateBoundary,
    RequestStateSecurity,
)

from mrtr_state import InvalidRequestState, Key, Keyring, StateSealer
from mrtr_state.binding.canonical import arguments_digest
from mrtr_state.token import _json

ISSUER = "https://files.example.com"
USER = "alice"
TOOL = "deploy"
AUD = f"tools/call:{TOOL}"
ARGUMENTS = {"env": "prod", "branch": "release-1.2"}
# An hour, for every format, so that no token expires during a long run; a token's
# lifetime does not change what it costs to check.
TTL = 3600
CAP = 8192
LIBRARIES = ("mrtr-state", "pyjwt", "cryptography", "joserfc", "itsdangerous", "mcp")

# joserfc warns on every use of "EdDSA" (RFC 9864 prefers "Ed25519"); the profile
# mandates "EdDSA", and the warning would only add noise to the output.
warnings.filterwarnings("ignore", message="EdDSA is deprecated")
# The SDK logs every refusal; a refusal benchmark would flood the terminal.
logging.getLogger("mcp").setLevel(logging.CRITICAL)


# --------------------------------------------------------------------------- the floors


class BareHMAC:
    """Rule AGT-18's Python example, with the profile's bindings (iss, sub, aud, exp).

    This is the least a hand-rolled HS256 state can do: one HMAC, one base64, one
    ``json.loads``, four comparisons. It checks nothing else (no header, no strict
    JSON, no size cap), which is what makes it the floor.
    """

    def __init__(self, secret: bytes) -> None:
        self._key = secret

    def _sign(self, body: str) -> str:
        return base64.urlsafe_b64encode(hmac.new(self._key, body.encode(), hashlib.sha256).digest()).decode()

    def seal(self, state: Any, user: str, aud: str) -> str:
        claims = {"iss": ISSUER, "sub": user, "aud": aud, "exp": int(time.time()) + TTL, "state": state}
        body = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode()
        return f"{body}.{self._sign(body)}"

    def open(self, sealed: str, user: str, aud: str) -> Any:
        body, _, mac = sealed.partition(".")
        if not hmac.compare_digest(mac, self._sign(body)):
            return None
        claims = json.loads(base64.urlsafe_b64decode(body))
        ok = claims["iss"] == ISSUER and claims["sub"] == user and claims["aud"] == aud
        return claims["state"] if ok and claims["exp"] > time.time() else None


# --------------------------------------------------------------------------- the alternatives


def _jti() -> str:
    return base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode()


def _claims(state: Any) -> dict[str, Any]:
    now = int(time.time())
    return {
        "iss": ISSUER,
        "sub": USER,
        "aud": AUD,
        "iat": now,
        "exp": now + TTL,
        "jti": _jti(),
        "state": state,
    }


class PyJWTDirect:
    """PyJWT used directly: the same header, claims and checks (typ checked by hand)."""

    _REQUIRE = ("iss", "sub", "aud", "iat", "exp", "jti")

    def __init__(self, alg: str, signing_key: Any, verifying_key: Any, kid: str) -> None:
        self._alg, self._sk, self._vk = alg, signing_key, verifying_key
        self._headers = {"typ": "mrtr-state+jwt", "kid": kid}
        self._options: Any = {"require": list(self._REQUIRE), "strict_aud": True}

    def seal(self, state: Any) -> str:
        return pyjwt.encode(_claims(state), self._sk, algorithm=self._alg, headers=self._headers)

    def open(self, token: str) -> Any:
        decoded = pyjwt.decode_complete(
            token,
            self._vk,
            algorithms=[self._alg],
            options=self._options,
            issuer=ISSUER,
            audience=AUD,
            subject=USER,
        )
        if decoded["header"].get("typ") != "mrtr-state+jwt":
            raise ValueError("typ")
        return decoded["payload"]["state"]


class JoseRFC:
    """joserfc's JWT API with a claims registry making the same checks."""

    def __init__(self, alg: str, key: Any, kid: str) -> None:
        self._alg, self._key = alg, key
        self._header = {"alg": alg, "typ": "mrtr-state+jwt", "kid": kid}
        self._registry = jose_jwt.JWTClaimsRegistry(
            leeway=0,
            iss={"essential": True, "value": ISSUER},
            sub={"essential": True, "value": USER},
            aud={"essential": True, "value": AUD},
            iat={"essential": True},
            exp={"essential": True},
            jti={"essential": True},
        )

    def seal(self, state: Any) -> str:
        return jose_jwt.encode(self._header, _claims(state), self._key, algorithms=[self._alg])

    def open(self, token: str) -> Any:
        decoded = jose_jwt.decode(token, self._key, algorithms=[self._alg])
        if decoded.header.get("typ") != "mrtr-state+jwt":
            raise ValueError("typ")
        self._registry.validate(decoded.claims)
        return decoded.claims["state"]


class ItsDangerous:
    """itsdangerous's timed serializer, HMAC-SHA256, bindings in the payload."""

    def __init__(self, secret: bytes) -> None:
        self._s = URLSafeTimedSerializer(
            secret, salt="mrtr-state-bench", signer_kwargs={"digest_method": hashlib.sha256}
        )

    def seal(self, state: Any) -> str:
        return self._s.dumps({"iss": ISSUER, "sub": USER, "aud": AUD, "state": state})

    def open(self, token: str) -> Any:
        claims = self._s.loads(token, max_age=TTL)
        if claims["iss"] != ISSUER or claims["sub"] != USER or claims["aud"] != AUD:
            raise ValueError("binding")
        return claims["state"]


class SDKBoundary:
    """The MCP Python SDK's ``requestState`` protection, as its middleware runs it.

    ``RequestStateBoundary._seal`` and ``._unseal`` are what the middleware calls on
    every ``input_required`` result and every retry: the claims envelope (version,
    iat, exp, method, target, argument digest, audience, salted principal hash)
    sealed with AES-256-GCM by ``AESGCMRequestStateCodec``. They are private
    methods; calling them directly measures the protection without a server. The
    SDK carries the state as a string, so the state is JSON-encoded on seal and
    decoded on open to return the same value as the others.
    """

    def __init__(self, secret: bytes) -> None:
        security = RequestStateSecurity(
            keys=[secret], ttl=TTL, bind_principal=lambda ctx: USER, audience=ISSUER
        )
        if not isinstance(security.codec, AESGCMRequestStateCodec):
            raise SystemExit("bench: the SDK did not pick its built-in AES-GCM codec")
        self.codec = security.codec
        self._boundary = RequestStateBoundary(security, default_audience=None)

    @staticmethod
    def _ctx(token: str | None) -> Any:
        params = {"name": TOOL, "arguments": ARGUMENTS, "requestState": token}
        return SimpleNamespace(method="tools/call", params=params)

    def seal(self, state: Any) -> str:
        return self._boundary._seal(self._ctx(None), json.dumps(state, separators=(",", ":")))

    def open(self, token: str) -> Any:
        inner, _binding = self._boundary._unseal(self._ctx(token))
        return json.loads(inner)


# --------------------------------------------------------------------------- the run


@dataclass
class Setup:
    hs: StateSealer
    ed: StateSealer
    ed_private: Ed25519PrivateKey
    floor: BareHMAC
    pyjwt_hs: PyJWTDirect
    pyjwt_ed: PyJWTDirect
    jose_hs: JoseRFC
    jose_ed: JoseRFC
    dangerous: ItsDangerous
    sdk: SDKBoundary
    enc: StateSealer


def fixed_secret(name: str) -> bytes:
    """32 bytes that are the same in every run and look random, as a real key does.

    Not ``bytes(range(32))``: PyJWT's check that an HMAC key is no PEM or SSH key reads
    such bytes longer (37k more instructions per call at 200 B).
    """
    return hashlib.sha256(f"mrtr-state counted benchmark: {name}".encode()).digest()


def make_setup(*, fixed: bool = False) -> Setup:
    """The keys, sealers and peers of every candidate; ``fixed``: the same keys and ``jti`` every run.

    ``bench_counted.py`` asks for ``fixed``: an instruction count depends on the bytes
    read (a ``jti`` holding ``e`` and three digits sends the strict reader to its number
    hooks, and OpenSSL's Ed25519 verification takes a count that depends on the key and
    the signature), so random keys and ``jti`` made one run's count differ from the
    next (once by 15% on one row). The A256GCM IV stays random (no caller chooses it).
    """
    secret = fixed_secret("HS256") if fixed else os.urandom(32)
    ed_private = (
        Ed25519PrivateKey.from_private_bytes(fixed_secret("Ed25519"))
        if fixed
        else Ed25519PrivateKey.generate()
    )
    hs_key = Key.from_secret(secret)
    ed_key = Key.from_jwk(
        {
            "kty": "OKP",
            "crv": "Ed25519",
            "x": _b64(ed_private.public_key().public_bytes_raw()),
            "d": _b64(ed_private.private_bytes_raw()),
        }
    )

    def sealer(key: Key) -> StateSealer:
        return StateSealer(
            Keyring([key]),
            issuer=ISSUER,
            ttl=TTL,
            max_lifetime=TTL,
            max_token_bytes=CAP,
            entropy=bytes if fixed else os.urandom,  # bytes(n): n zero bytes, as cheap a call
        )

    enc_key = (
        Key.from_jwk({"kty": "oct", "alg": "A256GCM", "k": _b64(fixed_secret("A256GCM"))})
        if fixed
        else Key.generate("A256GCM")
    )

    return Setup(
        hs=sealer(hs_key),
        ed=sealer(ed_key),
        ed_private=ed_private,
        floor=BareHMAC(secret),
        pyjwt_hs=PyJWTDirect("HS256", secret, secret, hs_key.kid),
        pyjwt_ed=PyJWTDirect("EdDSA", ed_private, ed_private.public_key(), ed_key.kid),
        jose_hs=JoseRFC("HS256", OctKey.import_key(secret), hs_key.kid),
        jose_ed=JoseRFC("EdDSA", OKPKey.import_key(ed_private), ed_key.kid),
        dangerous=ItsDangerous(secret),
        sdk=SDKBoundary(secret),
        enc=sealer(enc_key),
    )


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _signing_input(token: str) -> tuple[bytes, bytes]:
    head, payload, sig = token.split(".")
    return f"{head}.{payload}".encode(), base64.urlsafe_b64decode(sig + "==")


FLOOR_HS = "bare HMAC-SHA256, rule AGT-18 example (floor)"
FLOOR_ED_VERIFY = "bare Ed25519 verify (floor)"
FLOOR_ED_SIGN = "bare Ed25519 sign (floor)"
MRTR_HS = "mrtr_state HS256"
MRTR_HS_ARGS = "mrtr_state HS256 + argument digest"
MRTR_ED = "mrtr_state EdDSA"
MRTR_ED_ARGS = "mrtr_state EdDSA + argument digest"
PYJWT_HS = "pyjwt HS256"
PYJWT_ED = "pyjwt EdDSA"
JOSE_HS = "joserfc HS256"
JOSE_ED = "joserfc EdDSA"
DANGEROUS = "itsdangerous URLSafeTimedSerializer SHA-256"
SDK = "MCP SDK RequestStateBoundary (AES-GCM)"
MRTR_ENC = "mrtr_state A256GCM (encrypted)"
MRTR_ENC_ARGS = "mrtr_state A256GCM + argument digest"


def open_candidates(s: Setup, state: Any) -> list[Candidate]:
    """Every way of opening the same state, each given a token it minted, checked before timing."""
    hs_tok = s.hs.seal(state, user=USER, tool=TOOL)
    hs_args_tok = s.hs.seal(state, user=USER, tool=TOOL, arguments=ARGUMENTS)
    ed_tok = s.ed.seal(state, user=USER, tool=TOOL)
    ed_args_tok = s.ed.seal(state, user=USER, tool=TOOL, arguments=ARGUMENTS)
    floor_tok = s.floor.seal(state, USER, AUD)
    ed_msg, ed_sig = _signing_input(ed_tok)
    ed_public = s.ed_private.public_key()
    d_tok = s.dangerous.seal(state)
    sdk_tok = s.sdk.seal(state)

    def ed_verify() -> None:
        ed_public.verify(ed_sig, ed_msg)

    cands = [
        Candidate(FLOOR_HS, lambda: s.floor.open(floor_tok, USER, AUD), FLOOR_HS, MRTR_HS, len(floor_tok)),
        Candidate(MRTR_HS, lambda: s.hs.open(hs_tok, user=USER, tool=TOOL), FLOOR_HS, MRTR_HS, len(hs_tok)),
        Candidate(
            MRTR_HS_ARGS,
            lambda: s.hs.open(hs_args_tok, user=USER, tool=TOOL, arguments=ARGUMENTS),
            FLOOR_HS,
            MRTR_HS_ARGS,
            len(hs_args_tok),
        ),
        # PyJWT and joserfc open the very token mrtr_state minted: it is a standard JWT.
        Candidate(PYJWT_HS, lambda: s.pyjwt_hs.open(hs_tok), FLOOR_HS, MRTR_HS, len(hs_tok)),
        Candidate(JOSE_HS, lambda: s.jose_hs.open(hs_tok), FLOOR_HS, MRTR_HS, len(hs_tok)),
        Candidate(DANGEROUS, lambda: s.dangerous.open(d_tok), FLOOR_HS, MRTR_HS, len(d_tok)),
        # The SDK always binds the arguments: compare it with mrtr_state doing so too.
        Candidate(SDK, lambda: s.sdk.open(sdk_tok), FLOOR_HS, MRTR_HS_ARGS, len(sdk_tok)),
        Candidate(FLOOR_ED_VERIFY, ed_verify, FLOOR_ED_VERIFY, MRTR_ED, len(ed_tok)),
        Candidate(
            MRTR_ED, lambda: s.ed.open(ed_tok, user=USER, tool=TOOL), FLOOR_ED_VERIFY, MRTR_ED, len(ed_tok)
        ),
        Candidate(
            MRTR_ED_ARGS,
            lambda: s.ed.open(ed_args_tok, user=USER, tool=TOOL, arguments=ARGUMENTS),
            FLOOR_ED_VERIFY,
            MRTR_ED_ARGS,
            len(ed_args_tok),
        ),
        Candidate(PYJWT_ED, lambda: s.pyjwt_ed.open(ed_tok), FLOOR_ED_VERIFY, MRTR_ED, len(ed_tok)),
        Candidate(JOSE_ED, lambda: s.jose_ed.open(ed_tok), FLOOR_ED_VERIFY, MRTR_ED, len(ed_tok)),
        *_encrypted_open(s, state),
    ]
    for c in cands:
        if c.label == FLOOR_ED_VERIFY:
            c.fn()  # raises InvalidSignature if the bytes were wrong
            continue
        got = c.fn()
        if got != state:
            raise SystemExit(f"bench: {c.label} did not return the sealed state; refusing to time it")
    return cands


def _encrypted_open(s: Setup, state: Any) -> list[Candidate]:
    """Opening the encrypted form: compared with the HS256 floor and the signed HS256 rows."""
    tok = s.enc.seal(state, user=USER, tool=TOOL)
    args_tok = s.enc.seal(state, user=USER, tool=TOOL, arguments=ARGUMENTS)
    return [
        Candidate(MRTR_ENC, lambda: s.enc.open(tok, user=USER, tool=TOOL), FLOOR_HS, MRTR_HS, len(tok)),
        Candidate(
            MRTR_ENC_ARGS,
            lambda: s.enc.open(args_tok, user=USER, tool=TOOL, arguments=ARGUMENTS),
            FLOOR_HS,
            MRTR_HS_ARGS,
            len(args_tok),
        ),
    ]


def seal_candidates(s: Setup, state: Any) -> list[Candidate]:
    """Every way of sealing the same state, with its token length (checked to open)."""
    ed_msg, _ = _signing_input(s.ed.seal(state, user=USER, tool=TOOL))
    ed_private = s.ed_private

    def ed_sign() -> bytes:
        return ed_private.sign(ed_msg)

    cands = [
        Candidate(FLOOR_HS, lambda: s.floor.seal(state, USER, AUD), FLOOR_HS, MRTR_HS),
        Candidate(MRTR_HS, lambda: s.hs.seal(state, user=USER, tool=TOOL), FLOOR_HS, MRTR_HS),
        Candidate(
            MRTR_HS_ARGS,
            lambda: s.hs.seal(state, user=USER, tool=TOOL, arguments=ARGUMENTS),
            FLOOR_HS,
            MRTR_HS_ARGS,
        ),
        Candidate(PYJWT_HS, lambda: s.pyjwt_hs.seal(state), FLOOR_HS, MRTR_HS),
        Candidate(JOSE_HS, lambda: s.jose_hs.seal(state), FLOOR_HS, MRTR_HS),
        Candidate(DANGEROUS, lambda: s.dangerous.seal(state), FLOOR_HS, MRTR_HS),
        Candidate(SDK, lambda: s.sdk.seal(state), FLOOR_HS, MRTR_HS_ARGS),
        Candidate(FLOOR_ED_SIGN, ed_sign, FLOOR_ED_SIGN, MRTR_ED),
        Candidate(MRTR_ED, lambda: s.ed.seal(state, user=USER, tool=TOOL), FLOOR_ED_SIGN, MRTR_ED),
        Candidate(
            MRTR_ED_ARGS,
            lambda: s.ed.seal(state, user=USER, tool=TOOL, arguments=ARGUMENTS),
            FLOOR_ED_SIGN,
            MRTR_ED_ARGS,
        ),
        Candidate(PYJWT_ED, lambda: s.pyjwt_ed.seal(state), FLOOR_ED_SIGN, MRTR_ED),
        Candidate(JOSE_ED, lambda: s.jose_ed.seal(state), FLOOR_ED_SIGN, MRTR_ED),
        Candidate(MRTR_ENC, lambda: s.enc.seal(state, user=USER, tool=TOOL), FLOOR_HS, MRTR_HS),
        Candidate(
            MRTR_ENC_ARGS,
            lambda: s.enc.seal(state, user=USER, tool=TOOL, arguments=ARGUMENTS),
            FLOOR_HS,
            MRTR_HS_ARGS,
        ),
    ]
    openers: dict[str, Callable[[str], Any]] = {
        FLOOR_HS: lambda t: s.floor.open(t, USER, AUD),
        MRTR_HS: lambda t: s.hs.open(t, user=USER, tool=TOOL),
        MRTR_HS_ARGS: lambda t: s.hs.open(t, user=USER, tool=TOOL, arguments=ARGUMENTS),
        PYJWT_HS: s.pyjwt_hs.open,
        JOSE_HS: s.jose_hs.open,
        DANGEROUS: s.dangerous.open,
        SDK: s.sdk.open,
        MRTR_ED: lambda t: s.ed.open(t, user=USER, tool=TOOL),
        MRTR_ED_ARGS: lambda t: s.ed.open(t, user=USER, tool=TOOL, arguments=ARGUMENTS),
        PYJWT_ED: s.pyjwt_ed.open,
        JOSE_ED: s.jose_ed.open,
        MRTR_ENC: lambda t: s.enc.open(t, user=USER, tool=TOOL),
        MRTR_ENC_ARGS: lambda t: s.enc.open(t, user=USER, tool=TOOL, arguments=ARGUMENTS),
    }
    for c in cands:
        token = c.fn()
        if isinstance(token, bytes):  # the bare Ed25519 signature
            s.ed_private.public_key().verify(token, ed_msg)
            continue
        if not isinstance(token, str) or openers[c.label](token) != state:
            raise SystemExit(f"bench: a token sealed by {c.label} does not open; refusing to time it")
        c.token = len(token)
    return cands


MRTR_TOO_LARGE = "mrtr_state too_large: "
OVERSIZED = {"one byte over the cap": CAP + 1, "9 KiB": 9 << 10, "1 MiB": 1 << 20, "16 MiB": 16 << 20}


def refusal_candidates(s: Setup, state: Any) -> list[Candidate]:
    """Refusals: oversized inputs of growing size, and a bad signature; each must raise."""
    hs_tok = s.hs.seal(state, user=USER, tool=TOOL)
    ed_tok = s.ed.seal(state, user=USER, tool=TOOL)
    head = hs_tok.split(".")[0]

    def oversized(n: int) -> str:
        # Token-shaped: a real header, a payload of n characters, a signature.
        return f"{head}.{'A' * (n - len(head) - 45)}.{'A' * 43}"

    inputs = {name: oversized(n) for name, n in OVERSIZED.items()}
    # A bad signature of the right length and canonical form: the first signature
    # character changed (it carries 6 data bits, so any alphabet character is canonical).
    hs_bad = _flip_signature(hs_tok)
    ed_bad = _flip_signature(ed_tok)

    def refused(opener: Callable[[str], Any], token: str, reason: str) -> Callable[[], object]:
        def run() -> object:
            try:
                opener(token)
            except InvalidRequestState as exc:
                if exc.reason != reason:
                    raise
                return exc
            raise AssertionError("not refused")

        return run

    def refused_by_any(opener: Callable[[str], Any], token: str) -> Callable[[], object]:
        def run() -> object:
            try:
                opener(token)
            except Exception as exc:  # each library has its own error types
                return exc
            raise AssertionError("not refused")

        return run

    def hs_open(token: str) -> Any:
        return s.hs.open(token, user=USER, tool=TOOL)

    def ed_open(token: str) -> Any:
        return s.ed.open(token, user=USER, tool=TOOL)

    cands = [Candidate(f"mrtr_state HS256, valid token ({len(hs_tok)} B)", lambda: hs_open(hs_tok))]
    for name, text in inputs.items():
        cands.append(Candidate(f"{MRTR_TOO_LARGE}{name}", refused(hs_open, text, "too_large")))
    cands += [
        Candidate("mrtr_state HS256, bad_signature", refused(hs_open, hs_bad, "bad_signature")),
        Candidate("mrtr_state EdDSA, bad_signature", refused(ed_open, ed_bad, "bad_signature")),
        # The alternatives, for context: none has this size cap before decoding.
        Candidate("pyjwt HS256, 9 KiB", refused_by_any(s.pyjwt_hs.open, inputs["9 KiB"])),
        Candidate("pyjwt HS256, 1 MiB", refused_by_any(s.pyjwt_hs.open, inputs["1 MiB"])),
        Candidate("joserfc HS256, 1 MiB", refused_by_any(s.jose_hs.open, inputs["1 MiB"])),
        Candidate("MCP SDK codec, 9 KiB", refused_by_any(s.sdk.codec.unseal, "v1." + inputs["9 KiB"][3:])),
        Candidate("MCP SDK codec, 1 MiB", refused_by_any(s.sdk.codec.unseal, "v1." + inputs["1 MiB"][3:])),
        Candidate("pyjwt HS256, bad signature", refused_by_any(s.pyjwt_hs.open, hs_bad)),
    ]
    for c in cands:
        c.fn()  # a refusal that does not happen (or has another reason) stops the run here
    return cands


def _flip_signature(token: str) -> str:
    head, payload, sig = token.split(".")
    first = "B" if sig[0] != "B" else "C"
    return f"{head}.{payload}.{first}{sig[1:]}"


def largest_state_size(s: Setup) -> int:
    """The largest state (JSON bytes) for which every mrtr_state variant stays within the cap."""
    low, high = 200, CAP
    while high - low > 1:
        mid = (low + high) // 2
        try:
            s.ed.seal(make_state(mid), user=USER, tool=TOOL, arguments=ARGUMENTS)
            low = mid
        except ValueError:
            high = mid
    return low


# --------------------------------------------------------------------------- targets

# (target, the mrtr_state row, the row it is compared with, "open" or "seal", the limit)
RATIO_TARGETS = [
    ("HS256 open <= 1.5x the bare HMAC floor", MRTR_HS, FLOOR_HS, "open", 1.5),
    ("HS256 open faster than pyjwt decode", MRTR_HS, PYJWT_HS, "open", 1.0),
    ("A256GCM open (+ args) no slower than the MCP SDK", MRTR_ENC_ARGS, SDK, "open", 1.0),
    ("A256GCM seal (+ args) no slower than the MCP SDK", MRTR_ENC_ARGS, SDK, "seal", 1.0),
    ("EdDSA open <= 1.1x a bare Ed25519 verify", MRTR_ED, FLOOR_ED_VERIFY, "open", 1.1),
    ("HS256 seal <= 1.5x the bare HMAC seal", MRTR_HS, FLOOR_HS, "seal", 1.5),
    ("EdDSA seal <= 1.25x a bare Ed25519 sign", MRTR_ED, FLOOR_ED_SIGN, "seal", 1.25),
    # Issue 16: HS256 with the argument digest no slower than any peer, open and seal.
    ("HS256 open (+ args) <= the MCP SDK", MRTR_HS_ARGS, SDK, "open", 1.0),
    ("HS256 open (+ args) <= pyjwt", MRTR_HS_ARGS, PYJWT_HS, "open", 1.0),
    ("HS256 open (+ args) <= joserfc", MRTR_HS_ARGS, JOSE_HS, "open", 1.0),
    ("HS256 seal (+ args) <= the MCP SDK", MRTR_HS_ARGS, SDK, "seal", 1.0),
    ("HS256 seal (+ args) <= pyjwt", MRTR_HS_ARGS, PYJWT_HS, "seal", 1.0),
    ("HS256 seal (+ args) <= joserfc", MRTR_HS_ARGS, JOSE_HS, "seal", 1.0),
]


def ratio_targets(tables: dict[str, dict[str, list[Candidate]]]) -> list[dict[str, Any]]:
    """Every ratio target at every state size: the measured ratio and whether it is met."""
    results = []
    for name, row, other, op, limit in RATIO_TARGETS:
        for size_name, ops in tables.items():
            rows = by_label(ops[op])
            value = ratio(rows[row], rows[other])
            results.append({"target": name, "state": size_name, "ratio": value, "met": value <= limit})
    return results


def print_targets(results: list[dict[str, Any]], size_names: list[str], small_seal: list[Candidate]) -> bool:
    print("\n== targets (the ratio is the median of same-round ratios)")
    print(f"  {'target':<46}" + "".join(f"{n:>18}" for n in size_names))
    met_all = True
    for name, *_ in RATIO_TARGETS:
        cells = []
        for size_name in size_names:
            (r,) = [r for r in results if r["target"] == name and r["state"] == size_name]
            met_all &= r["met"]
            cells.append(f"{'met' if r['met'] else 'NOT MET'} {r['ratio']:.2f}x")
        print(f"  {name:<46}" + "".join(f"{c:>18}" for c in cells))
    rows = by_label(small_seal)
    mrtr, mrtr_args, sdk = rows[MRTR_HS].token, rows[MRTR_HS_ARGS].token, rows[SDK].token
    length_met = mrtr_args is not None and sdk is not None and mrtr_args <= sdk
    met_all &= length_met
    print(
        f"  {'small-state token no longer than the SDK blob':<46}"
        f"{'met' if length_met else 'NOT MET':>18}: mrtr_state {mrtr_args} B with the argument digest "
        f"({mrtr} B without), the SDK {sdk} B (it always binds the arguments)"
    )
    return met_all


#: The r squared above which a row counts as growing linearly with the state's size.
LINEAR_R2 = 0.95


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least squares y = a + b x; returns (b, r squared)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    b = sxy / sxx
    a = my - b * mx
    ss_res = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys, strict=True))
    ss_tot = sum((y - my) ** 2 for y in ys)
    return b, 1 - ss_res / ss_tot


def token_lengths(s: Setup, sizes: Sequence[int]) -> dict[str, list[int]]:
    """Print and return the token length of every format at every state size (no timing)."""
    formats: dict[str, Callable[[Any], str]] = {
        FLOOR_HS: lambda state: s.floor.seal(state, USER, AUD),
        MRTR_HS: lambda state: s.hs.seal(state, user=USER, tool=TOOL),
        MRTR_HS_ARGS: lambda state: s.hs.seal(state, user=USER, tool=TOOL, arguments=ARGUMENTS),
        MRTR_ED: lambda state: s.ed.seal(state, user=USER, tool=TOOL),
        MRTR_ENC_ARGS: lambda state: s.enc.seal(state, user=USER, tool=TOOL, arguments=ARGUMENTS),
        DANGEROUS: s.dangerous.seal,
        SDK: s.sdk.seal,
    }
    lengths = {label: [len(seal(make_state(n))) for n in sizes] for label, seal in formats.items()}
    print("\n== token length in bytes by state size (pyjwt and joserfc: as mrtr_state, same claims)")
    print(f"  {'':<52}" + "".join(f"{n:>8}" for n in sizes))
    for label, row in lengths.items():
        print(f"  {label:<52}" + "".join(f"{n:>8}" for n in row))
    return lengths


# --------------------------------------------------------------------------- where the time goes

PART_SEAL = "seal: mrtr_state HS256 + argument digest"
PART_CHECK = "  its check of the state (check_state)"
PART_DIGEST = "  its argument digest (RFC 8785, SHA-256)"
PART_OPEN = "open: mrtr_state HS256 + argument digest"
PART_STRICT = "  its strict JSON reading of the payload"
PART_LOADS = "  json.loads of the same payload (what the peers run)"


def part_candidates(s: Setup, state: Any) -> list[Candidate]:
    """The profile's own work inside ``seal`` and ``open``, next to the peers' whole calls.

    The peers write and read the claims with ``json`` and check no more; what
    ``mrtr_state`` adds is the state check on ``seal`` (profile 3.3), the strict
    reading on ``open`` (steps 4 and 11: duplicate members, nesting, number
    ranges, escaped surrogates) and the argument digest on both (section 3.4).
    """
    token = s.hs.seal(state, user=USER, tool=TOOL, arguments=ARGUMENTS)
    segment = token.split(".")[1]
    payload = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    depth = _json.MAX_TEXT_DEPTH
    seal_rows = {row.label: row for row in seal_candidates(s, state)}
    open_rows = {row.label: row for row in open_candidates(s, state)}
    return [
        Candidate(PART_SEAL, seal_rows[MRTR_HS_ARGS].fn),
        Candidate(PART_CHECK, lambda: _json.check_state(state)),
        Candidate(PART_DIGEST, lambda: arguments_digest(ARGUMENTS)),
        *(Candidate(f"seal: {label}", seal_rows[label].fn) for label in (JOSE_HS, PYJWT_HS, SDK)),
        Candidate(PART_OPEN, open_rows[MRTR_HS_ARGS].fn),
        Candidate(PART_STRICT, lambda: _json.loads(payload, max_depth=depth)),
        Candidate(PART_LOADS, lambda: json.loads(payload)),
        *(Candidate(f"open: {label}", open_rows[label].fn) for label in (JOSE_HS, SDK)),
    ]


def print_parts(title: str, cands: Sequence[Candidate]) -> dict[str, float]:
    """The parts' medians, and the two calls without the profile's own work (medians subtracted)."""
    us = {c.label: median(c.samples) * 1e6 for c in cands}
    print(title)
    for label, value in us.items():
        print(f"  {label:<66}{value:>9.1f}")
    seal_rest = us[PART_SEAL] - us[PART_CHECK] - us[PART_DIGEST]
    open_rest = us[PART_OPEN] - us[PART_STRICT] + us[PART_LOADS] - us[PART_DIGEST]
    print(f"  {'seal without its state check and digest (medians subtracted)':<66}{seal_rest:>9.1f}")
    print(f"  {'open with json.loads and without its digest (medians subtracted)':<66}{open_rest:>9.1f}")
    return {**us, "seal without check and digest": seal_rest, "open with json.loads, no digest": open_rest}


# --------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_options(parser, rounds=200, rounds_help="rounds per table", batch_ms=2.0, quick_rounds=30)
    args = parser.parse_args(argv)
    rounds = 30 if args.quick else args.rounds
    batch_s = args.batch_ms / 1000
    started = time.time()

    print("mrtr-state benchmark: seal and open next to the alternatives")
    machine = describe_machine(LIBRARIES)
    for line in machine:
        print(line)
    print(method_line(rounds, args.batch_ms, args.clock))

    s = make_setup()
    sizes = {"small": 200, "medium": 2048, "near the cap": largest_state_size(s)}
    report: dict[str, Any] = {
        "machine": machine,
        "rounds": rounds,
        "batch_ms": args.batch_ms,
        "clock": args.clock,
        "tables": {},
    }
    tables: dict[str, dict[str, list[Candidate]]] = {}
    for name, size in sizes.items():
        state = make_state(size)
        tables[name] = {}
        for op, build in (("open", open_candidates), ("seal", seal_candidates)):
            cands = build(s, state)
            measure(cands, rounds=rounds, batch_s=batch_s, seed=args.seed, clock=args.clock)
            print_table(f"== {op}, {name} state ({size} bytes of JSON)", cands)
            report["tables"][f"{op}, {name} state ({size} B)"] = table_json(cands)
            tables[name][op] = cands

    results = ratio_targets(tables)
    met_all = print_targets(results, list(sizes), tables["small"]["seal"])
    report["targets"] = results

    report["parts"] = {}
    for name, size in sizes.items():
        cands = part_candidates(s, make_state(size))
        measure(cands, rounds=rounds, batch_s=batch_s, seed=args.seed, clock=args.clock)
        title = f"\n== where the time goes, {name} state ({size} bytes of JSON), median us"
        report["parts"][name] = print_parts(title, cands)

    cands = refusal_candidates(s, make_state(200))
    measure(cands, rounds=rounds, batch_s=batch_s, seed=args.seed, clock=args.clock)
    print_table("== refusals (and a valid open of the small state, for scale)", cands)
    rows = by_label(cands)
    capped = [rows[f"{MRTR_TOO_LARGE}{n}"] for n in OVERSIZED]
    growth = ratio(capped[-1], capped[0])
    constant = growth < 1.25
    met_all &= constant
    print(
        f"  too_large: 16 MiB input / input one byte over the cap = {growth:.2f}x: "
        f"{'met, does not grow with the input' if constant else 'NOT MET, grows with the input'}"
    )
    report["tables"]["refusals"] = table_json(cands)
    report["too_large_16MiB_over_cap_plus_1"] = growth

    lin_sizes = [256, 512, 1024, 2048, 3072, 4096, 5120, sizes["near the cap"]]
    lin_rounds = max(10, rounds // 2)
    print(
        f"\n== linearity: median us by state size (bytes of JSON), every size in the same {lin_rounds} rounds"
    )
    # Every size's candidates run in the same rounds, so that a change of the
    # machine's speed during the run cannot bend the line.
    picked: list[tuple[str, int, Candidate]] = []
    for size in lin_sizes:
        state = make_state(size)
        o = by_label(open_candidates(s, state))
        sl = by_label(seal_candidates(s, state))
        for label, fn in (
            ("open  " + FLOOR_HS, o[FLOOR_HS].fn),
            ("open  " + MRTR_HS, o[MRTR_HS].fn),
            ("open  " + FLOOR_ED_VERIFY, o[FLOOR_ED_VERIFY].fn),
            ("open  " + MRTR_ED, o[MRTR_ED].fn),
            ("seal  " + FLOOR_HS, sl[FLOOR_HS].fn),
            ("seal  " + MRTR_HS, sl[MRTR_HS].fn),
            ("seal  " + MRTR_ED, sl[MRTR_ED].fn),
        ):
            picked.append((label, size, Candidate(f"{label} @ {size}", fn)))
    measure([c for _, _, c in picked], rounds=lin_rounds, batch_s=batch_s, seed=args.seed, clock=args.clock)
    series: dict[str, list[float]] = {}
    for label, _, c in picked:
        series.setdefault(label, []).append(median(c.samples) * 1e6)
    print(f"  {'':<52}" + "".join(f"{n:>8}" for n in lin_sizes) + f"{'us/KiB':>9}{'r2':>7}")
    report["linearity"] = {"sizes": lin_sizes, "us": series, "fit": {}}
    linear = True
    for label, ys in series.items():
        slope, r2 = linear_fit(lin_sizes, ys)
        report["linearity"]["fit"][label] = {"us_per_kib": slope * 1024, "r2": r2}
        if "mrtr_state" in label:
            linear &= r2 >= LINEAR_R2
        print(f"  {label:<52}" + "".join(f"{y:>8.1f}" for y in ys) + f"{slope * 1024:>9.2f}{r2:>7.3f}")
    met_all &= linear
    print(
        "  (r2: the share of the variation a straight line explains; 1.000 is a perfect line)\n"
        f"  linear growth (r2 >= {LINEAR_R2} for every mrtr_state row): {'met' if linear else 'NOT MET'}"
    )

    report["token_lengths"] = token_lengths(s, lin_sizes)

    finish(report, started=started, met_all=met_all, json_path=args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
