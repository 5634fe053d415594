import { Key, Keyring } from "mrtr-state";

let ring = Keyring.generate("EdDSA");      // or "HS256" (32 random bytes)
ring.privateJwks();                        // store it as a secret; Keyring.fromJwks(...) loads it back
ring.publicJwks();                         // Ed25519 public keys only, for verify-only replicas
const oldKid = ring.signingKey.kid;
ring = ring.rotated(Key.generate("EdDSA")); // the new key signs, the old one still verifies
ring = ring.without(oldKid);               // once every token it signed has expired
console.log(String(ring));                 // the algorithms and kids, never key material
