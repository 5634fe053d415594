// Package redisstore is a replay.Store shared by every replica, kept in Redis
// with go-redis v9, that writes the very keys the Python and TypeScript stores
// write, so a token redeemed on any replica in any language is refused as
// replayed on all of them. One redemption is one atomic command:
//
//	SET <prefix><BASE64URL(SHA-256(iss "#" jti))> 1 NX PX <retention in ms>
//
// NX makes the first writer win; PX makes Redis forget the key once no verifier
// accepts the token, measured by the store's clock (give it the sealer's), so an
// offset of Redis's own clock does not matter. The hashed key has one length
// whatever the issuer, and shows no issuer or token id.
//
// Deployments: a single Redis (NewFromURL), a primary with replicas behind
// Sentinel (NewSentinel, go-redis's failover client) or a Redis Cluster
// (NewCluster, its cluster client), each with bounded timeouts (a connect
// timeout apart from the command timeout) and no retries: a retried SET NX
// whose first attempt was written would refuse the first redemption as
// replayed, so the SET is marked for go-redis as never to be sent again (its
// cluster client would otherwise resend it up to MaxRedirects times). A store
// connects when it is made and logs that it did or why not; on a Cluster, a
// redemption that gets no answer reloads the slot map, so the store follows a
// failover once a replica is promoted. The durability option (WithWaitReplicas) sends WAIT
// on the same connection after a winning SET and accepts only when that many
// replicas acknowledged it; otherwise the redemption fails closed.
//
// Every failure (unreachable, timed out, an error reply, too few replicas)
// returns an error wrapping replay.ErrUnavailable, which the sealer refuses as
// store_unavailable. Messages name the failure's kind and Redis's error code,
// never an address or a password; an outage is logged once when it begins and
// once when it ends (WithLogger).
package redisstore
