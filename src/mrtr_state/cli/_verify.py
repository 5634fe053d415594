"""``mrtr-state verify``: open a token exactly as a server would, and say why it is refused.

The verdict is :meth:`StateSealer.open`'s, with the options a server has: key
ring, issuer, leeway, maximum lifetime, and the user, target and arguments of
the request. Exit status 0 prints the state; 1 prints the reason code, its
meaning, and what in the token differs from the request; 2 is bad input (text
that is not a JWT at all, an unreadable key file, ...). Both forms open: a signed
token (JWS) and an encrypted one (JWE), whose claims are read by decrypting it
with the same ring.
"""

from __future__ import annotations

import argparse
from typing import Any

from mrtr_state.binding.binding import Binding
from mrtr_state.binding.target import resolve
from mrtr_state.cli._io import STDIO, CliError, load_ring, parse_json, read_token
from mrtr_state.cli._parsing import Parser, epoch_seconds
from mrtr_state.cli._text import duration, iso_time, json_block, json_line, printable, quoted
from mrtr_state.cli._token import clock_now, decode_header, is_encrypted, is_time, readable_claims
from mrtr_state.errors import InvalidRequestState
from mrtr_state.keys.keys import DEFAULT_KEYS_VARIABLE, Keyring
from mrtr_state.sealer import (
    DEFAULT_LEEWAY,
    DEFAULT_MAX_LIFETIME,
    DEFAULT_MAX_TOKEN_BYTES,
    StateSealer,
)

__all__ = ["register"]

_EPILOG = f"""\
exit status: 0 the token is valid (the state is printed); 1 the token is refused
(the reason code and its meaning are printed); 2 bad input.

examples:
  mrtr-state verify "$TOKEN" --keys ring.json --issuer https://files.example.com \\
      --user alice --tool deploy --arguments '{{"env": "prod"}}'
  mrtr-state verify - --keys public.json --issuer https://files.example.com \\
      --user alice --resource file:///reports/q3.csv --now 1767225700 < token.txt

Without --keys, the keys come from ${DEFAULT_KEYS_VARIABLE} (a JWKS, a JWK, or an HS256
secret in base64), as the library reads them.
"""


