/**
 * RemoteJwks: public keys over fetch, against a loopback node:http server that misbehaves (HTML, private
 * keys, secrets, an empty set, 50 MB answers, redirects, a body that never ends). Every server is
 * stopped after the file. About 4 s on a busy machine; each suite is bounded at 20 s.
 */

import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { after, before, beforeEach, describe, it } from "node:test";

import { Key, Keyring, KeyringError, RemoteJwks, StateSealer, checkJwksUrl, type KeySourceLogger, type MetricEvent } from "../src/index.js";
import { readVectors } from "./vectors.js";

const keys = readVectors("keys.json");
const PRIVATE = Keyring.fromJwks({ keys: [keys.eddsa] });
const PUBLIC_JWKS = JSON.stringify(PRIVATE.publicJwks());
const ISSUER = "https://tools.example.com";
const USER = "alice";

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A loopback JWKS server whose answer each test sets; it counts the requests it receives. */
class JwksServer {
  handler: Handler = (_request, response) => json(response, PUBLIC_JWKS);
  requests = 0;
  readonly #server: Server = createServer((request, response) => {
    this.requests++;
    this.handler(request, response);
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    const address = this.#server.address();
    assert.ok(typeof address === "object" && address !== null);
    return `http://127.0.0.1:${address.port}/jwks.json`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

function json(response: ServerResponse, body: string): void {
  response.writeHead(200, { "content-type": "application/jwk-set+json" }).end(body);
}

/** A logger that keeps every line, to check what an operator would read. */
function capture(): KeySourceLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, warn: (message) => lines.push(`warn ${message}`), info: (message) => lines.push(`info ${message}`) };
}

const server = new JwksServer();
let url = "";
let now = 0;
const clock = (): number => now;

before(async () => {
  url = await server.start();
});
after(() => server.stop());
beforeEach(() => {
  server.handler = (_request, response) => json(response, PUBLIC_JWKS);
  server.requests = 0;
  now = 1000;
});

async function loaded(options: { logger?: KeySourceLogger; metrics?: (event: MetricEvent, attributes: Readonly<Record<string, string>>) => void } = {}): Promise<RemoteJwks> {
  return RemoteJwks.load(url, { clock, timeout: 0.5, logger: options.logger ?? capture(), metrics: options.metrics });
}

describe("RemoteJwks: fetching", { timeout: 20_000 }, () => {
  it("loads the published Ed25519 public keys, and a sealer on them opens tokens but cannot mint", async () => {
    const jwks = await loaded();
    assert.deepEqual(jwks.keyring.publicJwks(), PRIVATE.publicJwks());
    const minted = await new StateSealer(PRIVATE, { issuer: ISSUER }).seal({ n: 1 }, { user: USER, tool: "t" });
    const verifier = new StateSealer(jwks, { issuer: ISSUER });
    assert.deepEqual(await verifier.open(minted, { user: USER, tool: "t" }), { n: 1 });
    await assert.rejects(verifier.seal({}, { user: USER, tool: "t" }), KeyringError);
  });

  it("a first fetch that fails rejects load with a KeyringError naming the cause", async () => {
    server.handler = (_request, response) => response.writeHead(500).end();
    await assert.rejects(loaded(), (error: unknown) => error instanceof KeyringError && /HTTP 500/.test(error.message));
  });

  it("the fetch is made with the injected fetch, so any runtime's fetch (or a test's) can serve it", async () => {
    const seen: string[] = [];
    const jwks = await RemoteJwks.load("https://keys.example.com/jwks.json", {
      clock,
      logger: capture(),
      fetch: async (input) => {
        seen.push(String(input));
        return new Response(PUBLIC_JWKS, { status: 200 });
      },
    });
    assert.deepEqual(seen, ["https://keys.example.com/jwks.json"]);
    assert.equal(jwks.keyring.size, 1);
  });

  it("https anywhere, http only on loopback, never credentials in the URL", () => {
    for (const good of ["https://keys.example.com/j", "http://127.0.0.1:8080/j", "http://localhost/j", "http://[::1]/j", "http://127.9.9.9/j"]) {
      assert.equal(checkJwksUrl(good).href, new URL(good).href);
    }
    for (const bad of ["http://keys.example.com/j", "http://10.0.0.1/j", "ftp://127.0.0.1/j", "https://user:pw@keys.example.com/j", "not a url", "http://127.0.0.1.example.com/j"]) {
      assert.throws(() => checkJwksUrl(bad), KeyringError, bad);
    }
    assert.throws(() => new RemoteJwks("https://user:hunter2@keys.example.com/j"), (error: unknown) => error instanceof KeyringError && !error.message.includes("hunter2"));
  });

  it("options out of range are refused where they are given", () => {
    assert.throws(() => new RemoteJwks(url, { timeout: 0 }), RangeError);
    assert.throws(() => new RemoteJwks(url, { timeout: 61 }), RangeError);
    assert.throws(() => new RemoteJwks(url, { maxBytes: 100 }), RangeError);
    assert.throws(() => new RemoteJwks(url, { cooldown: -1 }), RangeError);
  });
});

