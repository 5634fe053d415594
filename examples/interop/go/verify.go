package main

// The validation procedure of the profile (spec/profile.md, section 5), step by step,
// on top of golang-jwt v5.
//
// What golang-jwt gives: the signature (its SigningMethod.Verify: HMAC compared in
// constant time, Ed25519 with the 64-byte length), the time checks iat and exp with
// leeway (WithIssuedAt, WithExpirationRequired, WithLeeway, WithTimeFunc), and the
// exact comparisons of iss, sub and aud (WithIssuer, WithSubject, WithAudience). Its
// WithValidMethods (pinned to the key's alg) and Keyfunc (kid lookup) re-check steps
// 6, 8 and 9, but its errors do not tell those reasons apart.
//
// What this file adds, because golang-jwt does not do it or does it in another
// order: the size cap, canonical base64url, strict JSON, the header allowlist, the
// alg/typ/kid checks with their own reason codes (golang-jwt never looks at typ),
// the closed claim set with its types (golang-jwt accepts aud arrays and reads exp
// from "1700000000", 1.7e9 or 1700000000.5), the maximum lifetime, and the argument
// digest. golang-jwt also decodes the claims before it checks the signature, so a
// changed payload would come back as ErrTokenMalformed where the profile says
// bad_signature: step 10 therefore runs first, alone, with the library's own
// SigningMethod.Verify, and the library's full parse comes after step 13.

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gowebpki/jcs"
)

// typ is the profile's explicit type, compared with the decoded header string.
const typ = "mrtr-state+jwt"

// Nesting limits: 32 levels inside state, plus the claims object around it.
const (
	maxStateDepth = 32
	maxTextDepth  = maxStateDepth + 1
)

// refusal is a verdict "invalid" with the profile's reason code (section 6).
type refusal struct{ reason, detail string }

func (r *refusal) Error() string { return r.reason + ": " + r.detail }

func refuse(reason, detail string) error { return &refusal{reason, detail} }

// verifier is a server's configuration (profile, section 5, first paragraph).
type verifier struct {
	keys          ring
	issuer        string
	maxLifetime   int64 // seconds
	leeway        int64 // seconds
	maxTokenBytes int   // bytes of the token's UTF-8 encoding
	// requireArguments refuses a token without args_sha256 (step 19), except for a
	// resource read, which has no arguments.
	requireArguments bool
}

// request is what the retry being served says: who, what, with which arguments, when.
type request struct {
	user      string
	aud       string // the target as "<method>:<name>" (section 3.5)
	arguments []byte // the arguments object as JSON text; "{}" when the request has none
	now       int64  // the verifier's clock in whole seconds
}

var (
	headerParameters = map[string]bool{"alg": true, "typ": true, "kid": true}
	claimNames       = map[string]bool{"iss": true, "sub": true, "aud": true, "iat": true, "exp": true, "jti": true, "args_sha256": true, "state": true}
	requiredClaims   = []string{"iss", "sub", "aud", "iat", "exp", "jti", "state"}
	jtiPattern       = regexp.MustCompile(`^[A-Za-z0-9_-]{22,64}$`)
	digestPattern    = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)
	integerPattern   = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
)

