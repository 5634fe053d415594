/**
 * ReloadingKeyring: a key file followed while the server runs, with the Python reader's rules (regular
 * files only, never blocking on a FIFO; world-writable refused; a cooldown after a bad file; the last
 * good keys kept; warnings without key material). Files live in a fresh temporary directory, removed
 * after the file. About 0.5 s; each suite is bounded at 20 s (a FIFO that blocked would hit that bound).
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, beforeEach, describe, it } from "node:test";

import { Key, Keyring, KeyringError, StateSealer, type KeySourceLogger } from "../src/index.js";
import { ReloadingKeyring } from "../src/keys/reloading.js";
import { readVectors } from "./vectors.js";

const IN_CI = process.env.CI === "true";
const HAVE_MKFIFO = process.platform !== "win32" && spawnSync("mkfifo", ["--version"]).status === 0;
if (!HAVE_MKFIFO && IN_CI) throw new Error("mkfifo is not available (CI=true: a missing tool is a failure)");

const keys = readVectors("keys.json");
const OLD = Keyring.fromJwks({ keys: [keys.eddsa] });
const NEW = OLD.rotated(Key.generate("EdDSA", { kid: "next" }));
const ISSUER = "https://tools.example.com";
const DIR = mkdtempSync(join(tmpdir(), "mrtr-state-reloading-"));
after(() => rmSync(DIR, { recursive: true, force: true }));

let now = 0;
const clock = (): number => now;
let counter = 0;

function capture(): KeySourceLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, warn: (message) => lines.push(`warn ${message}`), info: (message) => lines.push(`info ${message}`) };
}

/** Write `text` next to `path` and rename it over, as a deploy tool does; mode 0600 unless told. */
function replace(path: string, text: string | Uint8Array, mode = 0o600): void {
  const next = `${path}.${counter++}.tmp`;
  writeFileSync(next, text);
  chmodSync(next, mode);
  renameSync(next, path);
}

function keyFile(ring: Keyring = OLD, mode = 0o600): string {
  const path = join(DIR, `keys-${counter++}.json`);
  replace(path, JSON.stringify(ring.privateJwks()), mode);
  return path;
}

function follow(path: string, logger = capture(), events: string[] = []): ReloadingKeyring {
  return ReloadingKeyring.fromFile(path, { clock, logger, metrics: (event, a) => events.push(`${event} ${a.source} ${a.outcome}`) });
}

function noKeyMaterial(lines: readonly string[]): void {
  const text = lines.join("\n");
  for (const key of NEW) {
    for (const value of Object.values(key.privateJwk())) if (value.length > 40) assert.ok(!text.includes(value), "a log line holds key material");
  }
}

beforeEach(() => {
  now = 1000;
});

