import os
from typing import Any

import anyio
import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, ElicitResult, InputRequiredResult, InputResponses, TextContent

URL = os.environ.get("MCP_URL", "http://127.0.0.1:8000/mcp")
TOKEN = os.environ["BEARER_TOKEN"]  # the user's bearer token, as the server's BEARER_TOKENS knows it
YES: InputResponses = {"confirm": ElicitResult(action="accept", content={"confirm": True})}
BRANCH = {"branch": "old-feature"}


def one_character_changed(state: str) -> str:
    parts = state.split(".")  # the signed form's payload, or the encrypted form's ciphertext
    middle = len(parts[-2]) // 2
    parts[-2] = parts[-2][:middle] + ("A" if parts[-2][middle] != "A" else "B") + parts[-2][middle + 1 :]
    return ".".join(parts)


def outcome(result: Any) -> str:
    if not isinstance(result, CallToolResult):
        raise SystemExit(f"unexpected result: {result}")
    if result.is_error:  # a refused state: the reason code is in _meta
        return f"refused: {(result.meta or {}).get('io.github.mrtr-state/reason')}"
    return " ".join(part.text for part in result.content if isinstance(part, TextContent))


async def main() -> None:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
        Client(streamable_http_client(URL, http_client=http)) as client,
    ):
        asked = await client.session.call_tool("delete_branch", BRANCH, allow_input_required=True)
        if not isinstance(asked, InputRequiredResult):
            raise SystemExit(f"expected the tool to ask: {asked}")
        state = asked.request_state or ""
        print("asked to confirm")

        # A client that changes the state is refused before the tool runs.
        changed = await client.session.call_tool(
            "delete_branch", BRANCH, allow_input_required=True,
            request_state=one_character_changed(state), input_responses=YES,
        )
        print("changed state:", outcome(changed))

        # The retry with the state as sealed, and the person's yes.
        done = await client.session.call_tool(
            "delete_branch", BRANCH, allow_input_required=True, request_state=state, input_responses=YES
        )
        print("sealed state:", outcome(done))


anyio.run(main)
