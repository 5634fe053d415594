/**
 * The mrtr-state example MCP server in TypeScript: `delete_branch` and `book_trip` over Streamable HTTP on
 * loopback (with the prompt `review_branch` and the resource template `trips://fares/{destination}`, which
 * ask once too), with bearer-token users, on `@modelcontextprotocol/server` and the `mrtr-state` package. The
 * twin of examples/server (Python): same tools, same users, same issuer and key ring (MRTR_STATE_KEYS),
 * and with `--redis-url` the same replay store, so the two serve one fleet.
 *
 *   node dist/main.js [--host 127.0.0.1] [--port 0] [--issuer URL] [--ttl 600]
 *                     [--tool-refusal tool_error|jsonrpc] [--redis-url redis://...] [--dev-key]
 *                     [--stdio [--stdio-user USER]]
 *
 * Prints "example server: listening on http://HOST:PORT/mcp (...)" once it accepts connections. With
 * `--stdio` it serves the same tools over standard input and output instead, for one user (`--stdio-user`,
 * by default the login name), to whom every state is bound.
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { userInfo } from "node:os";
import { parseArgs } from "node:util";

import {
  createMcpHandler,
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  McpServer,
  OAuthError,
  OAuthErrorCode,
  requireBearerAuth,
  validateHostHeader,
  type AuthInfo,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { audience, Keyring, KeyringError, MemoryReplayStore, StateSealer, type ReplayStore } from "mrtr-state";
import { StateBoundary, withErrorStatus, type ToolRefusal } from "mrtr-state/mcp";
import { RedisReplayStore } from "mrtr-state/redis";

import { addAskingPromptAndResource } from "./asking.js";
import { addGitTools, exampleHost } from "./git-tools.js";
import { addTripTools, Airline } from "./trips.js";

/** The issuer the example seals with unless told otherwise (the Python example's). */
const DEFAULT_ISSUER = "https://tools.example.com";
const DEFAULT_TTL = 600;
const SCOPE = "tools";
/** The example's users, as the Python example has them. */
const EXAMPLE_TOKENS: Readonly<Record<string, string>> = { "alice-example-token": "alice", "bob-example-token": "bob" };

class UsageError extends Error {}

function options(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: "string", default: "127.0.0.1" },
      port: { type: "string", default: "0" },
      issuer: { type: "string", default: DEFAULT_ISSUER },
      ttl: { type: "string", default: String(DEFAULT_TTL) },
      "tool-refusal": { type: "string", default: "tool_error" },
      "redis-url": { type: "string" },
      "dev-key": { type: "boolean", default: false },
      stdio: { type: "boolean", default: false },
      "stdio-user": { type: "string" },
    },
    strict: true,
  });
  const port = Number(values.port);
  const ttl = Number(values.ttl);
  if (!Number.isSafeInteger(port) || port < 0 || port > 65535) throw new UsageError("--port must be an integer from 0 to 65535");
  if (!Number.isSafeInteger(ttl) || ttl < 1) throw new UsageError("--ttl must be an integer of at least 1");
  const toolRefusal = values["tool-refusal"];
  if (toolRefusal !== "tool_error" && toolRefusal !== "jsonrpc") throw new UsageError("--tool-refusal must be tool_error or jsonrpc");
  return { host: values.host ?? "127.0.0.1", port, issuer: values.issuer ?? DEFAULT_ISSUER, ttl, toolRefusal: toolRefusal as ToolRefusal, redisUrl: values["redis-url"], devKey: values["dev-key"] === true, stdio: values.stdio === true, stdioUser: values["stdio-user"] };
}

/** A token verifier over the fixed token-to-user map: the user goes to `extra.sub`, where the boundary reads it. */
const verifier = {
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const user = Object.hasOwn(EXAMPLE_TOKENS, token) ? EXAMPLE_TOKENS[token] : undefined;
    if (user === undefined) throw new OAuthError(OAuthErrorCode.InvalidToken, "unknown token");
    // The bearer helpers refuse a token without an expiry; the example tokens live an hour from each use.
    return { token, clientId: "example-client", scopes: [SCOPE], expiresAt: Math.floor(Date.now() / 1000) + 3600, extra: { sub: user } };
  },
};

/** The largest request body read (the SDK's own default cap): a larger one is answered 413 unread. */
const MAX_BODY_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE;
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];

/** The Host names this server answers to: the loopback names, and the address it listens on. */
function allowedHostnames(listenHost: string): string[] {
  const own = listenHost.includes(":") ? `[${listenHost}]` : listenHost;
  return LOOPBACK_NAMES.includes(own) ? LOOPBACK_NAMES : [...LOOPBACK_NAMES, own];
}

function headersOf(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) value.forEach((item) => headers.append(name, item));
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}

/**
 * The request's body, read only now (after the Host and bearer checks) and never past `MAX_BODY_BYTES`:
 * `undefined` when it is larger (by its Content-Length, or once that many bytes have arrived).
 */
