/** The argument binding's decisions of issue 24: D1 (numbers by their double) and D2 (arguments that are not an object). */

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { argumentsDigest, bindingProblem, InvalidRequestState, isBindable, Keyring, StateSealer, UnbindableArguments } from "../src/index.js";

const NOW = 1_767_225_600;
const sealer = new StateSealer(Keyring.generate("HS256"), { issuer: "https://mcp.example.com", clock: () => NOW });

describe("D1: the bindable-number rule is applied to the double nearest the literal", () => {
  it("9007199254740991.5 reads as 2^53 and is unbindable; 9007199254740991 is bindable", () => {
    assert.equal(isBindable(JSON.parse('{"n": 9007199254740991.5}')), false);
    assert.throws(() => argumentsDigest(JSON.parse('{"n": 9007199254740991.5}')), UnbindableArguments);
    assert.equal(isBindable(JSON.parse('{"n": 9007199254740991}')), true);
    assert.equal(isBindable(JSON.parse('{"n": -9007199254740991}')), true);
  });
  it("every number whose double has magnitude 2^53 or more is unbindable, however written", () => {
    for (const text of ["9007199254740992", "-9007199254740992", "9007199254740992.4", "1e16", "1.7976931348623157e308", "-4.5e300"]) {
      assert.equal(isBindable(JSON.parse(`{"n": [${text}]}`)), false, text);
    }
    for (const text of ["9007199254740990.5", "1e15", "0.5", "-0", "4.9e-324"]) assert.equal(isBindable(JSON.parse(`{"n": ${text}}`)), true, text);
  });
});

describe("D2: absent arguments are {}; present arguments that are not an object are unbindable", () => {
  const notObjects: unknown[] = [null, [], [1, 2], "x", "", 0, 1.5, true, false];
  it("the digest refuses each as UnbindableArguments, and isBindable and bindingProblem say so", () => {
    for (const args of notObjects) {
      assert.throws(() => argumentsDigest(args), UnbindableArguments, JSON.stringify(args));
      assert.equal(isBindable(args), false);
      assert.match(bindingProblem(args) ?? "", /not a JSON object/);
    }
  });
  it("no token is minted for them", async () => {
    for (const args of notObjects) {
      await assert.rejects(sealer.seal({ step: 1 }, { user: "alice", tool: "t", arguments: args }), UnbindableArguments);
    }
  });
  it("a token carrying args_sha256 is refused wrong_request for them, the token for {} included", async () => {
    const token = await sealer.seal({ step: 1 }, { user: "alice", tool: "t", arguments: {} });
    for (const args of notObjects) {
      await assert.rejects(sealer.open(token, { user: "alice", tool: "t", arguments: args }), (error: unknown) => {
        assert.ok(error instanceof InvalidRequestState);
        assert.equal(error.reason, "wrong_request");
        return true;
      });
    }
  });
  it("a verifier requiring the binding refuses a token without args_sha256 for them", async () => {
    const unbound = await sealer.seal({ step: 1 }, { user: "alice", tool: "t" });
    for (const args of notObjects) {
      await assert.rejects(sealer.open(unbound, { user: "alice", tool: "t", arguments: args, requireArguments: true }), { reason: "wrong_request" });
    }
  });
});
