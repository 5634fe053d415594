/** The in-memory replay store: atomic first-wins, retention by the sealer's clock, bounded. */

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { MemoryReplayStore, ReplayStoreError } from "../src/index.js";

describe("MemoryReplayStore", () => {
  it("answers true the first time and false after, until the retention ends", () => {
    let now = 1000;
    const store = new MemoryReplayStore({ clock: () => now });
    assert.equal(store.redeem("k", { expiresAt: 1010 }), true);
    assert.equal(store.redeem("k", { expiresAt: 1010 }), false);
    now = 1009.9;
    assert.equal(store.redeem("k", { expiresAt: 1010 }), false);
    now = 1010;
    assert.equal(store.size, 0);
  });
  it("refuses a retention that has already ended, rather than forget at once", () => {
    const store = new MemoryReplayStore({ clock: () => 1000 });
    assert.throws(() => store.redeem("k", { expiresAt: 1000 }), ReplayStoreError);
  });
  it("refuses when full instead of forgetting a live entry, and frees expired entries in order", () => {
    let now = 0;
    const store = new MemoryReplayStore({ maxEntries: 3, clock: () => now });
    store.redeem("a", { expiresAt: 30 });
    store.redeem("b", { expiresAt: 10 });
    store.redeem("c", { expiresAt: 20 });
    assert.throws(() => store.redeem("d", { expiresAt: 40 }), /full/);
    now = 15;
    assert.equal(store.redeem("d", { expiresAt: 40 }), true);
    assert.equal(store.redeem("a", { expiresAt: 30 }), false);
    assert.equal(store.size, 3);
  });
  it("checks its options", () => {
    assert.throws(() => new MemoryReplayStore({ maxEntries: 0 }), RangeError);
  });
});
