// Package token is the compact formats of the profile (spec/profile.md,
// sections 3 to 5.1): the signed form (a JWS with HS256 or EdDSA), the
// encrypted form (a JWE with dir and A256GCM), the closed claim set, and the
// validation procedure's steps 1 to 19 in the profile's order, each marked in
// the code as "Profile 5, step N" ("Profile 5.1, step N" for the encrypted form).
//
// Decode makes steps 1 to 12 of either form and returns the Claims; Claims.Validate
// makes steps 13 to 19 for one request. Sign and Encrypt mint. Step 20 (single
// use) is the sealer's (package mrtrstate), which redeems in a replay store.
// Every refusal is a *refusal.InvalidRequestState.
package token
