"""The reference answers: this library's own verdict for each protocol request.

:func:`answer` is what a strict implementation must answer. The runner uses it to
decide the expected verdict of generated mutations, and ``mrtr-state conformance
--serve`` speaks the protocol with it (the template and the strict baseline every
other implementation is compared with).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from mrtr_state.binding.canonical import JSON_NULL, arguments_digest
from mrtr_state.errors import InvalidRequestState, KeyringError
from mrtr_state.keys.keys import Key, Keyring
from mrtr_state.sealer import StateSealer

__all__ = ["answer"]


def answer(request: Mapping[str, Any]) -> dict[str, Any]:
    """The reference answer to one protocol request (without its ``id``).

    A ``verify`` whose ring does not load is answered ``{"error": ...}``: no
    verifier holds such a ring, so there is no verdict to give.

    Raises:
        ValueError: the request is not one of the protocol's operations, or lacks
            a field its operation needs.
    """
    op = request.get("op")
    if op == "verify":
        return _verify(request)
    if op == "digest":
        try:  # absent arguments are {}; present ones that are not an object are unbindable (8.2)
            return {"digest": arguments_digest(request.get("arguments", {}))}
        except (TypeError, ValueError):
            return {"unbindable": True}
    if op == "load_key":
        try:
            if "jwks" in request:  # a ring: the rules between its keys apply too (profile 7.6)
                Keyring.from_jwks(request["jwks"])
            else:
                Key.from_jwk(request["jwk"])
        except (KeyringError, TypeError, ValueError):
            return {"loaded": False}
        return {"loaded": True}
    raise ValueError(f"unknown op {op!r}")


@lru_cache(maxsize=64)
def _ring(jwks: str) -> Keyring:
    return Keyring.from_jwks(jwks)


def _verify(request: Mapping[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {
        name: request[name] for name in ("max_lifetime", "leeway", "max_token_bytes") if name in request
    }
    if request.get("require_arguments"):
        options["require_arguments"] = True
    now = request["now"]
    try:
        ring = _ring(json.dumps(request["keys"], sort_keys=True))
    except KeyringError as exc:  # no verifier holds this ring: an error, not a verdict (docs/conformance.md)
        return {"error": f"the verifier's ring does not load: {exc}"}
    sealer = StateSealer(
        ring,
        issuer=request["issuer"],
        clock=lambda: now,
        **options,
    )
    target = {name: request[name] for name in ("tool", "prompt", "resource") if name in request}
    # Profile 8.2: absent arguments are {}; "arguments": null is present, and unbindable.
    arguments: Any = request.get("arguments", {})
    if arguments is None:
        arguments = JSON_NULL
    try:
        state = sealer.open(request["token"], user=request["user"], arguments=arguments, **target)
    except InvalidRequestState as refusal:
        return {"valid": False, "reason": refusal.reason}
    return {"valid": True, "state": state}
