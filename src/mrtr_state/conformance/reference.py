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

from mrtr_state.binding.canonical import arguments_digest
from mrtr_state.errors import InvalidRequestState, KeyringError
from mrtr_state.keys.keys import Key, Keyring
from mrtr_state.sealer import StateSealer

__all__ = ["answer"]


def answer(request: Mapping[str, Any]) -> dict[str, Any]:
    """The reference answer to one protocol request (without its ``id``).

    Raises:
        ValueError: the request is not one of the protocol's operations, or lacks
            a field its operation needs.
    """
    op = request.get("op")
    if op == "verify":
        return _verify(request)
    if op == "digest":
        try:
            return {"digest": arguments_digest(request["arguments"])}
        except (TypeError, ValueError):
            return {"unbindable": True}
    if op == "load_key":
        try:
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
    sealer = StateSealer(
        _ring(json.dumps(request["keys"], sort_keys=True)),
        issuer=request["issuer"],
        clock=lambda: now,
        **options,
    )
    target = {name: request[name] for name in ("tool", "prompt", "resource") if name in request}
    try:
        state = sealer.open(
            request["token"], user=request["user"], arguments=request.get("arguments", {}), **target
        )
    except InvalidRequestState as refusal:
        return {"valid": False, "reason": refusal.reason}
    return {"valid": True, "state": state}
