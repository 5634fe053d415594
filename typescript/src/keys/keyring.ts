/**
 * Keys and key rings (profile, section 7).
 *
 * A {@link Key} is one HS256 secret or one Ed25519 key pair (or its public half), loaded from a JWK
 * (RFC 7517, RFC 8037) or generated. A {@link Keyring} is an ordered set of keys: the first signs, every
 * one verifies, each is found by its `kid`. Keys and rings are immutable; rotation builds a new ring.
 *
 * The profile's rules, as the Python library applies them, whatever form a key comes in: the algorithm
 * is a property of the key (never of a token); HS256 secrets have at least 32 bytes and A256GCM keys
 * exactly 32; no `oct` secret is one byte or a short pattern repeated (decision D5); an encryption key
 * shares its secret with no other key of its ring (D4); an Ed25519 `x` is a canonical encoding of a
 * point of large order (decision K1) and the public key of `d`; a `kid` member, when present, is 1 to
 * 128 printable ASCII characters (D3), and an absent one defaults to the RFC 7638 thumbprint; base64url
 * members are canonical; and no secret ever appears in a message, `String(key)`, `util.inspect` or a
 * public JWKS.
 *
 * Standard APIs only (issue 27): the key material is held as bytes, and handed to `jose` as Web Crypto
 * `CryptoKey`s imported on first use and kept, so the same code runs on Node, Deno, Bun, Workers and
 * edge runtimes. Loading stays synchronous: the thumbprint and the Ed25519 public key of a private key
 * are computed in standard JavaScript (`lib/sha2.ts`, `keys/ed25519.ts`); only signing, verifying,
 * encrypting and decrypting, already asynchronous, touch Web Crypto.
 */

import { sha256 } from "../lib/sha2.js";
import { encodeUtf8 } from "../lib/utf8.js";
import * as b64 from "../token/b64.js";
import { publicKeyOf, publicKeyProblem } from "./ed25519.js";
import { KeyringError } from "../errors.js";
import { isObject, JsonError, parseStrictJson, type Json } from "../token/json.js";

/** The signing algorithms of the profile (section 3.1). `Ed25519` (RFC 9864) is not one. */
export type SigningAlgorithm = "HS256" | "EdDSA";

/** What a key's `alg` can be: a signing algorithm, or `A256GCM` for an encryption key (section 7.6). */
export type Algorithm = SigningAlgorithm | "A256GCM";

/** The signing algorithms of the profile, in the order of section 3.1. */
export const ALGORITHMS: readonly SigningAlgorithm[] = ["HS256", "EdDSA"];

/** Every key algorithm: the signing ones and the encrypted form's `A256GCM`. */
export const KEY_ALGORITHMS: readonly Algorithm[] = ["HS256", "EdDSA", "A256GCM"];

/** The length of an A256GCM key, in bytes: exactly 256 bits (section 7.6). */
export const ENCRYPTION_KEY_BYTES = 32;

/** The shortest HS256 secret the profile allows, in bytes (section 7.1). */
export const MIN_SECRET_BYTES = 32;

/** The environment variable {@link Keyring.fromEnv} reads by default. */
export const DEFAULT_KEYS_VARIABLE = "MRTR_STATE_KEYS";

/** Signature lengths in bytes, checked before any cryptography runs. */
export const SIGNATURE_BYTES: Readonly<Record<SigningAlgorithm, number>> = { HS256: 32, EdDSA: 64 };

/** A JWK as this package reads and writes it: string members only. */
export type Jwk = { readonly [member: string]: string };

/** A JWKS: `{"keys": [...]}`. */
export interface Jwks {
  readonly keys: readonly Jwk[];
}

// What an npm user has to make a key with: this package's own generators (it ships no CLI), or Node.
const KEYGEN_ADVICE =
  'make one with `JSON.stringify(Keyring.generate("HS256").privateJwks())` or ' +
  '`node -e "console.log(require(\'crypto\').randomBytes(32).toString(\'base64url\'))"`';
const KID_PATTERN = /^[\x21-\x7e]{1,128}$/;
// A JWKS nests three levels ({"keys": [{...}]}); x5c and key_ops arrays add one.
const MAX_JWKS_DEPTH = 8;
const INSPECT = Symbol.for("nodejs.util.inspect.custom");
const MAKE = Symbol("make");