describe("ReloadingKeyring: following the file", { timeout: 20_000 }, () => {
  it("a file renamed over the old one is read at the next look after checkInterval, and a sealer mints with its first key", async () => {
    const path = keyFile();
    const events: string[] = [];
    const logger = capture();
    const ring = follow(path, logger, events);
    const sealer = new StateSealer(ring, { issuer: ISSUER });
    const before = await sealer.seal({}, { user: "u", tool: "t" });
    replace(path, JSON.stringify(NEW.privateJwks()));
    now += 0.5;
    assert.equal(ring.keyring.size, 1, "within the interval nothing is read");
    now += 0.5;
    assert.equal(ring.keyring.size, 2);
    const after = await sealer.seal({}, { user: "u", tool: "t" });
    assert.notEqual(JSON.parse(atob(before.split(".")[0]!)).kid, JSON.parse(atob(after.split(".")[0]!)).kid);
    assert.deepEqual(await sealer.open(before, { user: "u", tool: "t" }), {}, "the old key still verifies");
    assert.deepEqual(events, ["key_refresh key_file updated"]);
    assert.match(logger.lines.at(-1) ?? "", /^info mrtr-state: the key file ".*" changed: 2 keys, kid "next" signs$/);
  });

  it("a token naming a kid the ring lacks makes it look at once, before the interval", async () => {
    const path = keyFile();
    const verifier = new StateSealer(follow(path), { issuer: ISSUER });
    replace(path, JSON.stringify(NEW.privateJwks()));
    const token = await new StateSealer(NEW, { issuer: ISSUER }).seal({ v: 2 }, { user: "u", tool: "t" });
    assert.deepEqual(await verifier.open(token, { user: "u", tool: "t" }), { v: 2 });
  });

  it("after reloadOnSignal, SIGHUP makes the next access reread the file whatever its stat says", async () => {
    const path = keyFile();
    const events: string[] = [];
    const ring = follow(path, capture(), events);
    ring.reloadOnSignal();
    try {
      ring.keyring;
      assert.deepEqual(events, [], "no look is due before the signal");
      process.kill(process.pid, "SIGHUP");
      // The signal arrives on a later turn of the event loop; give it at most a second.
      for (let turn = 0; turn < 100 && events.length === 0; turn++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        assert.equal(ring.keyring.size, 1);
      }
      assert.deepEqual(events, ["key_refresh key_file unchanged"], "reread although nothing changed");
    } finally {
      ring.close();
    }
  });

  it("fromEnv reads the path from MRTR_STATE_KEYS_FILE, and says what to set when it is missing", () => {
    const path = keyFile();
    assert.equal(ReloadingKeyring.fromEnv(undefined, { env: { MRTR_STATE_KEYS_FILE: path }, logger: capture() }).keyring.size, 1);
    assert.throws(() => ReloadingKeyring.fromEnv(undefined, { env: {} }), /MRTR_STATE_KEYS_FILE is not set/);
  });

  it("toString names the path and the number of keys, never a key", () => {
    const path = keyFile();
    assert.equal(String(follow(path)), `ReloadingKeyring(path=${JSON.stringify(path)}, keys=1)`);
  });
});

describe("ReloadingKeyring: the last good keys are kept", { timeout: 20_000 }, () => {
  const BAD: Record<string, string | Uint8Array> = {
    "an empty file": "",
    "half a JWKS": JSON.stringify(NEW.privateJwks()).slice(0, 60),
    "a short secret": "c2hvcnQ",
    "an empty set (decision D1)": '{"keys": []}',
    "bytes that are not UTF-8": new Uint8Array([0x7b, 0xff, 0x7d]),
  };
  for (const [name, content] of Object.entries(BAD)) {
    it(`${name} is refused at a reload: the old ring stays, one warning without key material`, () => {
      const path = keyFile();
      const logger = capture();
      const events: string[] = [];
      const ring = follow(path, logger, events);
      const before = ring.keyring;
      replace(path, content);
      assert.throws(() => ring.reload(), (error: unknown) => error instanceof KeyringError && error.message.startsWith(`the key file ${JSON.stringify(path)}`));
      now += 1;
      assert.equal(ring.keyring, before);
      now += 10;
      assert.equal(ring.keyring, before);
      assert.equal(logger.lines.filter((line) => line.startsWith("warn")).length, 1, "one warning per bad content");
      assert.deepEqual(events, ["key_refresh key_file failed"]);
      noKeyMaterial(logger.lines);
      assert.throws(() => ReloadingKeyring.fromFile(path, { logger: capture() }), KeyringError, "at start-up it is an error");
    });
  }

  it("a missing file is refused and the old ring stays", () => {
    const path = keyFile();
    const ring = follow(path);
    rmSync(path);
    assert.throws(() => ring.reload(), /cannot be read \(ENOENT\)/);
    assert.equal(ring.keyring.size, 1);
  });

  it("a bad file is not read again within the cooldown however many unknown kids arrive, but a replacement is", async () => {
    const path = keyFile();
    const events: string[] = [];
    const ring = follow(path, capture(), events);
    replace(path, "{ not json");
    for (let i = 0; i < 20; i++) assert.equal(await ring.refreshForUnknownKey(), false);
    assert.deepEqual(events, ["key_refresh key_file failed"]);
    replace(path, JSON.stringify(NEW.privateJwks()));
    assert.equal(await ring.refreshForUnknownKey(), true, "a new file renamed over the bad one is read at once");
    assert.deepEqual(events, ["key_refresh key_file failed", "key_refresh key_file updated"]);
  });
});

