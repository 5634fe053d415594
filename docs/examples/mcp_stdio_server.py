from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

from mrtr_state import Keyring, MemoryReplayStore, StateSealer, audience
from mrtr_state.mcp import StateBoundary, input_required, read_retry

BRANCHES = {"old-feature": "4b1d0aa", "main": "9f2c1e7"}  # your repository: branch -> head commit

sealer = StateSealer(
    Keyring.from_env(),  # MRTR_STATE_KEYS: a JWKS or an HS256 secret
    issuer="https://git.example.com",  # this service: the token's iss
    replay_store=MemoryReplayStore(),  # single-use states (a shared store across replicas)
)
server = MCPServer("git")
# A local stdio server has one user and no authentication: bind every state to that user, deliberately.
# A server that several people reach authenticates them instead (the HTTP form, docs/mcp.md).
StateBoundary(sealer, principal="local-user", single_use={audience(tool="delete_branch")}).install(server)

CONFIRM = ElicitRequest(
    params=ElicitRequestFormParams(
        message="Delete it? This cannot be undone.",
        requested_schema={
            "type": "object",
            "properties": {"confirm": {"type": "boolean"}},
            "required": ["confirm"],
        },
    )
)


@server.tool()
def delete_branch(branch: str, ctx: Context) -> str | InputRequiredResult:
    """Delete a branch, once the person confirms."""
    head = BRANCHES.get(branch)
    if head is None:
        return f"No branch {branch!r}."
    retry = read_retry(ctx)  # the verified state and the client's answers
    if retry.state is None:  # first round: ask, and remember what was shown
        return input_required({"confirm": CONFIRM}, state={"head": head})
    answer = retry.accepted("confirm")
    if answer is None:  # no answer yet: ask again, do not fail
        return input_required({"confirm": CONFIRM}, state={"head": head})
    if answer.get("confirm") is not True or retry.state["head"] != head:
        return "Kept."
    del BRANCHES[branch]
    return f"Deleted {branch} (it was at {head})."


if __name__ == "__main__":
    server.run("stdio")
