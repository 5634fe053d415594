/**
 * Who a `requestState` belongs to: the principal the profile writes into `sub`.
 *
 * The TypeScript SDK's `AuthInfo` (what its bearer authentication puts on `ctx.http.authInfo`) has
 * `token`, `clientId`, `scopes`, `expiresAt`, `resource` and a free-form `extra`, but no subject: the
 * resource owner is not part of the type. `clientId` is the OAuth client, which many users may share,
 * so binding to it would let one user open another's state. The default principal therefore reads
 * `authInfo.extra.sub`: the token verifier (`OAuthTokenVerifier.verifyAccessToken`) must put the token's
 * subject there (RFC 9068 `sub`, or the introspection response's `sub`). Without it the boundary refuses
 * rather than bind nothing; a server without authentication gives a principal explicitly.
 */

import type { ServerContext } from "@modelcontextprotocol/server";

/**
 * How a `StateBoundary` learns the user: a fixed string (every request is that one user: a deliberate
 * choice, e.g. a single-user stdio server), or a function of the request context returning the user, or
 * `undefined` when there is none.
 */
export type Principal = string | ((ctx: ServerContext) => string | undefined);

/** The subject the bearer token verifier recorded in `AuthInfo.extra.sub`, or `undefined` without one. */
export function authenticatedSubject(ctx: ServerContext): string | undefined {
  const sub = ctx.http?.authInfo?.extra?.sub;
  return typeof sub === "string" && sub !== "" ? sub : undefined;
}