/** RFC 7638: SHA-256 over the required members, sorted by name, without white space. */
function thumbprintOf(required: Readonly<Record<string, string>>): string {
  const names = Object.keys(required).sort();
  const text = `{${names.map((name) => `${JSON.stringify(name)}:${JSON.stringify(required[name])}`).join(",")}}`;
  return b64.encode(sha256(encodeUtf8(text)));
}

function checkKid(kid: unknown): string {
  if (typeof kid !== "string" || !KID_PATTERN.test(kid)) {
    throw new KeyringError("a kid must be 1 to 128 printable ASCII characters without spaces");
  }
  return kid;
}

/** Parse operator-supplied JSON strictly (no duplicate members, bounded nesting). */
function parseJson(text: string, what: string): Json {
  if (!text.isWellFormed()) throw new KeyringError(`${what} is not valid UTF-8 text`);
  try {
    return parseStrictJson(encodeUtf8(text), { maxDepth: MAX_JWKS_DEPTH, iJson: true }).value;
  } catch (error) {
    if (error instanceof JsonError) throw new KeyringError(`${what} is not strict JSON: ${error.message}`);
    throw error;
  }
}

function memberBytes(jwk: { readonly [name: string]: unknown }, name: string): Uint8Array {
  const value = jwk[name];
  if (typeof value !== "string") throw new KeyringError(`a JWK's '${name}' member must be a base64url string`);
  try {
    return b64.decode(value);
  } catch {
    throw new KeyringError(`a JWK's '${name}' member is not canonical unpadded base64url`);
  }
}

/** Whether two byte strings are equal, comparing every byte whatever the first difference. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] as number) ^ (b[i] as number);
  return difference === 0;
}

/** `size` bytes from the platform's CSPRNG (Web Crypto's `getRandomValues`). */
function randomBytes(size: number): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(size));
}

interface Material {
  readonly alg: Algorithm;
  /** HS256 and A256GCM: the secret (a copy the key alone holds). */
  readonly secret: Uint8Array | undefined;
  /** EdDSA: the 32-byte private key seed, when held. */
  readonly d: Uint8Array | undefined;
  /** EdDSA: the base64url public key `x`. */
  readonly x: string | undefined;
}

/** How each algorithm's key is imported into Web Crypto, for `jose`: the algorithm and the usages. */
const WEB_CRYPTO: Readonly<Record<Algorithm, { readonly algorithm: AlgorithmIdentifier | HmacImportParams; readonly sign: KeyUsage[]; readonly verify: KeyUsage[] }>> = {
  HS256: { algorithm: { name: "HMAC", hash: "SHA-256" }, sign: ["sign"], verify: ["verify"] },
  EdDSA: { algorithm: { name: "Ed25519" }, sign: ["sign"], verify: ["verify"] },
  A256GCM: { algorithm: { name: "AES-GCM" }, sign: ["encrypt"], verify: ["decrypt"] },
};

/**
 * One key of a {@link Keyring}: an HS256 secret, an Ed25519 key, or an A256GCM encryption key (the
 * encrypted form: it mints and opens JWE tokens, never signs, and is never published).
 *
 * Make keys with {@link Key.generate}, {@link Key.fromJwk} or {@link Key.fromSecret}. A key is immutable;
 * `String(key)`, `util.inspect(key)` and `JSON.stringify(key)` show its algorithm and `kid`, never the secret.
 */
export class Key {
  /** The key's algorithm: `HS256` for an `oct` secret, `EdDSA` for an Ed25519 key, `A256GCM` for an encryption key. */
  readonly alg: Algorithm;
  /** The key id a token names in its `kid` header parameter. */
  readonly kid: string;
  readonly #material: Material;
  /** The Web Crypto keys, imported on first use (Key is frozen; private fields stay assignable). */
  #signingKey: Promise<CryptoKey> | undefined;
  #verifyingKey: Promise<CryptoKey> | undefined;

  private constructor(token: symbol, material: Material, kid: string | undefined) {
    if (token !== MAKE) throw new TypeError("make a Key with Key.generate(), Key.fromJwk() or Key.fromSecret()");
    this.#material = material;
    this.alg = material.alg;
    this.kid = kid === undefined ? this.thumbprint() : checkKid(kid);
    Object.freeze(this);
  }

