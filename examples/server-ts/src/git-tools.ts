/**
 * `delete_branch`: a risky action that needs the person's yes, bound to the exact request (the twin of
 * examples/server/git_tools.py, with the same state, so a state either server seals the other continues).
 *
 * The first call asks the person to confirm, showing the branch and the commit it points at; the state it
 * seals holds that commit. The retry deletes only if the answer is yes, the state was sealed for this user,
 * this tool and these exact arguments (the boundary checks all three before this code runs), and the branch
 * still points at the commit the person saw. The boundary redeems the state once, so a confirmed state
 * cannot be replayed. A yes that arrives without a state the server sealed is not a yes: the tool asks again.
 */

import { inputRequired as sdk, type McpServer, type ServerContext } from "@modelcontextprotocol/server";
import { inputRequired, readRetry } from "mrtr-state/mcp";
import * as z from "zod";

import { needsElicitation, ToolFailure, text } from "./tools.js";

/** One repository: its default branch and the head commit of every branch. */
interface Repository {
  readonly defaultBranch: string;
  readonly branches: Map<string, string>;
}

/** A small in-memory git host. */
export class GitHost {
  readonly #repositories: Map<string, Repository>;

  constructor(repositories: Record<string, { defaultBranch: string; branches: Record<string, string> }>) {
    this.#repositories = new Map(
      Object.entries(repositories).map(([name, repo]) => [name, { defaultBranch: repo.defaultBranch, branches: new Map(Object.entries(repo.branches)) }]),
    );
  }

  /** The commit `branch` points at; a tool failure if there is no such branch or it is the default. */
  head(repo: string, branch: string): string {
    const repository = this.#repositories.get(repo);
    if (repository === undefined) throw new ToolFailure(`There is no repository '${repo}'.`);
    const head = repository.branches.get(branch);
    if (head === undefined) throw new ToolFailure(`${repo} has no branch '${branch}'.`);
    if (branch === repository.defaultBranch) throw new ToolFailure(`'${branch}' is the default branch of ${repo}; it cannot be deleted.`);
    return head;
  }

  /** Delete `branch` if it still points at `head`; false if it moved or is gone. */
  delete(repo: string, branch: string, head: string): boolean {
    const branches = this.#repositories.get(repo)?.branches;
    if (branches?.get(branch) !== head) return false;
    branches.delete(branch);
    return true;
  }
}

/** The repositories the example server starts with (those of the Python example). */
export function exampleHost(): GitHost {
  return new GitHost({
    "acme/api": { defaultBranch: "main", branches: { main: "9f2c1e7", "old-feature": "4b1d0aa", "release-1.0": "77e0c3b", "spike/cache": "c0ffee1" } },
    "acme/web": { defaultBranch: "main", branches: { main: "1a2b3c4", redesign: "5d6e7f8" } },
  });
}

function confirm(repo: string, branch: string, head: string) {
  const question = sdk.elicit({
    message: `Delete branch '${branch}' of ${repo} (at commit ${head})? This cannot be undone.`,
    requestedSchema: {
      type: "object",
      properties: { confirm: { type: "boolean", title: `Delete ${branch}` } },
      required: ["confirm"],
    },
  });
  return inputRequired({ confirm: question }, { state: { head } });
}

/** Register `delete_branch` on `server`. */
export function addGitTools(server: McpServer, host: GitHost): void {
  server.registerTool(
    "delete_branch",
    {
      description: "Delete a branch of a repository, after the person confirms this exact branch and commit.",
      inputSchema: z.object({ repo: z.string(), branch: z.string() }),
      annotations: { destructiveHint: true, idempotentHint: false },
    },
    async ({ repo, branch }, ctx: ServerContext) => {
      const head = host.head(repo, branch);
      needsElicitation(ctx, "delete_branch");
      const retry = readRetry(ctx);
      if (retry.state === undefined) return confirm(repo, branch, head);
      if (retry.declined("confirm")) return text(`Kept branch '${branch}' of ${repo}: the deletion was not confirmed.`);
      const answer = retry.accepted("confirm");
      if (answer === undefined) return confirm(repo, branch, head); // no answer yet: ask again
      if (answer.confirm !== true) return text(`Kept branch '${branch}' of ${repo}: the deletion was not confirmed.`);
      if (retry.state.head !== head || !host.delete(repo, branch, head)) return confirm(repo, branch, head); // it moved
      return text(`Deleted branch '${branch}' of ${repo} (it was at ${head}).`);
    },
  );
}
