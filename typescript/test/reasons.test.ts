/**
 * The reason codes and sentences against spec/reasons.json, the table every language's tests read: the
 * same codes in the same order, each sentence word for word, and the refusal's message is that sentence.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";

import { InvalidRequestState, isReason, REASONS, type Reason } from "../src/errors.js";

interface Contract {
  reasons: { code: string; steps: string; sentence: string }[];
}

const CONTRACT: Contract = JSON.parse(
  readFileSync(fileURLToPath(new URL("../../../spec/reasons.json", import.meta.url)), "utf8"),
);

describe("reason codes (spec/reasons.json)", () => {
  it("lists the contract's codes in its order with its sentences", () => {
    assert.deepEqual(
      Object.entries(REASONS),
      CONTRACT.reasons.map((entry) => [entry.code, entry.sentence]),
    );
  });

  it("gives each code's sentence as the refusal's message", () => {
    for (const entry of CONTRACT.reasons) {
      assert.ok(isReason(entry.code), entry.code);
      const refusal = new InvalidRequestState(entry.code as Reason);
      assert.equal(refusal.reason, entry.code);
      assert.equal(refusal.message, entry.sentence);
    }
  });
});
