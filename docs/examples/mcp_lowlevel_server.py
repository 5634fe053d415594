from typing import Any

from mcp.server.lowlevel import Server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

from mrtr_state import Keyring, StateSealer
from mrtr_state.mcp import StateBoundary, input_required, read_retry

CONFIRM = ElicitRequest(
    params=ElicitRequestFormParams(
        message="Deploy?",
        requested_schema={"type": "object", "properties": {"confirm": {"type": "boolean"}}},
    )
)


async def list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
    schema = {"type": "object", "properties": {"env": {"type": "string"}}, "required": ["env"]}
    return ListToolsResult(tools=[Tool(name="deploy", input_schema=schema)])


async def call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult | InputRequiredResult:
    retry = read_retry(params)  # the lowlevel handler's params: the verified state and the answers
    env = (params.arguments or {}).get("env")
    if retry.state is None or retry.accepted("confirm") is None:
        return input_required({"confirm": CONFIRM}, state={"env": env})
    return CallToolResult(content=[TextContent(text=f"Deployed to {retry.state['env']}.")])


sealer = StateSealer(Keyring.from_env(), issuer="https://deploy.example.com")
server: Server[Any] = Server("deployer", on_call_tool=call_tool, on_list_tools=list_tools)
StateBoundary(sealer, principal="operator").install(server)  # one local operator; see principal below
