/**
 * The standard-JavaScript pieces that replaced node:crypto and Buffer in the core (issue 27), each checked
 * against Node's own implementation on many inputs: SHA-256, SHA-512, the Ed25519 public key of a seed,
 * base64url both ways, and the UTF-8 length.
 */

import assert from "node:assert/strict";
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes } from "node:crypto";
import { describe, it } from "node:test";

import { publicKeyOf } from "../src/keys/ed25519.js";
import { sha256, sha512 } from "../src/lib/sha2.js";
import { encodeUtf8, utf8Length } from "../src/lib/utf8.js";
import * as b64 from "../src/token/b64.js";
import { Key } from "../src/index.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("SHA-2 in standard JavaScript", () => {
  it("SHA-256 and SHA-512 agree with node:crypto at every length around the block edges and beyond", () => {
    for (let length = 0; length < 300; length++) {
      const message = randomBytes(length);
      assert.equal(hex(sha256(message)), createHash("sha256").update(message).digest("hex"), `sha256 of ${length} bytes`);
      assert.equal(hex(sha512(message)), createHash("sha512").update(message).digest("hex"), `sha512 of ${length} bytes`);
    }
    const large = randomBytes(100_003);
    assert.equal(hex(sha256(large)), createHash("sha256").update(large).digest("hex"));
  });
  it("FIPS 180-4 examples", () => {
    assert.equal(hex(sha256(encodeUtf8("abc"))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert.equal(
      hex(sha512(encodeUtf8("abc"))),
      "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
    );
  });
});

describe("the Ed25519 public key of a seed (RFC 8032 5.1.5)", () => {
  it("is the key Node derives, for many random keys", () => {
    for (let i = 0; i < 64; i++) {
      const { privateKey, publicKey } = generateKeyPairSync("ed25519");
      const d = Buffer.from(privateKey.export({ format: "jwk" }).d as string, "base64url");
      assert.equal(b64.encode(publicKeyOf(d)), publicKey.export({ format: "jwk" }).x);
    }
  });
  it("RFC 8032 test 1: the seed 9d61...7f60 has the public key d75a...511a", () => {
    const seed = Buffer.from("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", "hex");
    assert.equal(hex(publicKeyOf(seed)), "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  });
  it("a generated key is a key pair Node agrees with", () => {
    const jwk = Key.generate("EdDSA").privateJwk();
    const derived = createPrivateKey({ key: { kty: "OKP", crv: "Ed25519", d: jwk.d, x: jwk.x } as never, format: "jwk" });
    assert.equal(derived.asymmetricKeyType, "ed25519");
  });
});

describe("base64url and UTF-8 on standard APIs", () => {
  it("encode and decode agree with Buffer for every length up to 100", () => {
    for (let length = 0; length <= 100; length++) {
      const bytes = randomBytes(length);
      const text = bytes.toString("base64url");
      assert.equal(b64.encode(bytes), text);
      assert.deepEqual(Buffer.from(b64.decode(text)), bytes);
    }
  });
  it("utf8Length is Buffer.byteLength, lone surrogates counted as U+FFFD", () => {
    for (const text of ["", "a", "é", "€", "😀", "a😀b", "\ud800", "\udc00x", "x\ud83d", "\ud83d\ud83d\ude00", "\u07ff\u0800\uffff"]) {
      assert.equal(utf8Length(text), Buffer.byteLength(text, "utf8"), JSON.stringify(text));
    }
  });
});
