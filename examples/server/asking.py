"""A prompt and a resource that ask before they answer: ``review_branch`` and ``trips://fares/{destination}``.

They show that a ``requestState`` is sealed and opened on ``prompts/get`` and ``resources/read`` as on
``tools/call``: the first round answers ``input_required`` with an elicitation and a state the
:class:`~mrtr_state.mcp.StateBoundary` seals (bound to the user, ``prompts/get:review_branch`` and the
prompt's arguments, or ``resources/read:trips://fares/Lisbon``); the retry with the answer completes. Every
example server, in every language, has both with this behaviour, so the edge inputs of profile 8.2 on
these methods get one answer everywhere (tests/crosslang/test_edge_inputs.py).

- ``review_branch`` (arguments ``repo``, default ``acme/api``, and ``branch``, default ``main``, both
  optional): asks what the review should focus on, then gives one user message naming the branch and the
  focus.
- ``trips://fares/{destination}`` (a template: ``trips://fares/Lisbon``): asks whether the person leaves on
  a weekend, then gives the return fare (15% more on a weekend); a destination the airline does not fly
  to is said at once, without asking.
"""

from __future__ import annotations

from typing import Final

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

from mrtr_state.mcp import input_required, read_retry
from server.trips import DESTINATIONS

#: The URI template of the resource that asks.
FARES_URI: Final = "trips://fares/{destination}"


def _ask(message: str, field: str, kind: str) -> ElicitRequest:
    return ElicitRequest(
        params=ElicitRequestFormParams(
            message=message,
            requested_schema={
                "type": "object",
                "properties": {field: {"type": kind}},
                "required": [field],
            },
        )
    )


def fare_text(destination: str, *, weekend: bool) -> str:
    """The text of ``trips://fares/<destination>``: the return fare, 15% more for a weekend departure."""
    base = DESTINATIONS[destination]
    if weekend:
        return f"Return fare to {destination}, leaving on a weekend: {round(base * 1.15)} EUR."
    return f"Return fare to {destination}: {base} EUR."


def add_asking_prompt_and_resource(server: MCPServer) -> None:
    """Register the ``review_branch`` prompt and the ``trips://fares`` resource on ``server``."""

    @server.prompt()
    def review_branch(
        ctx: Context, repo: str = "acme/api", branch: str = "main"
    ) -> list[Message] | InputRequiredResult:
        """Review a branch, after the person says what to focus on."""
        retry = read_retry(ctx)
        answer = retry.accepted("focus")
        if retry.state is None or answer is None or not isinstance(answer.get("focus"), str):
            return input_required(
                {"focus": _ask(f"What should the review of {branch} in {repo} focus on?", "focus", "string")},
                state={"asked": "focus"},
            )
        return [UserMessage(f"Review branch {branch} of {repo}, focusing on: {answer['focus']}.")]

    @server.resource(FARES_URI, mime_type="text/plain")
    def fares(destination: str, ctx: Context) -> str | InputRequiredResult:
        """The return fare to a destination, after the person says whether they leave on a weekend."""
        if destination not in DESTINATIONS:
            return f"The example airline does not fly to {destination}."
        retry = read_retry(ctx)
        answer = retry.accepted("weekend")
        if retry.state is None or answer is None or not isinstance(answer.get("weekend"), bool):
            return input_required(
                {"weekend": _ask(f"Do you leave for {destination} on a weekend?", "weekend", "boolean")},
                state={"asked": "weekend"},
            )
        return fare_text(destination, weekend=answer["weekend"])
