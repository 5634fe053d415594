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

from mrtr_state.binding.canonical import canonicalize
from mrtr_state.conformance import answer
from mrtr_state.keys import A256GCMKey, Keyring


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


def broken(fault: str, request: dict[str, Any], line: str) -> dict[str, Any]:
    op = request.get("op")
    if fault == "null-arguments-are-empty" and "arguments" in request and request["arguments"] is None:
        request = {**request, "arguments": {}}
    reply = answer(request)
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