  /** Whether this key can mint tokens (false for an Ed25519 public key; an encryption key mints by encrypting). */
  get canSign(): boolean {
    const material = this.#material;
    return material.alg !== "EdDSA" || material.d !== undefined;
  }

  /**
   * Generate a new key: 32 random bytes for HS256, a new key pair for EdDSA, 32 random bytes for an
   * A256GCM encryption key. `kid` defaults to the thumbprint.
   */
  static generate(alg: Algorithm, options: { readonly kid?: string } = {}): Key {
    if (alg === "HS256") return Key.fromSecret(randomBytes(MIN_SECRET_BYTES), options);
    if (alg === "A256GCM") return Key.encryptionKey(randomBytes(ENCRYPTION_KEY_BYTES), options.kid);
    if (alg === "EdDSA") {
      const d = randomBytes(32);
      return new Key(MAKE, { alg, secret: undefined, d, x: b64.encode(publicKeyOf(d)) }, options.kid);
    }
    throw new KeyringError(`unsupported algorithm ${JSON.stringify(alg)}; the profile allows ${KEY_ALGORITHMS.join(", ")}`);
  }

  /** An A256GCM encryption key of exactly 32 bytes (section 7.6). */
  private static encryptionKey(secret: Uint8Array, kid: string | undefined): Key {
    if (secret.length !== ENCRYPTION_KEY_BYTES) {
      throw new KeyringError(
        `an A256GCM key must be exactly ${ENCRYPTION_KEY_BYTES} random bytes, this one has ${secret.length}; ` +
          'make one with `Key.generate("A256GCM")` (`JSON.stringify(key.privateJwk())` to store it)',
      );
    }
    checkNotWeak(secret, "an A256GCM key");
    return new Key(MAKE, { alg: "A256GCM", secret: Uint8Array.from(secret), d: undefined, x: undefined }, kid);
  }

  /** Make an HS256 key from raw secret bytes (at least 32 of them). */
  static fromSecret(secret: Uint8Array, options: { readonly kid?: string } = {}): Key {
    if (!(secret instanceof Uint8Array)) throw new TypeError("an HS256 secret is a Uint8Array");
    if (secret.length < MIN_SECRET_BYTES) {
      throw new KeyringError(
        `an HS256 secret must be at least ${MIN_SECRET_BYTES} random bytes, this one has ${secret.length}; ${KEYGEN_ADVICE}`,
      );
    }
    checkNotWeak(secret, "an HS256 secret");
    return new Key(MAKE, { alg: "HS256", secret: Uint8Array.from(secret), d: undefined, x: undefined }, options.kid);
  }

