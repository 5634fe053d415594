import hmac
import json
import os

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult
from pydantic import AnyHttpUrl

from mrtr_state import Keyring, MemoryReplayStore, StateSealer, audience
from mrtr_state.mcp import StateBoundary, input_required, read_retry

BRANCHES = {"old-feature": "4b1d0aa", "main": "9f2c1e7"}  # your repository: branch -> head commit
PORT = int(os.environ.get("PORT", "8000"))
RESOURCE = f"http://127.0.0.1:{PORT}/mcp"  # this server: the resource its bearer tokens are issued for


class BearerTokens:
    """The SDK's TokenVerifier: a bearer token's user, as AccessToken.subject (the user states bind to).

    A stand-in for your identity provider (token introspection, or a JWT access token): here a fixed
    map from token to user, BEARER_TOKENS='{"<token>": "alice", ...}'. A real one returns as resource
    the token's audience (its RFC 8707 resource indicator), which the SDK compares with RESOURCE.
    """

    def __init__(self, users: dict[str, str]) -> None:
        self.users = users

    async def verify_token(self, token: str) -> AccessToken | None:
        for known, user in self.users.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                return AccessToken(
                    token=token, client_id="git-client", scopes=["git"], subject=user, resource=RESOURCE
                )
        return None  # unknown token: the SDK answers 401


sealer = StateSealer(
    Keyring.from_env(),  # MRTR_STATE_KEYS: a JWKS or an HS256 secret
    issuer="https://git.example.com",  # this service: the token's iss
    replay_store=MemoryReplayStore(),  # single-use states (a shared store across replicas)
)
server = MCPServer(
    "git",
    token_verifier=BearerTokens(json.loads(os.environ["BEARER_TOKENS"])),
    auth=AuthSettings(
        issuer_url=AnyHttpUrl("https://auth.example.com"),  # who issues the bearer tokens
        resource_server_url=AnyHttpUrl(RESOURCE),  # this server
        validate_token_resource=True,  # refuse a bearer token issued for another server
        required_scopes=["git"],
    ),
)
# Every state is bound to the AccessToken.subject of the request's bearer token.
StateBoundary(sealer, single_use={audience(tool="delete_branch")}).install(server)

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
    retry = read_retry(ctx)  # the verified state (this user's, this tool's, these arguments')
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
    server.run("streamable-http", host="127.0.0.1", port=PORT)
