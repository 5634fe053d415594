"""``mrtr-state keygen`` and ``mrtr-state jwks``: make key rings, publish their public keys.

``keygen`` is the one command that writes secrets, and it writes them only where
it is told: to standard output, or to a file created with mode 0600. ``jwks``
writes Ed25519 public keys only; an HS256 secret or an A256GCM encryption key is
never published (profile, section 7.5).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from mrtr_state.cli._io import STDIO, CliError, load_ring, write_private
from mrtr_state.cli._parsing import Parser
from mrtr_state.cli._text import printable, shown
from mrtr_state.errors import KeyringError
from mrtr_state.keys.keys import DEFAULT_KEYS_VARIABLE, KEY_ALGORITHMS, Key, Keyring

__all__ = ["register"]

_KEYGEN_EPILOG = f"""\
The private JWKS holds secrets: it goes to standard output, or with -o to a new
file of mode 0600 (an existing file is replaced only with --force).

examples:
  mrtr-state keygen --alg EdDSA -o ring.json
  mrtr-state keygen --alg HS256 --kid 2026-01 > /run/secrets/mrtr-state-keys
  mrtr-state keygen --alg A256GCM -o ring.json     # encrypted tokens: the client cannot read the state
  export {DEFAULT_KEYS_VARIABLE}="$(mrtr-state keygen --alg EdDSA)"

rotation (the new key signs from now on; the old keys still verify):
  mrtr-state keygen --alg EdDSA --add ring.json --force
  mrtr-state keygen --alg EdDSA --add ring.json -o ring-next.json

An A256GCM key first in the ring makes new tokens encrypted; a signing key first
makes them signed. Either way every key in the ring still opens its own tokens, so
--add with the other kind of key moves a ring between the two forms.

--add puts the new key first at once: right for one server, or for replicas that
all load the new ring at the same moment. Otherwise follow the profile (section
7.3): give every replica the new key second in its ring, then move it first
everywhere, then drop the old key once its tokens have expired.
"""

_JWKS_EPILOG = f"""\
Prints the public JWKS (Ed25519 public keys only) that replicas which only
verify load. HS256 secrets and A256GCM encryption keys are never published:
whoever holds one can mint request state (and, with an encryption key, read it).
Without FILE, the keys come from ${DEFAULT_KEYS_VARIABLE}.

examples:
  mrtr-state jwks ring.json > public.json
  {DEFAULT_KEYS_VARIABLE}="$(cat ring.json)" mrtr-state jwks
"""


def register(commands: argparse._SubParsersAction[Parser]) -> None:
    """Add the ``keygen`` and ``jwks`` commands to the parser."""
    keygen = commands.add_parser(
        "keygen",
        help="make a new key ring (a private JWKS), or add a new signing key to one",
        description="Make a new key and write the private JWKS of its ring.",
        epilog=_KEYGEN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    keygen.add_argument(
        "--alg",
        required=True,
        choices=KEY_ALGORITHMS,
        help="the new key's algorithm: HS256 or EdDSA sign, A256GCM encrypts (profile, section 3.6)",
    )
    keygen.add_argument("--kid", help="the new key's id (default: its RFC 7638 thumbprint)")
    keygen.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the private JWKS to FILE, mode 0600 ('-': standard output, the default)",
    )
    keygen.add_argument(
        "--add",
        metavar="FILE",
        help="read the ring in FILE and put the new key first; writes back to FILE with --force, or to -o",
    )
    keygen.add_argument("--force", action="store_true", help="replace an existing output file")
    keygen.set_defaults(run=_keygen)

    jwks = commands.add_parser(
        "jwks",
        help="print the public JWKS of a key ring (Ed25519 public keys only)",
        description="Print the public JWKS of a key ring, for replicas that only verify.",
        epilog=_JWKS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    jwks.add_argument(
        "file",
        metavar="FILE",
        nargs="?",
        help=f"the key ring (a JWKS); '-' reads standard input; default: ${DEFAULT_KEYS_VARIABLE}",
    )
    jwks.set_defaults(run=_jwks)


def _keygen(args: argparse.Namespace) -> int:
    output: str | None = args.output
    if args.add is not None and output is None and not args.force:
        raise CliError(
            f"--add rewrites {shown(args.add)}: give --force to replace it, "
            "or -o FILE to write the new ring elsewhere (-o - for standard output)"
        )
    try:
        key = Key.generate(args.alg, kid=args.kid)
    except KeyringError as exc:
        raise CliError(str(exc)) from None
    if args.add is None:
        ring = Keyring([key])
        destination = STDIO if output is None else output
    else:
        try:
            ring = load_ring(args.add).rotated(key)
        except KeyringError as exc:  # a --kid that the ring already has
            raise CliError(f"cannot add the key to {shown(args.add)}: {exc}") from None
        destination = args.add if output is None else output
    text = json.dumps(ring.private_jwks(), indent=2) + "\n"
    if destination == STDIO:
        sys.stdout.write(text)
        return 0
    write_private(destination, text, force=args.force)
    _note(
        f"wrote a private JWKS of {_keys(len(ring))} to {shown(destination)} (mode 0600); "
        f"the new {key.alg} key {printable(key.kid)} {_role(key)} first"
    )
    return 0


def _jwks(args: argparse.Namespace) -> int:
    ring = load_ring(args.file)
    published = [key for key in ring if key.alg == "EdDSA"]
    secret_kinds = " and ".join(
        kind for alg, kind in _SECRET_KINDS.items() if any(key.alg == alg for key in ring)
    )
    if not published:
        raise CliError(
            f"this ring holds only {secret_kinds}, which are never published "
            "(whoever holds one can mint request state); replicas that only verify need EdDSA keys: "
            "make one with `mrtr-state keygen --alg EdDSA`"
        )
    document: dict[str, Any] = ring.public_jwks()
    sys.stdout.write(json.dumps(document, indent=2) + "\n")
    for alg, kind in _SECRET_KINDS.items():
        withheld = sum(key.alg == alg for key in ring)
        if withheld:
            _note(f"left out {withheld} {kind[:-1]}(s): {kind} are never published")
    return 0


#: The keys ``jwks`` never publishes, by algorithm, named in the plural.
_SECRET_KINDS = {"HS256": "HS256 secrets", "A256GCM": "A256GCM encryption keys"}


def _role(key: Key) -> str:
    """What the first key of a ring does to new tokens."""
    return "encrypts" if key.alg == "A256GCM" else "signs"


def _keys(count: int) -> str:
    return "1 key" if count == 1 else f"{count} keys"


def _note(message: str) -> None:
    print(f"mrtr-state: {message}", file=sys.stderr)
