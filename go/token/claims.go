package token

import (
	"encoding/json"
	"strconv"

	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/refusal"
	"github.com/mrtr-state/mrtr-state/go/token/jsonstrict"
)

// Type is the profile's explicit token type, the header's typ.
const Type = "mrtr-state+jwt"

// Nesting limits: 32 levels inside state, plus the claims object around it.
const (
	MaxStateDepth = 32
	maxTextDepth  = MaxStateDepth + 1
)

// Claims is the validated claim set of a token (profile, section 3.2).
type Claims struct {
	Issuer    string // iss
	Subject   string // sub: the user
	Audience  string // aud: the target, "<method>:<name>"
	IssuedAt  int64  // iat
	ExpiresAt int64  // exp
	ID        string // jti
	// ArgsSHA256 is the argument digest, "" when the token has none.
	ArgsSHA256 string
	// State is the state claim's JSON text, as it appears in the token.
	State json.RawMessage
}

var claimNames = map[string]bool{
	"iss": true, "sub": true, "aud": true, "iat": true, "exp": true, "jti": true, "args_sha256": true, "state": true,
}

func malformed(detail string) error { return refusal.New(refusal.Malformed, detail) }

func isBase64URLOfLength(s string, low, high int) bool {
	if len(s) < low || len(s) > high {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// parseClaims makes steps 11 and 12 on the claims text of either form.
func parseClaims(payload []byte) (*Claims, error) {
	// Profile 5, step 11 (and Profile 5.1, step 11): The claims are strict JSON (I-JSON, no duplicates, at most 33
	// levels: the claims object and 32 levels of state) and an object.
	// The claims' values are built; the state's inside is checked, not built.
	v, err := jsonstrict.Parse(payload, jsonstrict.Options{MaxDepth: maxTextDepth, KeepDepth: 2})
	if err != nil || v.Kind != jsonstrict.Object {
		return nil, malformed("the claims are not a strict JSON object")
	}
	// Profile 5, step 12: The claim set is closed, complete and well typed.
	for _, m := range v.Members {
		if !claimNames[m.Name] {
			return nil, malformed("the claims hold a claim the profile does not define")
		}
	}
	for _, name := range []string{"iss", "sub", "aud", "iat", "exp", "jti", "state"} {
		if v.Get(name) == nil {
			return nil, malformed("the claims lack a required claim")
		}
	}
	c := &Claims{State: json.RawMessage(v.Get("state").Raw)}
	for name, into := range map[string]*string{"iss": &c.Issuer, "sub": &c.Subject, "aud": &c.Audience} {
		s := v.Get(name)
		if s.Kind != jsonstrict.String || s.Str == "" {
			return nil, malformed("iss, sub and aud must be non-empty strings (aud never an array)")
		}
		*into = s.Str
	}
	var ok1, ok2 bool
	c.IssuedAt, ok1 = numericDate(v.Get("iat"))
	c.ExpiresAt, ok2 = numericDate(v.Get("exp"))
	if !ok1 || !ok2 {
		return nil, malformed("iat and exp must be integer literals from 0 to 2^53 - 1")
	}
	if c.ExpiresAt <= c.IssuedAt {
		return nil, malformed("exp must be after iat")
	}
	jti := v.Get("jti")
	if jti.Kind != jsonstrict.String || !isBase64URLOfLength(jti.Str, 22, 64) {
		return nil, malformed("jti must be 22 to 64 base64url characters")
	}
	c.ID = jti.Str
	if digest := v.Get("args_sha256"); digest != nil {
		// "args_sha256": null is a malformed binding, not an absent one.
		if digest.Kind != jsonstrict.String || !isBase64URLOfLength(digest.Str, 43, 43) {
			return nil, malformed("args_sha256 must be 43 base64url characters")
		}
		c.ArgsSHA256 = digest.Str
	}
	return c, nil
}

// numericDate reads iat or exp: an integer literal (no fraction, no exponent) in
// 0 ... 2^53 - 1 ("-0" is 0).
func numericDate(v *jsonstrict.Value) (int64, bool) {
	if v.Kind != jsonstrict.Number || !v.IsIntegerLiteral() {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Literal, 10, 64)
	return n, err == nil && 0 <= n && n <= jsonstrict.MaxSafeInteger
}

// Expect is what a verifier checks a token's claims against (profile, section
// 5, first paragraph): its settings and the request being served.
type Expect struct {
	Now         int64 // the verifier's clock, whole seconds
	Leeway      int64 // seconds of clock skew allowed on iat and exp
	MaxLifetime int64 // the longest exp - iat accepted, seconds
	Issuer      string
	Request     binding.Request
	// RequireArguments refuses a token for a tool or prompt without args_sha256.
	RequireArguments bool
}

// Validate makes steps 13 to 19 for the request of e.
func (c *Claims) Validate(e Expect) error {
	// Profile 5, step 13: The lifetime is within the verifier's maximum.
	if c.ExpiresAt-c.IssuedAt > e.MaxLifetime {
		return refusal.New(refusal.LifetimeTooLong, "the token's lifetime exceeds the maximum")
	}
	// Profile 5, step 14: Not from the future.
	if c.IssuedAt > e.Now+e.Leeway {
		return refusal.New(refusal.IssuedInFuture, "claim iat is in the future")
	}
	// Profile 5, step 15: Not expired: refused from the second exp itself (leeway 0).
	if e.Now >= c.ExpiresAt+e.Leeway {
		return refusal.New(refusal.Expired, "claim exp has passed")
	}
	// Profile 5, step 16: Issuer.
	if c.Issuer != e.Issuer {
		return refusal.New(refusal.WrongIssuer, "claim iss is not this server")
	}
	// Profile 5, step 17: User.
	if c.Subject != e.Request.User {
		return refusal.New(refusal.WrongUser, "claim sub is not the requesting user")
	}
	// Profile 5, step 18: Target.
	if c.Audience != e.Request.Aud() {
		return refusal.New(refusal.WrongTool, "claim aud is not the requested target")
	}
	// Profile 5, step 19: The request binding; a resource read has no arguments, so the
	// requirement never applies to it.
	if c.ArgsSHA256 == "" {
		if e.RequireArguments && e.Request.Target.Kind != binding.Resource {
			return refusal.New(refusal.WrongRequest, "the verifier requires claim args_sha256; it is absent")
		}
		return nil
	}
	if e.Request.Arguments == nil {
		return refusal.New(refusal.WrongRequest, "claim args_sha256 is present, arguments are not")
	}
	digest, err := binding.Digest(e.Request.Arguments)
	if err != nil {
		return refusal.New(refusal.WrongRequest, "the arguments are unbindable: they match no digest")
	}
	if digest != c.ArgsSHA256 {
		return refusal.New(refusal.WrongRequest, "claim args_sha256 does not match the arguments")
	}
	return nil
}

// EncodeClaims writes the claims JSON a minter emits, in the reference order
// iss, sub, aud, iat, exp, jti, args_sha256 (when not ""), state. state must be
// JSON text already checked to be I-JSON within MaxStateDepth.
func EncodeClaims(c *Claims) []byte {
	out := AppendClaimsBeforeState(make([]byte, 0, 160+len(c.Issuer)+len(c.Subject)+len(c.Audience)+len(c.State)), c)
	out = append(out, c.State...)
	return append(out, '}')
}

// AppendClaimsBeforeState appends the claims JSON of c up to and including
// `"state":`, so that a minter can write the state in place after it and close
// the object with '}' (c.State is not read).
func AppendClaimsBeforeState(out []byte, c *Claims) []byte {
	out = append(out, `{"iss":`...)
	out = jsonstrict.AppendString(out, c.Issuer)
	out = append(out, `,"sub":`...)
	out = jsonstrict.AppendString(out, c.Subject)
	out = append(out, `,"aud":`...)
	out = jsonstrict.AppendString(out, c.Audience)
	out = append(out, `,"iat":`...)
	out = strconv.AppendInt(out, c.IssuedAt, 10)
	out = append(out, `,"exp":`...)
	out = strconv.AppendInt(out, c.ExpiresAt, 10)
	out = append(out, `,"jti":`...)
	out = jsonstrict.AppendString(out, c.ID)
	if c.ArgsSHA256 != "" {
		out = append(out, `,"args_sha256":`...)
		out = jsonstrict.AppendString(out, c.ArgsSHA256)
	}
	return append(out, `,"state":`...)
}