// verify applies steps 1 to 19 and returns the state claim as JSON text. A refusal
// is a *refusal; any other error means this program disagrees with golang-jwt about
// a token and is reported as a failure, never as a verdict.
func (v *verifier) verify(token string, req request) (json.RawMessage, error) {
	// Step 1. Size, counted in bytes of the UTF-8 encoding: a Go string is those
	// bytes, so its length is the count.
	if len(token) > v.maxTokenBytes {
		return nil, refuse("too_large", "the token is longer than the size cap")
	}
	// Step 2. Three non-empty segments of the base64url alphabet; five make the
	// encrypted form (jwe.go).
	segments := strings.Split(token, ".")
	if len(segments) == 5 {
		return v.verifyEncrypted(segments, req)
	}
	if len(segments) != 3 {
		return nil, refuse("malformed", "the token is not three segments joined by '.'")
	}
	decoded := make([][]byte, 3)
	for _, segment := range segments {
		if segment == "" || !isBase64URL(segment) {
			return nil, refuse("malformed", "a segment is empty or not base64url")
		}
	}
	// Step 3. Each segment is the canonical encoding of its bytes.
	for i, segment := range segments {
		var err error
		if decoded[i], err = b64.DecodeString(segment); err != nil {
			return nil, refuse("malformed", "a segment is not canonical unpadded base64url")
		}
	}
	// Step 4. The header is strict JSON and an object.
	var header map[string]any
	if checkJSON(decoded[0], maxTextDepth) != nil || json.Unmarshal(decoded[0], &header) != nil || header == nil {
		return nil, refuse("malformed", "the header is not a strict JSON object")
	}
	// Step 5. No header parameter but alg, typ and kid (golang-jwt ignores the others).
	for name := range header {
		if !headerParameters[name] {
			return nil, refuse("unsupported_header", "the header has a parameter the profile forbids")
		}
	}
	// Step 6. alg is HS256 or EdDSA ("none", "Ed25519", "HS512", missing: refused).
	alg, _ := header["alg"].(string)
	if alg != "HS256" && alg != "EdDSA" {
		return nil, refuse("unsupported_header", "the header's alg is not HS256 or EdDSA")
	}
	// Step 7. typ exactly, as the decoded JSON string (so "mrtr-state\u002bjwt" is
	// the same string); golang-jwt does not look at typ at all.
	if header["typ"] != typ {
		return nil, refuse("wrong_type", "the header's typ is not exactly "+typ)
	}
	// Steps 8 and 9. The kid names a key, and alg is that key's algorithm.
	k, err := v.keys.lookup(header)
	if err != nil {
		return nil, err
	}
	// Step 10. The signature, with golang-jwt's signing method for the key.
	signingInput := segments[0] + "." + segments[1]
	if k.method.Verify(signingInput, decoded[2], k.verify) != nil {
		return nil, refuse("bad_signature", "the signature does not verify")
	}
	// Steps 11 to 19, shared with the encrypted form (jwe.go).
	return v.claimSteps(decoded[1], req, func() error { return v.checkWithLibrary(token, k, req) })
}

// claimSteps applies steps 11 to 19 to the claims text of either form; library runs
// steps 14 to 18 with golang-jwt once steps 11 to 13 have passed.
func (v *verifier) claimSteps(payload []byte, req request, library func() error) (json.RawMessage, error) {
	// Step 11. The claims are strict JSON and an object.
	var claims map[string]json.RawMessage
	if checkJSON(payload, maxTextDepth) != nil || json.Unmarshal(payload, &claims) != nil || claims == nil {
		return nil, refuse("malformed", "the claims are not a strict JSON object")
	}
	// Step 12. The claim set is closed, complete and well typed.
	iat, exp, err := checkClaims(claims)
	if err != nil {
		return nil, err
	}
	// Step 13. The lifetime is within the verifier's maximum.
	if exp-iat > v.maxLifetime {
		return nil, refuse("lifetime_too_long", "the token's lifetime exceeds the maximum")
	}
	// Steps 14 to 18: golang-jwt, on claims now known to be well formed.
	if err := library(); err != nil {
		return nil, err
	}
	// Step 19. The argument digest, when the token has one or the verifier requires it.
	raw, bound := claims["args_sha256"]
	if !bound && v.requireArguments && !strings.HasPrefix(req.aud, "resources/read:") {
		return nil, refuse("wrong_request", "the verifier requires claim args_sha256, which is absent")
	}
	if bound {
		var digest string
		if json.Unmarshal(raw, &digest) != nil || argumentsDigest(req.arguments) != digest {
			return nil, refuse("wrong_request", "claim args_sha256 does not match the arguments")
		}
	}
	return claims["state"], nil
}

// checkClaims applies step 12 and returns iat and exp.
func checkClaims(claims map[string]json.RawMessage) (iat, exp int64, err error) {
	malformed := func(detail string) (int64, int64, error) { return 0, 0, refuse("malformed", detail) }
	for name := range claims {
		if !claimNames[name] {
			return malformed("the claims hold a claim the profile does not define")
		}
	}
	for _, name := range requiredClaims {
		if _, present := claims[name]; !present {
			return malformed("the claims lack a required claim")
		}
	}
	for _, name := range []string{"iss", "sub", "aud"} {
		if s, ok := stringClaim(claims[name]); !ok || s == "" {
			return malformed("iss, sub and aud must be non-empty strings (aud never an array)")
		}
	}
	iat, okIat := timeClaim(claims["iat"])
	exp, okExp := timeClaim(claims["exp"])
	if !okIat || !okExp {
		return malformed("iat and exp must be integer literals from 0 to 2^53 - 1")
	}
	if exp <= iat {
		return malformed("exp must be after iat")
	}
	if s, ok := stringClaim(claims["jti"]); !ok || !jtiPattern.MatchString(s) {
		return malformed("jti must be 22 to 64 base64url characters")
	}
	if raw, present := claims["args_sha256"]; present {
		if s, ok := stringClaim(raw); !ok || !digestPattern.MatchString(s) {
			return malformed("args_sha256 must be 43 base64url characters")
		}
	}
	return iat, exp, nil
}

