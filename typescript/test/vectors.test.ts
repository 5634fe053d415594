/** The package against every vector of the profile (spec/vectors/, section 12). */

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { argumentsDigest, canonicalize, InvalidRequestState, isBindable, Key, Keyring, REASONS, StateSealer, UnbindableArguments } from "../src/index.js";
import { hasVectors, readVectors } from "./vectors.js";

const keys = readVectors("keys.json");
const tokens = readVectors("tokens.json");
const args = readVectors("arguments.json");
const ring = Keyring.fromJwks(keys.verifier_jwks);

async function verify(vector: any, file: any = tokens, verifierRing: Keyring = ring): Promise<unknown> {
  const setting = (name: string) => vector[name] ?? file.defaults[name];
  const sealer = new StateSealer(verifierRing, {
    issuer: setting("issuer"),
    maxLifetime: setting("max_lifetime"),
    leeway: setting("leeway"),
    maxTokenBytes: setting("max_token_bytes"),
    requireArguments: setting("require_arguments") ?? false,
    clock: () => vector.now,
  });
  return sealer.open(vector.token, {
    user: vector.user,
    tool: vector.tool,
    prompt: vector.prompt,
    resource: vector.resource,
    arguments: Object.hasOwn(vector, "arguments") ? vector.arguments : {}, // absent is {}; null stays null (D2)
  });
}

describe("token vectors: each gets its expected verdict and reason", () => {
  for (const vector of tokens.vectors) {
    it(vector.id, async () => {
      if (vector.expected.valid) {
        assert.deepStrictEqual(await verify(vector), vector.expected.state);
      } else {
        await assert.rejects(verify(vector), (error: unknown) => {
          assert.ok(error instanceof InvalidRequestState, `not a refusal: ${String(error)}`);
          assert.equal(error.reason, vector.expected.reason);
          assert.equal(error.message, REASONS[error.reason]);
          return true;
        });
      }
    });
  }
});

if (hasVectors("encrypted.json")) {
  const encrypted = readVectors("encrypted.json");
  const encryptedRing = Keyring.fromJwks(keys.encrypted_verifier_jwks);
  describe("encrypted-form vectors (encrypted.json): each gets its expected verdict and reason", () => {
    for (const vector of encrypted.vectors) {
      it(vector.id, async () => {
        const opened = verify(vector, encrypted, encryptedRing);
        if (vector.expected.valid) {
          assert.deepStrictEqual(await opened, vector.expected.state);
        } else {
          await assert.rejects(opened, (error: unknown) => {
            assert.ok(error instanceof InvalidRequestState, `not a refusal: ${String(error)}`);
            assert.equal(error.reason, vector.expected.reason);
            return true;
          });
        }
      });
    }
  });
}

describe("argument vectors: canonical text and digest as written, or unbindable", () => {
  for (const vector of args.vectors) {
    it(vector.id, () => {
      if (vector.unbindable === true) {
        assert.equal(isBindable(vector.arguments), false);
        assert.throws(() => argumentsDigest(vector.arguments), UnbindableArguments);
      } else {
        // A vector with arguments_text is read from its text, as a request is (profile 12.3; issue 32, D2:
        // JSON.parse keeps the last member of a repeated name).
        const value = vector.arguments_text === undefined ? vector.arguments : JSON.parse(vector.arguments_text);
        assert.deepStrictEqual(value, vector.arguments);
        assert.equal(canonicalize(value), vector.canonical);
        assert.equal(argumentsDigest(value), vector.digest);
      }
    });
  }
});

describe("key vectors", () => {
  it("the keys of keys.json load with the kids written there", () => {
    for (const name of ["hs256", "eddsa", "eddsa_public", "unknown"]) {
      assert.equal(Key.fromJwk(keys[name]).kid, keys[name].kid, name);
    }
    assert.deepEqual(Keyring.fromJwks({ keys: [keys.eddsa] }).publicJwks(), { keys: [keys.eddsa_public] });
  });

  if (hasVectors("invalid-keys.json")) {
    for (const vector of readVectors("invalid-keys.json").vectors) {
      it(`invalid-keys: ${vector.id} is refused at load`, () => {
        // A vector holds one key (`jwk`) or a whole ring (`jwks`: decision D4's shared secrets).
        if (vector.jwks !== undefined) assert.throws(() => Keyring.fromJwks(vector.jwks), { name: "KeyringError" });
        else if (vector.jwk !== undefined) assert.throws(() => Key.fromJwk(vector.jwk), { name: "KeyringError" });
        else assert.fail(`invalid-keys vector ${vector.id} has neither "jwk" nor "jwks": this test does not know its shape`);
      });
    }
  }
});
