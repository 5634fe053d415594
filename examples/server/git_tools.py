"""``delete_branch``: a risky action that needs the person's yes, bound to the exact request.

The first call asks the person to confirm, showing the branch and the commit it
points at; the state it seals holds that commit. The retry deletes only if the
answer is yes, the state was sealed for this user, this tool and these exact
arguments (the boundary checks all three before this code runs), and the branch
still points at the commit the person saw. The boundary redeems the state once
(``single_use``), so a confirmed state cannot be replayed. A yes that arrives
without a state the server sealed is not a yes: the tool asks again.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult, ToolAnnotations

from mrtr_state.mcp import input_required, read_retry


@dataclass
class Repository:
    """One repository: its default branch and the head commit of every branch."""

    default_branch: str
    branches: dict[str, str] = field(default_factory=dict)


class GitHost:
    """A small in-memory git host; safe to share between threads."""

    def __init__(self, repositories: Mapping[str, Repository]) -> None:
        self._repositories = dict(repositories)
        self._lock = threading.Lock()

    def head(self, repo: str, branch: str) -> str:
        """The commit ``branch`` points at; a tool error if there is no such branch."""
        with self._lock:
            repository = self._repositories.get(repo)
            if repository is None:
                raise ToolError(f"There is no repository {repo!r}.")
            head = repository.branches.get(branch)
            if head is None:
                raise ToolError(f"{repo} has no branch {branch!r}.")
            if branch == repository.default_branch:
                raise ToolError(f"{branch!r} is the default branch of {repo}; it cannot be deleted.")
            return head

    def delete(self, repo: str, branch: str, *, head: str) -> bool:
        """Delete ``branch`` if it still points at ``head``; ``False`` if it moved or is gone."""
        with self._lock:
            branches = self._repositories[repo].branches
            if branches.get(branch) != head:
                return False
            del branches[branch]
            return True

    def branches(self, repo: str) -> list[str]:
        """The branch names of ``repo``."""
        with self._lock:
            return sorted(self._repositories[repo].branches)


def example_host(*, load_branches: int = 0) -> GitHost:
    """The repositories the example server starts with.

    ``load_branches``: also a repository ``acme/load`` with that many branches
    (``load-0``, ``load-1``, ...) besides ``main``, for load tests.
    """
    load = {"main": "0000000"} | {f"load-{i}": f"{i:07x}" for i in range(load_branches)}
    extra = {"acme/load": Repository("main", load)} if load_branches else {}
    return GitHost(
        {
            **extra,
            "acme/api": Repository(
                "main",
                {
                    "main": "9f2c1e7",
                    "old-feature": "4b1d0aa",
                    "release-1.0": "77e0c3b",
                    "spike/cache": "c0ffee1",
                },
            ),
            "acme/web": Repository("main", {"main": "1a2b3c4", "redesign": "5d6e7f8"}),
        }
    )


def _confirm(repo: str, branch: str, head: str) -> InputRequiredResult:
    question = ElicitRequest(
        params=ElicitRequestFormParams(
            message=f"Delete branch {branch!r} of {repo} (at commit {head})? This cannot be undone.",
            requested_schema={
                "type": "object",
                "properties": {"confirm": {"type": "boolean", "title": f"Delete {branch}"}},
                "required": ["confirm"],
            },
        )
    )
    return input_required({"confirm": question}, state={"head": head})


def add_git_tools(server: MCPServer, host: GitHost) -> None:
    """Register ``delete_branch`` on ``server``."""

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=False))
    def delete_branch(repo: str, branch: str, ctx: Context) -> str | InputRequiredResult:
        """Delete a branch of a repository, after the person confirms this exact branch and commit."""
        head = host.head(repo, branch)
        capabilities = ctx.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            raise ToolError("delete_branch needs a client that can ask the person (elicitation).")
        retry = read_retry(ctx)
        if retry.state is None:
            return _confirm(repo, branch, head)
        if retry.declined("confirm"):
            return f"Kept branch {branch!r} of {repo}: the deletion was not confirmed."
        answer = retry.accepted("confirm")
        if answer is None:
            return _confirm(repo, branch, head)  # no answer yet: ask again
        if answer.get("confirm") is not True:
            return f"Kept branch {branch!r} of {repo}: the deletion was not confirmed."
        if retry.state.get("head") != head or not host.delete(repo, branch, head=head):
            return _confirm(repo, branch, head)  # the branch moved since the person saw it
        return f"Deleted branch {branch!r} of {repo} (it was at {head})."