/** An answer the source must refuse, keeping the last good keys. */
const BAD_ANSWERS: Record<string, { handler: Handler; reason: RegExp }> = {
  "an HTML page": {
    handler: (_q, r) => r.writeHead(200, { "content-type": "text/html" }).end("<html><body>Sign in</body></html>"),
    reason: /not a JSON object/,
  },
  "a private Ed25519 key": { handler: (_q, r) => json(r, JSON.stringify(PRIVATE.privateJwks())), reason: /private key/ },
  "an HS256 secret": { handler: (_q, r) => json(r, JSON.stringify(Keyring.fromJwks({ keys: [keys.hs256] }).privateJwks())), reason: /secret key/ },
  "an empty set (decision D1)": { handler: (_q, r) => json(r, '{"keys": []}'), reason: /at least one key/ },
  "a JWKS that is not JSON": { handler: (_q, r) => json(r, '{"keys": ['), reason: /JSON|JWKS/ },
  "text that is not UTF-8": { handler: (_q, r) => r.writeHead(200).end(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), reason: /not UTF-8/ },
  "a redirect to a good JWKS": {
    handler: (request, r) => (request.url === "/good" ? json(r, PUBLIC_JWKS) : r.writeHead(302, { location: "/good" }).end()),
    reason: /HTTP 302 \(redirects are not followed/,
  },
  "an HTTP error": { handler: (_q, r) => r.writeHead(503).end("busy"), reason: /HTTP 503/ },
  "50 MB announced by content-length": {
    handler: (_q, r) => {
      r.writeHead(200, { "content-length": String(50 * 1024 * 1024) });
      r.write("{");
    },
    reason: /larger than 65536 bytes/,
  },
  "50 MB streamed without a length": {
    handler: (_q, r) => {
      r.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const pump = (): void => {
        while (sent < 50 * 1024 * 1024 && !r.destroyed) {
          sent += chunk.length;
          if (!r.write(chunk)) return void r.once("drain", pump);
        }
        r.end();
      };
      pump();
    },
    reason: /larger than 65536 bytes/,
  },
};

describe("RemoteJwks: the last good keys are kept on any failure", { timeout: 20_000 }, () => {
  for (const [name, { handler, reason }] of Object.entries(BAD_ANSWERS)) {
    it(`${name} is a failed refresh: the last good keys stay, the log says why without key material`, async () => {
      const logger = capture();
      const events: string[] = [];
      const jwks = await loaded({ logger, metrics: (event, attributes) => events.push(`${event} ${attributes.source} ${attributes.outcome}`) });
      const before = jwks.keyring;
      server.handler = handler;
      await assert.rejects(jwks.refresh(), (error: unknown) => error instanceof KeyringError && reason.test(error.message));
      assert.equal(jwks.keyring, before);
      assert.match(jwks.lastError ?? "", reason);
      const warning = logger.lines.at(-1) ?? "";
      assert.match(warning, /^warn mrtr-state: could not fetch the JWKS from http:\/\/127\.0\.0\.1:\d+\/jwks\.json: .*; keeping the 1 keys fetched 0 s ago$/);
      for (const secret of [keys.eddsa.d, keys.hs256.k]) assert.ok(!logger.lines.join("\n").includes(secret));
      assert.deepEqual(events, ["key_refresh remote_jwks updated", "key_refresh remote_jwks failed"]);
      // And the next good answer is taken again.
      server.handler = (_request, response) => json(response, PUBLIC_JWKS);
      assert.equal(await jwks.refresh(), false);
      assert.equal(jwks.lastError, undefined);
    });
  }
});

describe("RemoteJwks: one deadline over the whole fetch", { timeout: 20_000 }, () => {
  it("a server that never answers is abandoned at the deadline", async () => {
    const jwks = await loaded();
    server.handler = () => {}; // holds the request open
    await assert.rejects(jwks.refresh(), /no answer within 0\.5 s/);
    assert.equal(jwks.keyring.size, 1);
  });

  it("a body that trickles forever is cut off at the same deadline", async () => {
    const jwks = await loaded();
    server.handler = (_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"keys": [');
      const timer = setInterval(() => response.write(" "), 50);
      response.on("close", () => clearInterval(timer));
    };
    await assert.rejects(jwks.refresh(), /no answer within 0\.5 s/);
  });
});

describe("RemoteJwks: when it fetches", { timeout: 20_000 }, () => {
  it("tokens with unknown kids make it fetch at most once per cooldown", async () => {
    const jwks = await loaded();
    const verifier = new StateSealer(jwks, { issuer: ISSUER });
    const stranger0 = new StateSealer(Keyring.generate("EdDSA"), { issuer: ISSUER });
    await assert.rejects(verifier.open(await stranger0.seal({}, { user: USER, tool: "t" }), { user: USER, tool: "t" }), { reason: "unknown_key" });
    assert.equal(server.requests, 1, "the load itself starts the cooldown");
    now += 30;
    for (let i = 0; i < 50; i++) {
      const stranger = new Keyring([Key.generate("EdDSA", { kid: `random-${i}` })]);
      const token = await new StateSealer(stranger, { issuer: ISSUER }).seal({}, { user: USER, tool: "t" });
      await assert.rejects(verifier.open(token, { user: USER, tool: "t" }), { reason: "unknown_key" });
    }
    assert.equal(server.requests, 2, "one fetch for fifty unknown kids within the cooldown");
    now += 30;
    const stranger = new StateSealer(Keyring.generate("EdDSA"), { issuer: ISSUER });
    await assert.rejects(verifier.open(await stranger.seal({}, { user: USER, tool: "t" }), { user: USER, tool: "t" }), { reason: "unknown_key" });
    assert.equal(server.requests, 3, "one more once the cooldown has passed");
  });

  it("a key published after load opens its token on first sight (rotation)", async () => {
    const jwks = await loaded();
    const verifier = new StateSealer(jwks, { issuer: ISSUER });
    now += 30; // past the cooldown the load started
    const next = new Keyring([Key.generate("EdDSA", { kid: "next" }), ...PRIVATE]);
    server.handler = (_request, response) => json(response, JSON.stringify(next.publicJwks()));
    const token = await new StateSealer(next, { issuer: ISSUER }).seal({ v: 2 }, { user: USER, tool: "t" });
    assert.deepEqual(await verifier.open(token, { user: USER, tool: "t" }), { v: 2 });
    assert.equal(jwks.keyring.size, 2);
  });

  it("reading the keys after the refresh interval fetches in the background, without waiting", async () => {
    const events: string[] = [];
    const jwks = await RemoteJwks.load(url, { clock, refreshInterval: 60, logger: capture(), metrics: (event, a) => events.push(`${event} ${a.outcome}`) });
    now += 59;
    jwks.keyring;
    assert.equal(server.requests, 1);
    now += 1;
    const ring = jwks.keyring; // due: starts a fetch, answers with the keys it holds
    assert.equal(ring.size, 1);
    assert.ok(await jwks.refresh().then(() => true), "the fetch under way is joined, not doubled");
    assert.equal(server.requests, 2);
    assert.deepEqual(events, ["key_refresh updated", "key_refresh unchanged"]);
  });

  it("after close no scheduled fetch starts", async () => {
    const jwks = await RemoteJwks.load(url, { clock, refreshInterval: 60, logger: capture() });
    jwks.close();
    now += 600;
    jwks.keyring;
    assert.equal(server.requests, 1);
  });

  it("toString names the URL and the number of keys, never a key", async () => {
    const jwks = await loaded();
    assert.equal(String(jwks), `RemoteJwks(url=${JSON.stringify(url)}, keys=1)`);
  });
});
