// Package keys holds the keys of the profile (spec/profile.md, section 7): HS256
// secrets, Ed25519 key pairs (or their public half) and A256GCM encryption keys
// of the encrypted form, loaded from JWKs, JWKS documents, the MRTR_STATE_KEYS
// environment variable or a key file, or generated; and the Keyring, an ordered
// set of keys whose first key signs (or encrypts) and whose every key opens the
// tokens of its own form.
//
// Every rule is applied when a key is loaded, never when a token is checked:
// HS256 secrets of at least 32 bytes, A256GCM keys of exactly 32; no secret that
// is one byte or a pattern of at most 8 bytes repeated (decision D5); an
// explicit kid of 1 to 128 printable ASCII characters without spaces (D3: a
// present kid member, null included, is always checked; only an absent one
// means the RFC 7638 thumbprint); an
// Ed25519 public key that is the canonical encoding of a point not of small
// order (7.2); distinct kids in a ring, and no encryption key sharing its secret
// with another key (D4). A key's String never shows its secret, and no error
// message holds key material.
package keys