def register(commands: argparse._SubParsersAction[Parser]) -> None:
    """Add the ``verify`` command to the parser."""
    verify = commands.add_parser(
        "verify",
        help="verify a requestState token as a server would; say why it is refused",
        description="Verify a requestState token for a request, as a server would.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("token", metavar="TOKEN", help="the token; '-' reads it from standard input")
    verify.add_argument(
        "--keys",
        metavar="FILE",
        help=f"the key ring: a JWKS (private or public) or one JWK; default: ${DEFAULT_KEYS_VARIABLE}",
    )
    verify.add_argument("--issuer", required=True, help="this server's identity, required in iss")
    verify.add_argument("--user", required=True, help="the user of the request, required in sub")
    target = verify.add_mutually_exclusive_group(required=True)
    target.add_argument("--tool", help="the tool of a tools/call request")
    target.add_argument("--prompt", help="the prompt of a prompts/get request")
    target.add_argument("--resource", metavar="URI", help="the resource URI of a resources/read request")
    verify.add_argument(
        "--arguments",
        metavar="JSON",
        default=None,
        help="the request's arguments object, as JSON (default: {}, a request without arguments)",
    )
    verify.add_argument(
        "--require-arguments",
        action="store_true",
        help="require the argument binding: refuse a tool or prompt token without args_sha256 "
        "(wrong_request), as the MCP boundary does by default",
    )
    verify.add_argument(
        "--now",
        type=epoch_seconds,
        metavar="SECONDS",
        help="the verifier's clock, in seconds since the epoch (default: the real clock)",
    )
    verify.add_argument(
        "--leeway",
        type=int,
        default=DEFAULT_LEEWAY,
        metavar="SECONDS",
        help=f"allowed clock skew, 0 to 300 (default {DEFAULT_LEEWAY})",
    )
    verify.add_argument(
        "--max-lifetime",
        type=int,
        default=DEFAULT_MAX_LIFETIME,
        metavar="SECONDS",
        help=f"the longest exp - iat accepted (default {DEFAULT_MAX_LIFETIME})",
    )
    verify.add_argument(
        "--max-token-bytes",
        type=int,
        default=DEFAULT_MAX_TOKEN_BYTES,
        metavar="N",
        help=f"the size cap, in characters (default {DEFAULT_MAX_TOKEN_BYTES})",
    )
    verify.add_argument("--json", action="store_true", help="print one JSON object, for machines")
    verify.set_defaults(run=_verify)


def _verify(args: argparse.Namespace) -> int:
    if args.token == STDIO and args.keys == STDIO:
        raise CliError("the token and the keys cannot both come from standard input")
    ring = load_ring(args.keys)
    token = read_token(args.token)
    header = decode_header(token)  # text that is not a JWT at all is bad input, not a verdict
    arguments = _arguments(args.arguments)
    now = clock_now(args.now)
    try:
        resolve(tool=args.tool, prompt=args.prompt, resource=args.resource)  # the target before the options
        sealer = StateSealer(
            ring,
            issuer=args.issuer,
            max_lifetime=args.max_lifetime,
            leeway=args.leeway,
            max_token_bytes=args.max_token_bytes,
            clock=lambda: now,
            require_arguments=args.require_arguments,
        )
    except (TypeError, ValueError) as exc:
        raise CliError(_option_message(str(exc))) from None
    try:
        binding = Binding.of(
            user=args.user, tool=args.tool, prompt=args.prompt, resource=args.resource, arguments=arguments
        )
        state = sealer.open_bound(token, binding)
    except InvalidRequestState as refusal:
        claims = readable_claims(token, ring)
        why = _explain(refusal.reason, header, claims, args=args, ring=ring, binding=binding, now=now)
        if why is not None and is_encrypted(token):
            why = _encrypted_note(refusal.reason, why)
        _print_refusal(refusal, why, as_json=args.json)
        return 1
    except (TypeError, ValueError) as exc:  # an empty --user, --tool, ...
        raise CliError(_option_message(str(exc))) from None
    _print_state(state, readable_claims(token, ring), aud=binding.aud, now=now, as_json=args.json)
    return 0


def _arguments(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}  # the profile (3.4): a request without arguments has {}
    arguments = parse_json(text, what="--arguments")
    if not isinstance(arguments, dict):
        raise CliError("--arguments must be a JSON object, as in a request's arguments")
    return arguments


def _option_message(message: str) -> str:
    # The core names its keyword arguments; the operator typed options.
    for name in ("max_token_bytes", "max_lifetime", "leeway", "issuer", "user", "tool", "prompt", "resource"):
        if message.startswith(name + " "):
            return f"--{name.replace('_', '-')}{message[len(name) :]}"
    return message


def _print_state(state: Any, claims: dict[str, Any], *, aud: str, now: int, as_json: bool) -> None:
    exp = claims["exp"]
    if as_json:
        report = {"valid": True, "state": state, "expires_at": iso_time(exp), "expires_in": exp - now}
        print(json_line(report))
        return
    print(
        f"valid: issued by {quoted(claims['iss'])} for the user {quoted(claims['sub'])} and {quoted(aud)}; "
        f"expires in {duration(exp - now)} ({iso_time(exp)})"
    )
    print(json_block(state))


def _print_refusal(refusal: InvalidRequestState, why: str | None, *, as_json: bool) -> None:
    if as_json:
        print(
            json_line(
                {
                    "valid": False,
                    "reason": refusal.reason,
                    "message": str(refusal),
                    "detail": refusal.detail,
                    "explanation": why,
                }
            )
        )
        return
    print(f"refused: {refusal.reason}: {refusal}")
    if refusal.detail:
        print(f"  detail: {printable(refusal.detail)}")
    if why:
        print(f"  {why}")


def _explain(
    reason: str,
    header: dict[str, Any],
    claims: dict[str, Any],
    *,
    args: argparse.Namespace,
    ring: Keyring,
    binding: Binding,
    now: int,
) -> str | None:
    """What in the token differs from the request, for the reasons where the token shows it.

    Claims are shown only for reasons after the signature check (lifetime and
    later), where the signature has verified and the claims are the minter's.
    """
    kid, iat, exp = header.get("kid"), claims.get("iat"), claims.get("exp")
    if reason == "unknown_key":
        held = ", ".join(quoted(key.kid) for key in ring)
        return f"the token names the key {quoted(kid)}; the ring holds {held}"
    if reason == "algorithm_mismatch":
        key = ring.get(kid) if isinstance(kid, str) else None
        held = "" if key is None else f", but that key is {key.alg}"
        return f"the token says alg {quoted(header.get('alg'))} for the key {quoted(kid)}{held}"
    if reason == "bad_signature":
        return "the token was changed after it was signed, or signed by another key under the same kid"
    if reason in ("lifetime_too_long", "issued_in_future", "expired"):
        return _explain_time(reason, iat, exp, args=args, now=now)
    if reason == "wrong_issuer":
        return f"issued by {quoted(claims.get('iss'))}, not by {quoted(args.issuer)} (--issuer)"
    if reason == "wrong_user":
        return f"bound to the user {quoted(claims.get('sub'))}, not {quoted(args.user)} (--user)"
    if reason == "wrong_tool":
        return f"bound to {quoted(claims.get('aud'))}, not {quoted(binding.aud)}"
    if reason == "wrong_request":
        if claims.get("args_sha256") is None:
            return "the token has no argument binding (args_sha256), which --require-arguments requires"
        return _explain_arguments(claims.get("args_sha256"), binding, given=args.arguments is not None)
    return None


def _encrypted_note(reason: str, why: str) -> str:
    """The encrypted form's wording where the signed form's would mislead."""
    if reason == "bad_signature":
        return "the token was changed after it was encrypted, or encrypted by another key under the same kid"
    if reason == "algorithm_mismatch":
        return f"{why}; an encrypted token (alg dir, enc A256GCM) needs an A256GCM key"
    return why


def _explain_time(reason: str, iat: object, exp: object, *, args: argparse.Namespace, now: int) -> str | None:
    if not (is_time(iat) and is_time(exp)):  # unreachable: these reasons come after the claim checks
        return None
    if reason == "lifetime_too_long":
        return f"its lifetime is {exp - iat} s; this verifier accepts {args.max_lifetime} s (--max-lifetime)"
    if reason == "issued_in_future":
        ahead = duration(iat - now)
        return f"issued at {iso_time(iat)}, {ahead} ahead of this clock (--leeway {args.leeway})"
    return f"expired {duration(now - exp)} ago, at {iso_time(exp)} (--leeway {args.leeway})"


def _explain_arguments(bound: object, binding: Binding, *, given: bool) -> str:
    # The digest the open computed, kept in the binding; its problem is a fixed
    # sentence that names no value.
    problem = binding.problem
    digest = quoted(binding.digest_or_none) if problem is None else f"none: they are unbindable ({problem})"
    which = "the --arguments given have" if given else "without --arguments the request has {}, with"
    return f"bound to arguments with the digest {quoted(bound)}; {which} {digest}"
