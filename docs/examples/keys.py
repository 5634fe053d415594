from mrtr_state import Key, Keyring

ring = Keyring.generate("EdDSA")           # or "HS256" (32 random bytes), or "A256GCM" (encrypted tokens)
secret = ring.private_jwks()               # store it as a secret; Keyring.from_jwks(secret) loads it back
public = ring.public_jwks()                # Ed25519 public keys only, for verify-only replicas
old_kid = ring.keys[0].kid
ring = ring.rotated(Key.generate("EdDSA")) # the new key signs, the old one still verifies
ring = ring.without(old_kid)               # once every token it signed has expired
