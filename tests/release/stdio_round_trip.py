"""Drive the documented stdio MCP server through one round trip, from an installed package.

Run by tests/release/test_artifacts.py with the fresh environment's Python, outside the
clone: ``python stdio_round_trip.py SERVER_FILE``, with MRTR_STATE_KEYS set. Prints the
three results it got, one per line: the first round's result type, the reason a changed
state is refused with, and the confirmed call's text.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult, ElicitResult, InputRequiredResult

YES = {"confirm": ElicitResult(action="accept", content={"confirm": True})}
ARGUMENTS = {"branch": "old-feature"}


def changed(token: str) -> str:
    header, payload, signature = token.split(".")
    i = len(payload) // 2
    return f"{header}.{payload[:i]}{'A' if payload[i] != 'A' else 'B'}{payload[i + 1 :]}.{signature}"


async def main(server_file: str) -> None:
    server = StdioServerParameters(
        command=sys.executable, args=[server_file], env={"MRTR_STATE_KEYS": os.environ["MRTR_STATE_KEYS"]}
    )
    async with Client(server) as client:

        async def call(state: str | None = None, responses: Any = None) -> Any:
            return await client.session.call_tool(
                "delete_branch",
                ARGUMENTS,
                allow_input_required=True,
                request_state=state,
                input_responses=responses,
            )

        asked = await call()
        assert isinstance(asked, InputRequiredResult), asked
        print("input_required")
        refused = await call(changed(asked.request_state or ""), YES)
        assert isinstance(refused, CallToolResult), refused
        print((refused.meta or {}).get("io.github.mrtr-state/reason"))
        done = await call(asked.request_state, YES)
        assert isinstance(done, CallToolResult), done
        print(done.content[0].text)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
