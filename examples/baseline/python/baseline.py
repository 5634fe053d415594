"""A baseline verifier of the mrtr-state profile (spec/profile.md, section 12.6) on a stock PyJWT.

PyJWT's own checks, configured as a typical server would configure them, plus the few checks of the
baseline class it does not make. It speaks the conformance protocol on stdin/stdout
(``mrtr-state conformance --help``): one JSON request a line, one answer a line.

What it adds to PyJWT: the size cap before decoding, the key looked up by ``kid`` with the algorithm
taken from that key (never from the token), ``typ`` compared exactly, ``exp`` against the request's
clock (PyJWT reads the system clock, so its own ``exp`` check is off), and the argument digest (RFC
8785 through ``rfc8785``). PyJWT gives the signature, ``iss``, ``sub`` and ``aud``. It is NOT a strict
verifier: it reads JSON leniently and accepts re-encodings, ``aud`` arrays and extra claims, which only
a key holder can make. PyJWT has no JWE, so it offers the signed form only.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import sys
from typing import Any

import jwt
import jwt.exceptions
import rfc8785

TYP = "mrtr-state+jwt"
METHODS = {"tool": "tools/call", "prompt": "prompts/get", "resource": "resources/read"}
SAFE = 2**53 - 1


def refuse(reason: str) -> dict[str, Any]:
    return {"valid": False, "reason": reason}


def bindable(value: Any) -> bool:
    """Arguments holding a number of magnitude 2^53 or more, however written, bind to no digest (3.4)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    if isinstance(value, int):
        return abs(value) <= SAFE
    if isinstance(value, float):
        return math.isfinite(value) and abs(value) <= SAFE
    if isinstance(value, list):
        return all(bindable(item) for item in value)
    if isinstance(value, dict):
        return all(bindable(item) for item in value.values())
    return False


def digest(arguments: Any) -> str | None:
    """``args_sha256`` of the arguments, or None: only an object binds (profile 3.4 and 8.2)."""
    if not isinstance(arguments, dict) or not bindable(arguments):
        return None
    try:
        text = rfc8785.dumps(arguments)
    except (rfc8785.CanonicalizationError, UnicodeEncodeError):  # a lone surrogate, for one
        return None
    return base64.urlsafe_b64encode(hashlib.sha256(text).digest()).rstrip(b"=").decode("ascii")


def key_for(header: dict[str, Any], ring: list[dict[str, Any]]) -> tuple[str, Any] | str:
    """The algorithm and key the token's ``kid`` names, or the reason to refuse it."""
    jwk = next((key for key in ring if "kid" in header and key.get("kid") == header["kid"]), None)
    if jwk is None:
        return "unknown_key"
    if jwk.get("kty") == "oct" and jwk.get("alg") != "A256GCM":
        alg = "HS256"
    elif jwk.get("kty") == "OKP" and jwk.get("crv") == "Ed25519":
        alg = "EdDSA"
    else:
        return "algorithm_mismatch"  # an encryption key, or a kind of key this verifier has no use for
    if header.get("alg") != alg:
        return "algorithm_mismatch"
    return alg, jwt.PyJWK(jwk, alg).key


def verify(request: dict[str, Any]) -> dict[str, Any]:
    token = request["token"]
    if len(token.encode("utf-8")) > request.get("max_token_bytes", 8192):
        return refuse("too_large")
    try:
        header = jwt.get_unverified_header(token)
    except jwt.DecodeError:
        return refuse("malformed")
    if header.get("typ") != TYP:
        return refuse("wrong_type")
    found = key_for(header, request["keys"]["keys"])
    if isinstance(found, str):
        return refuse(found)
    alg, key = found
    target = next((name for name in METHODS if name in request), "tool")
    leeway = request.get("leeway", 0)
    try:
        claims = jwt.decode(
            token,
            key,
            algorithms=[alg],
            issuer=request["issuer"],
            subject=request["user"],
            audience=f"{METHODS[target]}:{request[target]}",
            # exp is required, and compared below with the request's clock: PyJWT's is the system's.
            options={"require": ["exp"], "verify_exp": False, "verify_iat": False, "verify_nbf": False},
        )
    except jwt.InvalidSignatureError:
        return refuse("bad_signature")
    except jwt.InvalidIssuerError:
        return refuse("wrong_issuer")
    except jwt.exceptions.InvalidSubjectError:
        return refuse("wrong_user")
    except jwt.InvalidAudienceError:
        return refuse("wrong_tool")
    except jwt.PyJWTError:
        return refuse("malformed")
    exp = claims["exp"]
    if isinstance(exp, bool) or not isinstance(exp, (int, float)):
        return refuse("malformed")
    if request["now"] >= exp + leeway:  # refused from the second exp itself (step 15)
        return refuse("expired")
    required = request.get("require_arguments", False) and target != "resource"  # a read has no arguments
    if "args_sha256" in claims or required:
        bound = digest(request.get("arguments", {}))  # absent arguments are {}; null is present
        if bound is None or claims.get("args_sha256") != bound:
            return refuse("wrong_request")
    return {"valid": True, "state": claims.get("state")}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    if request.get("op") == "verify":
        try:
            return verify(request)
        except Exception:  # a refusal never crashes the verifier
            return refuse("malformed")
    if request.get("op") == "digest":
        value = digest(request.get("arguments", {}))
        return {"unbindable": True} if value is None else {"digest": value}
    return {"unsupported": True}


def main() -> None:
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            text = json.dumps({"id": None, "unsupported": True})
        else:
            try:
                text = json.dumps({"id": request.get("id"), **answer(request)}, allow_nan=False)
            except ValueError:  # a state holding NaN or Infinity, which no answer line may carry
                text = json.dumps({"id": request.get("id"), **refuse("malformed")})
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
