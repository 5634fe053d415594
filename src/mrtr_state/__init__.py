"""Signed, user- and tool-bound ``requestState`` for MCP multi round-trip requests.

A stateless MCP server that answers ``input_required`` keeps what it learned in
``requestState``, which travels through the client. This package seals that state
as a JWT of a written profile (``spec/profile.md``): signed with HS256 or EdDSA,
bound to the user (``sub``), the tool (``aud``) and optionally the request's
arguments, expiring after 10 minutes (``exp``), and opened with a strict validation
procedure whose every refusal is an :class:`InvalidRequestState` with a reason code.

Implements rule AGT-18 of the Agent Wranglers agents-as-users playbook
(https://agentwranglers.se/playbook/agents-as-users/mcp-servers/signed-request-state,
CC BY 4.0).

    >>> from mrtr_state import Keyring, StateSealer
    >>> sealer = StateSealer(Keyring.generate("EdDSA"), issuer="https://files.example.com")
    >>> token = sealer.seal({"step": 2}, user="alice", tool="deploy", arguments={"env": "prod"})
    >>> sealer.open(token, user="alice", tool="deploy", arguments={"env": "prod"})
    {'step': 2}
"""

from mrtr_state.binding.canonical import arguments_digest, canonicalize
from mrtr_state.binding.target import audience
from mrtr_state.contracts import Claims
from mrtr_state.errors import REASONS, InvalidRequestState, KeyringError, Reason
from mrtr_state.keys.keys import ALGORITHMS, DEFAULT_KEYS_VARIABLE, Key, Keyring
from mrtr_state.replay.replay import AsyncReplayStore, MemoryReplayStore, ReplayStore, ReplayStoreError
from mrtr_state.sealer import (
    DEFAULT_LEEWAY,
    DEFAULT_MAX_LIFETIME,
    DEFAULT_MAX_TOKEN_BYTES,
    DEFAULT_TTL,
    StateSealer,
)
from mrtr_state.token.jws import TYP, decode_unverified

__all__ = [
    "ALGORITHMS",
    "DEFAULT_KEYS_VARIABLE",
    "DEFAULT_LEEWAY",
    "DEFAULT_MAX_LIFETIME",
    "DEFAULT_MAX_TOKEN_BYTES",
    "DEFAULT_TTL",
    "PROFILE_VERSION",
    "REASONS",
    "TYP",
    "AsyncReplayStore",
    "Claims",
    "InvalidRequestState",
    "Key",
    "Keyring",
    "KeyringError",
    "MemoryReplayStore",
    "Reason",
    "ReplayStore",
    "ReplayStoreError",
    "StateSealer",
    "__version__",
    "arguments_digest",
    "audience",
    "canonicalize",
    "decode_unverified",
]

__version__ = "0.1.0"

#: The version of ``spec/profile.md`` this library implements.
PROFILE_VERSION = "1"
