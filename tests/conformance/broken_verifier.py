"""A deliberately broken implementation of the conformance protocol (a test double).

It answers as the reference does, except for the one fault named on its command
line, so that the tests can check that ``mrtr-state conformance`` catches and names
it:

``skip-expiry``
    step 15 is skipped: an expired token is accepted (breaks both classes);
``swap-reasons``
    ``wrong_user`` is reported as ``wrong_tool`` (breaks only the strict class);
``accept-small-order-keys``
    every key loads (breaks only the strict class);
``refuse-every-key``
    no key loads, valid or not (breaks only the strict class);
``load-rings-key-by-key``
    a ring loads when each of its keys loads alone: one secret as an encryption
    key and another key is not caught (profile 7.6; breaks only the strict class);
``null-arguments-are-empty``
    ``"arguments": null`` is read as ``{}`` (the other reading of profile 3.4/8.2);
``exact-decimal``
    a number is judged bindable by its exact decimal value, not by the double
    nearest it (the other reading of profile 3.4);
``trim-kid``
    a ``kid`` is trimmed of white space before it is checked (profile 7.4);
``weak-secret-needs-alg``
    the weak-secret rule is skipped on an ``oct`` JWK without ``alg`` (7.1);
``null-kid-absent-on-ed25519``
    ``"kid": null`` on an Ed25519 key is read as absent: the thumbprint (7.4);
``accept-empty-ring``
    ``{"keys": []}`` loads (7.3, issue 32 D1);
``first-member-wins``
    a member name repeated in the arguments: the first member wins (3.4, D2);
``no-nesting-limit``
    arguments nested deeper than 256 levels get a digest (3.4, D3);
``accept-shared-eddsa-secret``
    an ``oct`` key holding an Ed25519 key's ``d`` or ``x`` is not caught (7.6, D4);
``accept-short-secret``
    an HS256 secret shorter than 32 bytes loads (7.1);
``accept-padded-base64``
    a padded base64url member (``k``, ``x``, ``d``) loads (7.2);
``ignore-use``
    a JWK's ``use`` is not checked (7.2, 7.6);
``null-alg-as-absent``
    ``"alg": null`` is read as absent (7.2);
``null-use-as-absent``
    ``"use": null`` is read as absent (7.2, 7.6);
``die-after N``
    writes a line to its standard error and exits with status 3 after N requests;
``hang-after N``
    stops answering after N requests and never exits (until it is killed).
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
import time
from decimal import Decimal
from typing import Any

import rfc8785

from mrtr_state.binding.canonical import canonicalize
from mrtr_state.conformance import answer
from mrtr_state.keys import A256GCMKey, Key, Keyring
from mrtr_state.keys.keys import _repeat_period

#: The faults that change how a key or ring is loaded: each edits every JWK of a load_key request first.
_KEY_FAULTS = (
    "trim-kid",
    "weak-secret-needs-alg",
    "null-kid-absent-on-ed25519",
    "accept-short-secret",
    "accept-padded-base64",
    "ignore-use",
    "null-alg-as-absent",
    "null-use-as-absent",
)


def _decode(segment: str) -> bytes:
    return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))


def _claims(request: dict[str, Any]) -> Any:
    """The claims of a token the reference found expired: read, or decrypted with the ring's key."""
    segments = request["token"].split(".")
    if len(segments) == 3:
        return json.loads(_decode(segments[1]))
    kid = json.loads(_decode(segments[0]))["kid"]
    key = Keyring.from_jwks(request["keys"]).get(kid)
    assert isinstance(key, A256GCMKey)
    plaintext = key.decrypt(
        _decode(segments[2]), _decode(segments[3]) + _decode(segments[4]), segments[0].encode()
    )
    return json.loads(plaintext or b"null")


def _other_secret(text: str, length: int) -> str:
    """A secret of ``length`` random-looking bytes derived from ``text``: what a double loads instead."""
    secret = hashlib.shake_256(b"broken " + text.encode()).digest(length)
    return base64.urlsafe_b64encode(secret).rstrip(b"=").decode()


def _misread(fault: str, jwk: Any) -> Any:
    """The JWK as a verifier with ``fault`` reads it."""
    if not isinstance(jwk, dict):
        return jwk
    jwk = dict(jwk)
    kid, k = jwk.get("kid"), jwk.get("k")
    octet = jwk.get("kty") == "oct"
    hs256 = octet and jwk.get("alg", "HS256") != "A256GCM"
    if fault == "trim-kid" and isinstance(kid, str):
        jwk["kid"] = kid.strip()
    elif fault == "null-kid-absent-on-ed25519" and jwk.get("kty") == "OKP" and "kid" in jwk and kid is None:
        del jwk["kid"]
    elif fault == "weak-secret-needs-alg" and octet and "alg" not in jwk and isinstance(k, str):
        secret = _decode(k)
        if len(secret) >= 2 and _repeat_period(secret) is not None:
            jwk["k"] = _other_secret(k, len(secret))
    elif fault == "accept-short-secret" and hs256 and isinstance(k, str) and len(_decode(k)) < 32:
        jwk["k"] = _other_secret(k, 32)
    elif fault == "accept-padded-base64":
        for name in ("k", "x", "d"):
            if isinstance(jwk.get(name), str):
                jwk[name] = jwk[name].rstrip("=")
    elif fault == "ignore-use":
        jwk.pop("use", None)
    elif fault in ("null-alg-as-absent", "null-use-as-absent"):
        name = fault.split("-")[1]
        if name in jwk and jwk[name] is None:
            del jwk[name]
    return jwk


