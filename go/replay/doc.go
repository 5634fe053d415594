// Package replay is single use (spec/profile.md, section 9.5, step 20): a store
// that remembers each redeemed token's id until no verifier would accept the
// token any more, so a requestState opens at most once.
//
// The store key is the token's jti scoped by its issuer (Key), never the token
// text, so two encodings of one token are one redemption; the Python and
// TypeScript stores use the very same key. A store that cannot answer returns an
// error, and the sealer refuses with store_unavailable (fail closed).
// MemoryStore serves one process; package replay/redisstore serves a fleet.
package replay