  /**
   * Load one key from a JWK (an object or its JSON text).
   *
   * Accepted: `{"kty": "oct", "k": ...}` for HS256 (`k` of at least 32 bytes) and
   * `{"kty": "OKP", "crv": "Ed25519", "x": ..., "d": ...}` for EdDSA (`d` absent for a verify-only public
   * key; `x` a canonical point of large order). `alg`, if present, must match; `use`, if present, must be
   * `sig`; `kid` defaults to the RFC 7638 thumbprint. Base64url members must be canonical and unpadded.
   */
  static fromJwk(jwk: unknown): Key {
    const value: unknown = typeof jwk === "string" ? parseJson(jwk, "a JWK") : jwk;
    if (!isObject(value)) throw new KeyringError("a JWK must be a JSON object");
    // Profile 7.4 (decision D3): a kid member, when present, is checked; only an absent one defaults.
    const kid = Object.hasOwn(value, "kid") ? checkKid(value.kid) : undefined;
    // A member that is present is explicit, whatever its value: `"alg": null` or `"use": null` is not an
    // absent member (profile 7.2 and 7.6; the vectors alg-null-* and use-null-* of issue 32).
    const member = (name: string, absent: string): unknown => (Object.hasOwn(value, name) ? value[name] : absent);
    if (value.kty === "oct" && value.alg === "A256GCM") {
      if (member("use", "enc") !== "enc") throw new KeyringError("an A256GCM JWK must have use 'enc' (or no 'use' member)");
      return Key.encryptionKey(memberBytes(value, "k"), kid);
    }
    if (member("use", "sig") !== "sig") {
      throw new KeyringError(
        "a signing JWK must have use 'sig' (or no 'use' member); an encryption JWK has alg 'A256GCM' and use 'enc'",
      );
    }
    if (value.kty === "oct") {
      if (member("alg", "HS256") !== "HS256") throw new KeyringError("an 'oct' JWK must be for alg HS256 (or A256GCM for an encryption key)");
      return Key.fromSecret(memberBytes(value, "k"), kid === undefined ? {} : { kid });
    }
    if (value.kty === "OKP") {
      if (value.crv !== "Ed25519") throw new KeyringError("an 'OKP' JWK must be on curve Ed25519 (crv 'Ed25519')");
      const alg = member("alg", "EdDSA");
      if (alg !== "EdDSA" && alg !== "Ed25519") throw new KeyringError("an Ed25519 JWK must be for alg EdDSA");
      const x = memberBytes(value, "x");
      if (x.length !== 32) throw new KeyringError("an Ed25519 JWK's 'x' must be 32 bytes");
      const problem = publicKeyProblem(x);
      if (problem !== undefined) {
        throw new KeyringError(`an Ed25519 JWK's 'x' is not an acceptable public key (profile 7.2): ${problem}`);
      }
      const xText = b64.encode(x);
      if (!Object.hasOwn(value, "d")) {
        return new Key(MAKE, { alg: "EdDSA", secret: undefined, d: undefined, x: xText }, kid);
      }
      const d = memberBytes(value, "d");
      if (d.length !== 32) throw new KeyringError("an Ed25519 JWK's 'd' must be 32 bytes");
      if (!sameBytes(publicKeyOf(d), x)) {
        throw new KeyringError("an Ed25519 JWK's 'x' is not the public key of its 'd'");
      }
      return new Key(MAKE, { alg: "EdDSA", secret: undefined, d, x: xText }, kid);
    }
    // Only a registered key type is named: any other value is never shown, since a key file's members can
    // hold a secret pasted in the wrong place and a message reaches logs.
    const named = value.kty === "RSA" || value.kty === "EC" ? `'${value.kty}'` : "(its 'kty' member)";
    throw new KeyringError(`unsupported JWK key type ${named}; the profile uses 'oct' (HS256, A256GCM) and 'OKP' (Ed25519)`);
  }

  /** The RFC 7638 JWK thumbprint (SHA-256, base64url) of this key. */
  thumbprint(): string {
    const material = this.#material;
    if (material.secret !== undefined) return thumbprintOf({ k: b64.encode(material.secret), kty: "oct" });
    return thumbprintOf({ crv: "Ed25519", kty: "OKP", x: material.x ?? "" });
  }