async function readBody(req: IncomingMessage): Promise<Uint8Array<ArrayBuffer> | undefined> {
  if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return undefined;
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of req) {
    received += (chunk as Buffer).byteLength;
    if (received > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  const body = new Uint8Array(received);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * Answer without reading what is left of the request's body: the connection is closed once the answer
 * is written, so a client cannot make the server read (or hold) a body it will never use.
 */
async function refuse(req: IncomingMessage, res: ServerResponse, response: Response): Promise<void> {
  res.shouldKeepAlive = false;
  await send(res, response);
  if (!req.complete) req.socket.destroySoon();
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body !== null) {
    for await (const chunk of response.body) res.write(chunk);
  }
  res.end();
}

async function main(argv: string[]): Promise<number> {
  let settings: ReturnType<typeof options>;
  try {
    settings = options(argv);
  } catch (error) {
    process.stderr.write(`example server: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  let ring: Keyring;
  try {
    if (settings.devKey) {
      process.stderr.write(
        "example server: WARNING: --dev-key: sealing with an EPHEMERAL key generated now. Every requestState dies with this " +
          "process and no other replica can open it. Development only; set MRTR_STATE_KEYS for anything else.\n",
      );
      ring = Keyring.generate("EdDSA");
    } else {
      ring = Keyring.fromEnv();
    }
  } catch (error) {
    if (!(error instanceof KeyringError)) throw error;
    process.stderr.write(`example server: ${error.message}\nexample server: or start it with --dev-key for an ephemeral development key\n`);
    return 2;
  }
  let replayStore: ReplayStore;
  let closeStore = async () => {};
  if (settings.redisUrl !== undefined) {
    const store = await RedisReplayStore.fromUrl(settings.redisUrl);
    replayStore = store;
    closeStore = () => store.close();
  } else {
    replayStore = new MemoryReplayStore();
  }
  const sealer = new StateSealer(ring, { issuer: settings.issuer, ttl: settings.ttl, maxLifetime: Math.max(settings.ttl, DEFAULT_TTL), replayStore });
  // One host and one airline for the process; a fresh McpServer per request (the stateless handler's way).
  const host = exampleHost();
  const airline = new Airline();
  // Over stdio there is no bearer token: the one user of a local server is chosen here, deliberately.
  const stdioUser = settings.stdio ? (settings.stdioUser ?? userInfo().username) : undefined;
  const factory = () => {
    const server = new McpServer({ name: "mrtr-state-example-ts", version: "1.0.0" }, { instructions: "Delete branches (after the person confirms) and book trips." });
    addGitTools(server, host);
    addTripTools(server, airline);
    addAskingPromptAndResource(server);
    new StateBoundary(sealer, {
      toolRefusal: settings.toolRefusal,
      singleUse: [audience({ tool: "delete_branch" }), audience({ tool: "book_trip" })],
      ...(stdioUser === undefined ? {} : { principal: stdioUser }),
    }).install(server);
    return server;
  };
  if (stdioUser !== undefined) {
    process.stderr.write(`example server: serving stdio (delete_branch, book_trip, ttl ${settings.ttl} s) for ${stdioUser}\n`);
    const served = serveStdio(factory);
    await new Promise<void>((resolve) => {
      process.stdin.once("close", () => resolve());
      process.once("SIGTERM", () => resolve());
      process.once("SIGINT", () => resolve());
    });
    await served.close();
    await closeStore();
    return 0;
  }
  const handler = createMcpHandler(factory);
  const gate = requireBearerAuth({ verifier, requiredScopes: [SCOPE] });
  const hostnames = allowedHostnames(settings.host);
  const http = createServer((req, res) => {
    (async () => {
      // DNS rebinding protection, as the Python example has it: a foreign Host is answered 421.
      if (!validateHostHeader(req.headers.host, hostnames).ok) {
        return refuse(req, res, new Response("Invalid Host header", { status: 421 }));
      }
      const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
      if (url.pathname !== "/mcp") return refuse(req, res, new Response("Not found", { status: 404 }));
      // The bearer check reads the headers only: an unauthenticated request's body is never read.
      const headers = headersOf(req);
      const method = req.method ?? "GET";
      const auth = await gate(new Request(url, { method, headers }));
      if (auth instanceof Response) return refuse(req, res, auth);
      const body = method === "GET" || method === "HEAD" ? null : await readBody(req);
      if (body === undefined) {
        return refuse(req, res, new Response(`Payload Too Large: the request body must not exceed ${MAX_BODY_BYTES} bytes`, { status: 413 }));
      }
      // A JSON-RPC -32602 answer (a refusal in the jsonrpc mode, arguments that cannot be bound) goes out with
      // HTTP 400 as MCP 2026-07-28 (SEP-2575) says and the Python, Go and Java example servers send it; the
      // SDK's handler sends 200 for it.
      const request = new Request(url, { method, headers, body });
      return send(res, await withErrorStatus(request, await handler.fetch(request, { authInfo: auth })));
    })().catch((error: unknown) => {
      process.stderr.write(`example server: request failed: ${error instanceof Error ? error.name : typeof error}\n`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(settings.port, settings.host, () => resolve());
  }).catch((error: NodeJS.ErrnoException) => {
    process.stderr.write(`example server: cannot listen on ${settings.host}:${settings.port}: ${error.code ?? error.message}\n`);
    process.exit(2);
  });
  const { port } = http.address() as AddressInfo;
  const shown = settings.host.includes(":") ? `[${settings.host}]` : settings.host;
  process.stdout.write(`example server: listening on http://${shown}:${port}/mcp (delete_branch, book_trip, ttl ${settings.ttl} s)\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
  await handler.close();
  await closeStore();
  return 0;
}

main(process.argv.slice(2)).then(
  (status) => {
    process.exitCode = status;
  },
  (error: unknown) => {
    process.stderr.write(`example server: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
