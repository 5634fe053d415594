/** The library's default logger writes to standard error only: a stdio MCP server speaks on standard output. */

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { standardError } from "../src/lib/log.js";

describe("the default logger", () => {
  it("writes info and warn to standard error, nothing to standard output", () => {
    const out: string[] = [];
    const err: string[] = [];
    const stdoutWrite = process.stdout.write.bind(process.stdout);
    const stderrWrite = process.stderr.write.bind(process.stderr);
    process.stdout.write = ((chunk: string | Uint8Array): boolean => {
      out.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string | Uint8Array): boolean => {
      err.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      standardError.info("mrtr-state: connected");
      standardError.warn("mrtr-state: unavailable");
    } finally {
      process.stdout.write = stdoutWrite;
      process.stderr.write = stderrWrite;
    }
    assert.deepEqual(out, []);
    assert.deepEqual(err, ["mrtr-state: connected\n", "mrtr-state: unavailable\n"]);
  });
});