  /** The public JWK of an Ed25519 key (`kty`, `crv`, `alg`, `use`, `kid`, `x`); an HS256 secret has none. */
  publicJwk(): Jwk {
    if (this.alg === "HS256") throw new KeyringError(`key ${JSON.stringify(this.kid)} is an HS256 secret, which has no public JWK`);
    if (this.alg === "A256GCM") {
      throw new KeyringError(`key ${JSON.stringify(this.kid)} is an A256GCM encryption key, which has no public JWK`);
    }
    return { kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig", kid: this.kid, x: this.#material.x ?? "" };
  }

  /** The full JWK, secret included, for storing the key. Handle it as a secret. */
  privateJwk(): Jwk {
    const material = this.#material;
    if (material.secret !== undefined) {
      const use = material.alg === "HS256" ? "sig" : "enc";
      return { kty: "oct", alg: material.alg, use, kid: this.kid, k: b64.encode(material.secret) };
    }
    const jwk = this.publicJwk();
    if (material.d === undefined) return jwk;
    return { ...jwk, d: b64.encode(material.d) };
  }

  /**
   * Whether this key and `other` are both `oct` keys (HS256 or A256GCM) holding the same secret bytes,
   * compared without an early exit. @internal
   */
  sharesSecretWith(other: Key): boolean {
    const mine = this.#material.secret;
    const theirs = other.#material.secret;
    return mine !== undefined && theirs !== undefined && sameBytes(mine, theirs);
  }

  /**
   * Whether this is an `oct` key (HS256 or A256GCM) whose secret is the `d` or the `x` of the Ed25519 key
   * `other`, compared without an early exit (profile 7.6; issue 32, D4). @internal
   */
  holdsBytesOf(other: Key): boolean {
    const mine = this.#material.secret;
    const { d, x } = other.#material;
    if (mine === undefined || x === undefined) return false;
    const publicBytes = sameBytes(mine, b64.decode(x));
    const privateBytes = d !== undefined && sameBytes(mine, d);
    return publicBytes || privateBytes;
  }

  /**
   * The Web Crypto key `jose` signs (or encrypts) with, imported once; a {@link KeyringError} for a
   * public key. @internal
   */
  signingKey(): Promise<CryptoKey> {
    if (!this.canSign) throw new KeyringError(`key ${JSON.stringify(this.kid)} is an Ed25519 public key and cannot sign`);
    this.#signingKey ??= this.#import("sign");
    return this.#signingKey;
  }

  /** The Web Crypto key `jose` verifies (or decrypts) with, imported once. @internal */
  verifyingKey(): Promise<CryptoKey> {
    this.#verifyingKey ??= this.#import("verify");
    return this.#verifyingKey;
  }

  #import(use: "sign" | "verify"): Promise<CryptoKey> {
    const { alg, secret, d, x } = this.#material;
    const { algorithm, [use]: usages } = WEB_CRYPTO[alg];
    if (secret !== undefined) return crypto.subtle.importKey("raw", Uint8Array.from(secret), algorithm, false, usages);
    const jwk: JsonWebKey = { kty: "OKP", crv: "Ed25519", x: x ?? "" };
    if (use === "sign" && d !== undefined) jwk.d = b64.encode(d);
    return crypto.subtle.importKey("jwk", jwk, algorithm, false, usages);
  }

  /** `Key(alg=..., kid=..., canSign=...)`: never the secret. */
  toString(): string {
    return `Key(alg=${this.alg}, kid=${this.kid}, canSign=${this.canSign})`;
  }

  /** What `JSON.stringify` writes: the algorithm and id, never the secret (use {@link privateJwk} to store it). */
  toJSON(): { alg: Algorithm; kid: string } {
    return { alg: this.alg, kid: this.kid };
  }

  [INSPECT](): string {
    return this.toString();
  }
}

/**
 * An ordered, immutable set of keys: the first signs, every key verifies.
 *
 * Tokens name their key by `kid`; a token whose `kid` is not in the ring is refused with `unknown_key`.
 * Rotation without downtime (profile, 7.3): publish a ring with the new key second, then first
 * ({@link rotated}), then drop the old key once every token it signed has expired ({@link without}).
 */
export class Keyring implements Iterable<Key> {
  /** The keys, signing key first. */
  readonly keys: readonly Key[];
  readonly #byKid: ReadonlyMap<string, Key>;

  constructor(keys: Iterable<Key>) {
    const list = [...keys];
    if (list.length === 0) throw new KeyringError("a key ring needs at least one key");
    const byKid = new Map<string, Key>();
    for (const key of list) {
      if (!(key instanceof Key)) throw new TypeError("a key ring holds Key objects");
      if (byKid.has(key.kid)) throw new KeyringError(`two keys in the ring have the kid ${JSON.stringify(key.kid)}`);
      byKid.set(key.kid, key);
    }
    // Profile 7.6 and 9.10 (decision D4): an encryption key's secret is used for nothing else, whatever
    // the kids, or whoever holds the HS256 secret could decrypt every encrypted state.
    list.forEach((key, i) => {
      if (key.alg !== "A256GCM") return;
      list.forEach((other, j) => {
        if (i !== j && (other.alg !== "A256GCM" || j > i) && key.sharesSecretWith(other)) {
          throw new KeyringError(
            `the keys ${JSON.stringify(key.kid)} and ${JSON.stringify(other.kid)} hold the same secret: ` +
              "an A256GCM key's secret must not be the secret of any other key (profile 7.6); generate a new one",
          );
        }
      });
    });
    // Issue 32, D4: the d and the x of an Ed25519 key are secret bytes for that rule too (an x is published,
    // a d signs), so no oct key of the ring may hold either.
    for (const key of list) {
      for (const other of list) {
        if (key.holdsBytesOf(other)) {
          throw new KeyringError(
            `the key ${JSON.stringify(key.kid)} holds the bytes of the Ed25519 key ${JSON.stringify(other.kid)} (its 'd' or ` +
              "its 'x') as its secret: an oct key must hold a secret of its own (profile 7.6); generate a new one",
          );
        }
      }
    }
    this.keys = Object.freeze(list);
    this.#byKid = byKid;
    Object.freeze(this);
  }