def _misread_request(fault: str, request: dict[str, Any]) -> dict[str, Any]:
    if "jwk" in request:
        return {**request, "jwk": _misread(fault, request["jwk"])}
    jwks = request.get("jwks")
    if isinstance(jwks, dict) and isinstance(jwks.get("keys"), list):
        return {**request, "jwks": {**jwks, "keys": [_misread(fault, jwk) for jwk in jwks["keys"]]}}
    return request


def _loads_apart(jwks: Any) -> bool:
    """Whether a ring loads when its Ed25519 keys and its oct keys are checked apart (D4 missed)."""
    try:
        keys = [Key.from_jwk(jwk) for jwk in jwks["keys"]]
        octs = [key for key in keys if key.alg != "EdDSA"]
        pairs = [key for key in keys if key.alg == "EdDSA"]
        for part in (octs, pairs):
            if part:
                Keyring(part)
    except (KeyError, TypeError, ValueError):
        return False
    return bool(keys) and len({key.kid for key in keys}) == len(keys)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def broken(fault: str, request: dict[str, Any], line: str) -> dict[str, Any]:
    op = request.get("op")
    if fault == "null-arguments-are-empty" and "arguments" in request and request["arguments"] is None:
        request = {**request, "arguments": {}}
    if fault in _KEY_FAULTS and op == "load_key":
        request = _misread_request(fault, request)
    if fault == "first-member-wins" and op == "digest":
        request = json.loads(line, object_pairs_hook=lambda pairs: dict(reversed(pairs)))
    reply = answer(request)
    if fault == "accept-empty-ring" and op == "load_key" and request.get("jwks") == {"keys": []}:
        return {"loaded": True}
    shared = fault == "accept-shared-eddsa-secret"
    if shared and op == "load_key" and "jwks" in request and not reply["loaded"]:
        return {"loaded": _loads_apart(request["jwks"])}
    if fault == "no-nesting-limit" and op == "digest" and reply.get("unbindable"):
        arguments = request.get("arguments")
        if isinstance(arguments, dict) and _depth(arguments) > 256:
            try:
                text = rfc8785.dumps(arguments)
            except (rfc8785.CanonicalizationError, ValueError, RecursionError):
                return reply
            return {"digest": base64.urlsafe_b64encode(hashlib.sha256(text).digest()).rstrip(b"=").decode()}
    if fault == "skip-expiry" and reply.get("reason") == "expired":
        return {"valid": True, "state": _claims(request)["state"]}
    if fault == "swap-reasons" and reply.get("reason") == "wrong_user":
        return {"valid": False, "reason": "wrong_tool"}
    if fault == "accept-small-order-keys" and op == "load_key":
        return {"loaded": True}
    if fault == "refuse-every-key" and op == "load_key":
        return {"loaded": False}
    if fault == "load-rings-key-by-key" and op == "load_key" and "jwks" in request:
        keys = request["jwks"]["keys"]
        return {"loaded": all(answer({"op": "load_key", "jwk": jwk})["loaded"] for jwk in keys)}
    if fault == "exact-decimal" and op == "digest" and reply.get("unbindable"):
        exact = json.loads(line, parse_float=Decimal)["arguments"]
        if isinstance(exact, dict) and all(abs(number) < 2**53 for number in _numbers(exact)):
            digest = hashlib.sha256(canonicalize(request["arguments"])).digest()
            return {"digest": base64.urlsafe_b64encode(digest).rstrip(b"=").decode()}
    return reply


def _numbers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [n for item in value.values() for n in _numbers(item)]
    if isinstance(value, list):
        return [n for item in value for n in _numbers(item)]
    return [value] if isinstance(value, (int, Decimal)) and not isinstance(value, bool) else []


def main() -> int:
    fault = sys.argv[1]
    limit = int(sys.argv[2]) if fault in ("die-after", "hang-after") else None
    for number, line in enumerate(sys.stdin):
        if limit is not None and number >= limit:
            sys.stderr.write(f"broken_verifier: giving up after {limit} requests\n")
            sys.stderr.flush()
            if fault == "hang-after":
                time.sleep(3600)  # the runner's --timeout kills it
            return 3
        request = json.loads(line)
        reply = broken(fault, request, line)
        sys.stdout.write(json.dumps({"id": request["id"], **reply}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
