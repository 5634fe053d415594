"""The boundary with an A256GCM ring: encrypted states the client cannot read, and every refusal still.

The example server in process, through the SDK's own client, with an injected clock.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from joserfc import jwe
from joserfc.jwk import OctKey
from mcp.client import Client
from mcp_types import CallToolResult, InputRequiredResult
from server.app import build_server

from conftest import (
    BROKEN_RETRIES,
    OLD_FEATURE,
    YES,
    Clock,
    as_user,
    never_asked,
    refusal_reason,
    retry_broken,
)
from mrtr_state import InvalidRequestState, Key, Keyring, MemoryReplayStore, StateSealer, decode_unverified
from mrtr_state.token._b64 import decode

ISSUER = "https://tools.example.com"
HEAD = "4b1d0aa"  # the example's branch head, which the state remembers


def make_server(clock: Clock, ring: Keyring) -> Any:
    sealer = StateSealer(ring, issuer=ISSUER, clock=clock, replay_store=MemoryReplayStore(clock=clock))
    return build_server(sealer)


async def first_state(client: Client, user: str = "alice") -> str:
    with as_user(user):
        asked = await client.session.call_tool("delete_branch", OLD_FEATURE, allow_input_required=True)
    assert isinstance(asked, InputRequiredResult), asked
    assert asked.request_state is not None
    return asked.request_state


async def retry(client: Client, user: str, tool: str, arguments: dict[str, Any], state: str) -> Any:
    with as_user(user):
        return await client.session.call_tool(
            tool, arguments, allow_input_required=True, request_state=state, input_responses=YES
        )


def changed_in_the_ciphertext(token: str) -> str:
    header, key, iv, ciphertext, tag = token.split(".")
    i = len(ciphertext) // 2
    ciphertext = ciphertext[:i] + ("A" if ciphertext[i] != "A" else "B") + ciphertext[i + 1 :]
    return f"{header}.{key}.{iv}.{ciphertext}.{tag}"


def test_with_an_a256gcm_ring_the_boundary_emits_states_the_client_cannot_read() -> None:
    ring = Keyring.generate("A256GCM")
    server = make_server(Clock(), ring)

    async def scenario() -> tuple[str, CallToolResult]:
        async with Client(server, elicitation_callback=never_asked) as client:
            state = await first_state(client)
            done = await retry(client, "alice", "delete_branch", OLD_FEATURE, state)
        return state, done

    state, done = anyio.run(scenario)
    assert state.count(".") == 4
    assert not done.is_error, done
    assert "Deleted branch 'old-feature'" in done.content[0].text  # type: ignore[union-attr]
    with pytest.raises(InvalidRequestState):
        decode_unverified(state)  # a JWT reader gets nothing out of it
    readable = b"".join(decode(part) for part in state.split(".") if part)
    for hidden in (b"alice", HEAD.encode(), b"delete_branch", b"old-feature", ISSUER.encode()):
        assert hidden not in readable
    # The server's key, and only the key, reads it: here an independent JWE library.
    secret = decode(ring.keys[0].private_jwk()["k"])
    opened = jwe.decrypt_compact(state, OctKey.import_key(secret), algorithms=["dir", "A256GCM"])
    assert b'"sub":"alice"' in (opened.plaintext or b"")
    assert HEAD.encode() in (opened.plaintext or b"")


@pytest.mark.parametrize(("rule", "reason"), BROKEN_RETRIES)
def test_an_encrypted_state_is_refused_as_a_tool_error(rule: str, reason: str) -> None:
    clock = Clock()
    server = make_server(clock, Keyring.generate("A256GCM"))

    async def scenario() -> Any:
        async with Client(server, elicitation_callback=never_asked) as client:
            state = await first_state(client)
            return await retry_broken(client, clock, rule, state, change=changed_in_the_ciphertext)

    assert refusal_reason(anyio.run(scenario)) == reason


def test_during_a_move_to_the_encrypted_form_both_forms_open_at_the_boundary() -> None:
    clock = Clock()
    signing, encrypting = Key.generate("EdDSA"), Key.generate("A256GCM")
    old = make_server(clock, Keyring([signing, encrypting]))  # step 1: the new key second
    new = make_server(clock, Keyring([encrypting, signing]))  # step 2: the new key first

    async def scenario() -> list[Any]:
        results = []
        async with (
            Client(old, elicitation_callback=never_asked) as old_client,
            Client(new, elicitation_callback=never_asked) as new_client,
        ):
            signed = await first_state(old_client)
            encrypted = await first_state(new_client)
            assert (signed.count("."), encrypted.count(".")) == (2, 4)
            results.append(await retry(new_client, "alice", "delete_branch", OLD_FEATURE, signed))
            results.append(await retry(old_client, "alice", "delete_branch", OLD_FEATURE, encrypted))
        return results

    for result in anyio.run(scenario):
        assert not result.is_error, result
