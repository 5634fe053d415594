// Package binding is what a requestState token is bound to (spec/profile.md,
// sections 3.4 and 3.5): the target, written into aud as "<method>:<name>", and
// the request's arguments, bound by their digest args_sha256 =
// BASE64URL(SHA-256(JCS(arguments))) with the RFC 8785 canonical form.
//
// Arguments are unbindable (they have no digest) when they are not a JSON object,
// when they hold, at any depth, a number whose nearest IEEE 754 double has
// magnitude 2^53 or more (an integer beyond +/-(2^53 - 1), however written), a
// number beyond a double, a lone surrogate or text that is not JSON. A minter
// refuses to bind them; a verifier treats them as matching no digest.
package binding