  /** The number of keys. */
  get size(): number {
    return this.keys.length;
  }

  /**
   * The first key, which mints: its form (signed, or encrypted for an A256GCM key) decides the form of new
   * tokens (decision E4). A {@link KeyringError} for a verify-only ring.
   */
  get signingKey(): Key {
    const key = this.keys[0] as Key;
    if (!key.canSign) {
      throw new KeyringError(
        "this key ring is verify-only: its first key is an Ed25519 public key; load the private JWKS to mint request state",
      );
    }
    return key;
  }

  /** The key with this `kid`, or `undefined`. */
  get(kid: string): Key | undefined {
    return this.#byKid.get(kid);
  }

  /** Whether the ring holds a key with this `kid`. */
  has(kid: string): boolean {
    return this.#byKid.has(kid);
  }

  [Symbol.iterator](): Iterator<Key> {
    return this.keys[Symbol.iterator]();
  }

  /** A ring of one newly generated key (`"HS256"` or `"EdDSA"`). */
  static generate(alg: Algorithm, options: { readonly kid?: string } = {}): Keyring {
    return new Keyring([Key.generate(alg, options)]);
  }

  /** Load a JWKS (`{"keys": [...]}`, an object or its JSON text); the first key signs. */
  static fromJwks(jwks: unknown): Keyring {
    const value: unknown = typeof jwks === "string" ? parseJson(jwks, "a JWKS") : jwks;
    if (!isObject(value) || !Array.isArray(value.keys)) throw new KeyringError('a JWKS must be a JSON object with a "keys" array');
    return new Keyring(value.keys.map((jwk) => Key.fromJwk(jwk)));
  }

  /**
   * Load keys from an environment variable (default `MRTR_STATE_KEYS`), as the Python library does.
   *
   * The value is a JWKS or a single JWK as JSON, or one HS256 secret written in base64 or base64url
   * (padding optional) that decodes to at least 32 bytes and is not an obvious non-random secret (one
   * byte repeated, or a pattern of at most 8 bytes repeated).
   *
   * `options.env` (default: `process.env`) is any object holding the variable, such as a Cloudflare Worker's
   * typed `Env` with its other bindings (a Durable Object namespace, a KV namespace), which are not read.
   * A variable that is present but not a string is refused, without its value.
   */
  static fromEnv(name: string = DEFAULT_KEYS_VARIABLE, options: { readonly env?: object } = {}): Keyring {
    const env = options.env ?? processEnv();
    if (env === undefined) {
      throw new KeyringError(
        `this runtime has no process.env: pass the variables, e.g. Keyring.fromEnv(${JSON.stringify(name)}, { env }) with a Worker's env`,
      );
    }
    const raw: unknown = (env as Readonly<Record<string, unknown>>)[name];
    if (raw !== undefined && typeof raw !== "string") {
      throw new KeyringError(
        `the variable ${name} is not a string (its type is ${raw === null ? "null" : typeof raw}): ` +
          "bind it as a secret or a text variable holding a JWKS or an HS256 secret",
      );
    }
    const value = (raw ?? "").trim();
    if (value === "") {
      throw new KeyringError(
        `the environment variable ${name} is not set: set it to a JWKS (\`JSON.stringify(Keyring.generate("EdDSA").privateJwks())\`) ` +
          `or an HS256 secret of at least ${MIN_SECRET_BYTES} bytes (${KEYGEN_ADVICE})`,
      );
    }
    if (value.startsWith("{")) {
      const document = parseJson(value, `the environment variable ${name}`);
      if (isObject(document) && Object.hasOwn(document, "keys")) return Keyring.fromJwks(document);
      return new Keyring([Key.fromJwk(document)]);
    }
    const secret = secretFromText(value, name);
    if (secret.length < MIN_SECRET_BYTES) {
      throw new KeyringError(
        `the environment variable ${name} holds a secret of ${secret.length} bytes; HS256 needs ` +
          `at least ${MIN_SECRET_BYTES} random bytes: ${KEYGEN_ADVICE}`,
      );
    }
    const period = repeatingPeriod(secret);
    if (period !== undefined) {
      throw new KeyringError(
        `the environment variable ${name} holds a secret that is ` +
          (period === 1 ? "one byte repeated" : `a pattern of ${period} bytes repeated`) +
          `, not random bytes; ${KEYGEN_ADVICE}`,
      );
    }
    return new Keyring([Key.fromSecret(secret)]);
  }