describe("ReloadingKeyring: only a regular file that only its owner may write", { timeout: 20_000 }, () => {
  it("a FIFO at the path is refused at once, at load and at a reload, never waited on", { skip: HAVE_MKFIFO ? false : "mkfifo is not available" }, () => {
    const fifo = join(DIR, `fifo-${counter++}`);
    assert.equal(spawnSync("mkfifo", [fifo]).status, 0);
    const path = keyFile();
    // In a child process with a 10 s bound: an open that blocked would block the whole event loop, so
    // no in-process timeout could end it.
    const script = `
      import { renameSync } from "node:fs";
      const { ReloadingKeyring } = await import(${JSON.stringify(new URL("../src/keys/reloading.js", import.meta.url).href)});
      const [fifo, path] = process.argv.slice(1);
      const quiet = { warn() {}, info() {} };
      const said = (f) => { try { f(); return "accepted"; } catch (error) { return error.message; } };
      console.log(said(() => ReloadingKeyring.fromFile(fifo, { logger: quiet })));
      const ring = ReloadingKeyring.fromFile(path, { logger: quiet });
      renameSync(fifo, path);
      console.log(said(() => ring.reload()));
      console.log(ring.keyring.size);
    `;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script, fifo, path], { timeout: 10_000, encoding: "utf8" });
    assert.equal(child.signal, null, "the child was killed at the bound: opening the FIFO blocked");
    const [atLoad, atReload, size] = child.stdout.trim().split("\n");
    assert.match(atLoad ?? "", /not a regular file \(a FIFO\)/);
    assert.match(atReload ?? "", /not a regular file \(a FIFO\)/);
    assert.equal(size, "1", "the last good keys stay");
  });

  it("a directory or a device at the path is refused", () => {
    const directory = join(DIR, `dir-${counter++}`);
    mkdirSync(directory);
    assert.throws(() => ReloadingKeyring.fromFile(directory, { logger: capture() }), /not a regular file \(a directory\)/);
    if (process.platform !== "win32") assert.throws(() => ReloadingKeyring.fromFile("/dev/zero", { logger: capture() }), /not a regular file \(a device\)/);
  });

  it("a file anyone may write is refused at load and at a reload, unless allowWorldWritable", { skip: process.platform === "win32" ? "no POSIX modes" : false }, () => {
    const open = keyFile(OLD, 0o666);
    assert.throws(() => ReloadingKeyring.fromFile(open, { logger: capture() }), /anyone may write it \(mode 0666\)/);
    const logger = capture();
    assert.equal(ReloadingKeyring.fromFile(open, { logger, allowWorldWritable: true }).keyring.size, 1);
    assert.match(logger.lines.join("\n"), /may be read by its group or others \(mode 0666\)/);
    const path = keyFile();
    const ring = follow(path);
    replace(path, JSON.stringify(NEW.privateJwks()), 0o646);
    assert.throws(() => ring.reload(), /anyone may write it/);
    assert.equal(ring.keyring.size, 1);
  });

  it("a file its group or others may read is loaded, with a warning naming the mode", { skip: process.platform === "win32" ? "no POSIX modes" : false }, () => {
    const logger = capture();
    assert.equal(ReloadingKeyring.fromFile(keyFile(OLD, 0o644), { logger }).keyring.size, 1);
    assert.deepEqual(logger.lines.map((line) => line.replace(/".*"/, "FILE")), [
      "warn mrtr-state: the key file FILE may be read by its group or others (mode 0644): make it 0600 (chmod 600 FILE)",
    ]);
  });
});