// stringClaim reads a claim that must be a JSON string (not null, not an array).
func stringClaim(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// timeClaim reads iat or exp: an integer literal (no fraction, no exponent, not a
// string, not a boolean) within 0 ... 2^53 - 1.
func timeClaim(raw json.RawMessage) (int64, bool) {
	if !integerPattern.Match(raw) {
		return 0, false
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	return v, err == nil && 0 <= v && v <= maxSafeInteger
}

// checkWithLibrary runs golang-jwt's parser on the whole token for steps 14 to 18 and
// maps its errors to reason codes in the profile's order. Its Keyfunc is the same
// kid lookup with the algorithm pinned to the key; its signature check has already
// passed in step 10.
func (v *verifier) checkWithLibrary(token string, k *key, req request) error {
	// An empty expected issuer, subject or audience would switch golang-jwt's check
	// off; the job reader refuses an empty issuer, user or target for that reason.
	parser := jwt.NewParser(append(v.claimOptions(req),
		jwt.WithValidMethods([]string{k.alg}),
		jwt.WithStrictDecoding(), // and no WithPaddingAllowed: padding stays refused
	)...)
	keyfunc := func(t *jwt.Token) (any, error) {
		k, err := v.keys.lookup(t.Header)
		if err != nil {
			return nil, err
		}
		return k.verify, nil
	}
	_, err := parser.ParseWithClaims(token, &jwt.RegisteredClaims{}, keyfunc)
	return libraryVerdict(err)
}

// claimOptions configures golang-jwt's claim checks (steps 14 to 18) for req.
func (v *verifier) claimOptions(req request) []jwt.ParserOption {
	return []jwt.ParserOption{
		jwt.WithTimeFunc(func() time.Time { return time.Unix(req.now, 0) }),
		jwt.WithLeeway(time.Duration(v.leeway) * time.Second),
		jwt.WithIssuedAt(),
		jwt.WithExpirationRequired(),
		jwt.WithIssuer(v.issuer),
		jwt.WithSubject(req.user),
		jwt.WithAudience(req.aud),
	}
}

// libraryVerdict maps golang-jwt's claim errors to reason codes in the profile's order.
func libraryVerdict(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued): // step 14: iat > now + leeway
		return refuse("issued_in_future", "claim iat is in the future")
	case errors.Is(err, jwt.ErrTokenExpired): // step 15: not now < exp + leeway
		return refuse("expired", "claim exp has passed")
	case errors.Is(err, jwt.ErrTokenInvalidIssuer): // step 16
		return refuse("wrong_issuer", "claim iss is not this server")
	case errors.Is(err, jwt.ErrTokenInvalidSubject): // step 17
		return refuse("wrong_user", "claim sub is not the requesting user")
	case errors.Is(err, jwt.ErrTokenInvalidAudience): // step 18
		return refuse("wrong_tool", "claim aud is not the requested target")
	}
	return fmt.Errorf("golang-jwt refused a token that passed steps 1 to 13: %w", err)
}

// argumentsDigest is args_sha256 (section 3.4): base64url(SHA-256(JCS(arguments))).
// Unbindable arguments match no digest, so the result is then the empty string.
func argumentsDigest(arguments []byte) string {
	canonical, err := canonicalArguments(arguments)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(canonical)
	return b64.EncodeToString(sum[:])
}

// canonicalArguments is JCS(arguments), or an error when the arguments are
// unbindable (section 3.4): not a JSON object, a number whose value is an integer beyond
// +/-(2^53 - 1), however it is written (every double of magnitude 2^53 or more is
// an integer, and every such literal reads as one), a number beyond a double, or
// what RFC 8785 cannot canonicalize (a lone surrogate). An underflow such as
// 1e-400 reads as 0, as strconv.ParseFloat and gowebpki/jcs read it.
func canonicalArguments(arguments []byte) ([]byte, error) {
	// Profile 3.4 and 8.2: only an object is bindable; "arguments": null is not {}.
	if trimmed := bytes.TrimSpace(arguments); len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, errors.New("the arguments are not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(arguments))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if number, ok := tok.(json.Number); ok {
			if f, err := strconv.ParseFloat(string(number), 64); err != nil || math.Abs(f) > maxSafeInteger {
				return nil, errors.New("a number whose value is an integer beyond +/-(2^53 - 1), or beyond a double")
			}
		}
	}
	return jcs.Transform(arguments)
}