  /** The JWKS of the Ed25519 public keys, for verify-only replicas. HS256 secrets and encryption keys are left out. */
  publicJwks(): Jwks {
    return { keys: this.keys.filter((key) => key.alg === "EdDSA").map((key) => key.publicJwk()) };
  }

  /** The full JWKS, secrets included, for storing the ring. Handle it as a secret. */
  privateJwks(): Jwks {
    return { keys: this.keys.map((key) => key.privateJwk()) };
  }

  /** A new ring with `key` first (it signs from now on); the old keys still verify. */
  rotated(key: Key): Keyring {
    return new Keyring([key, ...this.keys]);
  }

  /** A new ring without the key `kid`; tokens it signed stop opening. */
  without(kid: string): Keyring {
    if (!this.has(kid)) throw new KeyringError(`the ring has no key ${JSON.stringify(kid)}`);
    return new Keyring(this.keys.filter((key) => key.kid !== kid));
  }

  /** `Keyring([...])` with each key's algorithm and id, never a secret. */
  toString(): string {
    return `Keyring([${this.keys.map(String).join(", ")}])`;
  }

  /** What `JSON.stringify` writes: the keys' algorithms and ids (use {@link privateJwks} to store the ring). */
  toJSON(): { alg: Algorithm; kid: string }[] {
    return this.keys.map((key) => key.toJSON());
  }

  [INSPECT](): string {
    return this.toString();
  }
}

/** The bytes of a bare secret in base64 or base64url, padding optional (as the Python library reads it). */
function secretFromText(value: string, name: string): Uint8Array {
  const text = value.replace(/=+$/, "");
  const unreadable = new KeyringError(`the environment variable ${name} is neither JSON nor a base64 secret; ${KEYGEN_ADVICE}`);
  if (text.length % 4 === 1) throw unreadable;
  if (/^[A-Za-z0-9_-]+$/.test(text)) return b64.decodeLenient(text);
  if (/^[A-Za-z0-9+/]+$/.test(text)) return b64.decodeLenient(text.replaceAll("+", "-").replaceAll("/", "_"));
  throw unreadable;
}

/**
 * The process environment where the runtime has one (Node, Bun, Deno's Node compatibility, workerd
 * with `nodejs_compat`), read through `globalThis` so the module loads where there is none.
 */
function processEnv(): Readonly<Record<string, string | undefined>> | undefined {
  const env = (globalThis as { process?: { env?: unknown } }).process?.env;
  return typeof env === "object" && env !== null ? (env as Record<string, string | undefined>) : undefined;
}

/**
 * Decision D5 (profile 7.1): every `oct` secret, HS256 or A256GCM, in whatever form it is loaded, is
 * refused when it is one byte repeated or a pattern of at most 8 bytes repeated (the all-zero key included).
 */
function checkNotWeak(secret: Uint8Array, what: string): void {
  const period = repeatingPeriod(secret);
  if (period !== undefined) {
    throw new KeyringError(
      `${what} that is ${period === 1 ? "one byte repeated" : `a pattern of ${period} bytes repeated`} is not random bytes; ${KEYGEN_ADVICE}`,
    );
  }
}

/** The shortest period (1 to 8 bytes) with which `secret` repeats itself throughout, if any (decision K6). */
function repeatingPeriod(secret: Uint8Array): number | undefined {
  for (let period = 1; period <= 8 && period < secret.length; period++) {
    let repeats = true;
    for (let i = period; i < secret.length && repeats; i++) repeats = secret[i] === secret[i - period];
    if (repeats) return period;
  }
  return undefined;
}
