/**
 * The prompt and the resource that ask before they answer (the twins of examples/server/asking.py): the
 * first round answers `input_required` with an elicitation and a state the boundary seals (bound to the user,
 * the target and, for the prompt, its arguments); the retry with the answer completes.
 *
 * - `review_branch` (arguments `repo`, default `acme/api`, and `branch`, default `main`, both optional): asks
 *   what the review should focus on, then gives one user message naming the branch and the focus.
 * - `trips://fares/{destination}` (a template: `trips://fares/Lisbon`): asks whether the person leaves on a
 *   weekend, then gives the return fare (15% more on a weekend); a destination the airline does not fly to
 *   is said at once, without asking.
 */

import { inputRequired as sdk, ResourceTemplate, type McpServer } from "@modelcontextprotocol/server";
import { inputRequired, readRetry } from "mrtr-state/mcp";
import * as z from "zod";

import { DESTINATIONS } from "./trips.js";

/** The URI template of the resource that asks. */
export const FARES_TEMPLATE = "trips://fares/{destination}";

function ask(message: string, field: string, property: { type: "string" } | { type: "boolean" }) {
  return sdk.elicit({ message, requestedSchema: { type: "object", properties: { [field]: property }, required: [field] } });
}

/** The text of `trips://fares/<destination>`: the return fare, 15% more for a weekend departure. */
export function fareText(destination: string, weekend: boolean): string {
  const base = DESTINATIONS[destination] ?? 0;
  return weekend ? `Return fare to ${destination}, leaving on a weekend: ${Math.round(base * 1.15)} EUR.` : `Return fare to ${destination}: ${base} EUR.`;
}

/** Register the `review_branch` prompt and the `trips://fares/{destination}` resource template on `server`. */
export function addAskingPromptAndResource(server: McpServer): void {
  server.registerPrompt(
    "review_branch",
    {
      description: "Review a branch, after the person says what to focus on.",
      argsSchema: z.object({ repo: z.string().optional(), branch: z.string().optional() }),
    },
    async ({ repo = "acme/api", branch = "main" }, ctx) => {
      const retry = readRetry(ctx);
      const focus = retry.accepted("focus")?.focus;
      if (retry.state === undefined || typeof focus !== "string") {
        return inputRequired({ focus: ask(`What should the review of ${branch} in ${repo} focus on?`, "focus", { type: "string" }) }, { state: { asked: "focus" } });
      }
      return { messages: [{ role: "user", content: { type: "text", text: `Review branch ${branch} of ${repo}, focusing on: ${focus}.` } }] };
    },
  );
  server.registerResource(
    "fares",
    new ResourceTemplate(FARES_TEMPLATE, { list: undefined }),
    { description: "The return fare to a destination, after the person says whether they leave on a weekend.", mimeType: "text/plain" },
    async (uri, variables, ctx) => {
      const destination = String(variables.destination);
      const contents = (text: string) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text }] });
      if (!Object.hasOwn(DESTINATIONS, destination)) return contents(`The example airline does not fly to ${destination}.`);
      const retry = readRetry(ctx);
      const weekend = retry.accepted("weekend")?.weekend;
      if (retry.state === undefined || typeof weekend !== "boolean") {
        return inputRequired({ weekend: ask(`Do you leave for ${destination} on a weekend?`, "weekend", { type: "boolean" }) }, { state: { asked: "weekend" } });
      }
      return contents(fareText(destination, weekend));
    },
  );
}
