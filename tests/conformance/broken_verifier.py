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
``die-after N``
    stops answering after N requests.
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

from mrtr_state.conformance import answer


def _claims(token: str) -> Any:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def broken(fault: str, request: dict[str, Any]) -> dict[str, Any]:
    reply = answer(request)
    if fault == "skip-expiry" and reply.get("reason") == "expired":
        return {"valid": True, "state": _claims(request["token"])["state"]}
    if fault == "swap-reasons" and reply.get("reason") == "wrong_user":
        return {"valid": False, "reason": "wrong_tool"}
    if fault == "accept-small-order-keys" and request.get("op") == "load_key":
        return {"loaded": True}
    return reply


def main() -> int:
    fault = sys.argv[1]
    limit = int(sys.argv[2]) if fault == "die-after" else None
    for number, line in enumerate(sys.stdin):
        if limit is not None and number >= limit:
            return 3
        request = json.loads(line)
        reply = broken(fault, request)
        sys.stdout.write(json.dumps({"id": request["id"], **reply}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
