package benchmarks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
	"github.com/golang-jwt/jwt/v5"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/binding"
	"github.com/mrtr-state/mrtr-state/go/keys"
)

const (
	issuer = "https://files.example.com"
	user   = "alice"
	aud    = "tools/call:deploy"
)

var now = time.Unix(1767225600, 0)

// Case is one operation of one implementation on one token.
type Case struct {
	Op, Size, Alg, Impl string
	// Run does the operation once; it panics if the operation fails (every
	// candidate must round-trip, or the figures compare nothing).
	Run func()
}

// Group names the cases compared with each other.
func (c Case) Group() string { return c.Op + "/" + c.Size + "/" + c.Alg }

// MakeState is the state of benchmarks/_harness.py: a plan, the answers so far
// and a list of items, grown to size bytes of JSON.
func MakeState(size int) map[string]any {
	state := map[string]any{
		"step": 2, "plan": map[string]any{"env": "prod", "branch": "release-1.2", "replicas": 3, "dry_run": false},
		"asked": []string{"confirm"}, "items": []any{}, "note": "",
	}
	for i := 0; ; i++ {
		item := map[string]any{"id": i, "path": fmt.Sprintf("/srv/app/releases/file-%04d.tar.gz", i), "bytes": 1200 + 37*i, "ok": true}
		state["items"] = append(state["items"].([]any), item)
		if text, _ := json.Marshal(state); len(text) > size {
			state["items"] = state["items"].([]any)[:i]
			break
		}
	}
	for text, _ := json.Marshal(state); len(text) < size; text, _ = json.Marshal(state) {
		state["note"] = state["note"].(string) + "x" // pad to the exact size
	}
	return state
}

// request is the request tokens are bound to. No arguments: the peers have no
// argument binding, so like is compared with like.
func request() mrtrstate.Request {
	return mrtrstate.Request{User: user, Target: binding.ToolTarget("deploy")}
}

type fixture struct {
	sealer *mrtrstate.Sealer
	secret []byte // HS256 and A256GCM
	jwk    jose.JSONWebKey
}

func newFixture(alg keys.Algorithm) *fixture {
	k, err := keys.Generate(alg, "k1")
	must(err)
	ring, err := keys.NewKeyring(k)
	must(err)
	s, err := mrtrstate.New(ring, issuer, mrtrstate.WithClock(func() time.Time { return now }))
	must(err)
	var jwk jose.JSONWebKey
	private, _ := json.Marshal(k.PrivateJWK())
	must(jwk.UnmarshalJSON(private))
	f := &fixture{sealer: s, jwk: jwk}
	if secret, ok := jwk.Key.([]byte); ok {
		f.secret = secret
	}
	return f
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// Sizes are the three state sizes of bench_open_seal.py: 200 bytes, 2 KiB, and
// the largest state every form seals within the 8192-byte cap.
func Sizes() []struct {
	Name string
	Size int
} {
	sealers := []*mrtrstate.Sealer{newFixture(keys.HS256).sealer, newFixture(keys.EdDSA).sealer, newFixture(keys.A256GCM).sealer}
	low, high := 200, 8192
	for high-low > 1 {
		mid, ok := (low+high)/2, true
		for _, s := range sealers {
			if _, err := s.Seal(MakeState(mid), request()); err != nil {
				ok = false
			}
		}
		if ok {
			low = mid
		} else {
			high = mid
		}
	}
	return []struct {
		Name string
		Size int
	}{{"small", 200}, {"2KiB", 2048}, {"near-cap", low}}
}

func peerClaims(state any) map[string]any {
	return map[string]any{"iss": issuer, "sub": user, "aud": aud, "iat": now.Unix(), "exp": now.Unix() + 600,
		"jti": "AAAAAAAAAAAAAAAAAAAAAA", "state": state}
}

var expected = josejwt.Expected{Issuer: issuer, Subject: user, AnyAudience: josejwt.Audience{aud}, Time: now}

// Cases builds every case: open and seal, for each size and algorithm, by the
// module, golang-jwt (signed form only: it has no JWE) and go-jose.
func Cases() []Case {
	ctx := context.Background()
	var cases []Case
	for _, size := range Sizes() {
		state := MakeState(size.Size)
		for _, alg := range []keys.Algorithm{keys.HS256, keys.EdDSA, keys.A256GCM} {
			f := newFixture(alg)
			tok, err := f.sealer.Seal(state, request())
			must(err)
			add := func(op, impl string, run func()) {
				run() // it must work before it is timed
				cases = append(cases, Case{Op: op, Size: size.Name, Alg: string(alg), Impl: impl, Run: run})
			}
			var verifyKey, signKey any = f.secret, f.secret
			if alg == keys.EdDSA {
				verifyKey, signKey = f.jwk.Public().Key, f.jwk.Key
			}
			// open
			add("open", "mrtrstate", func() {
				_, err := f.sealer.Open(ctx, tok, request())
				must(err)
			})
			if alg != keys.A256GCM {
				parser := jwt.NewParser(jwt.WithValidMethods([]string{string(alg)}), jwt.WithIssuer(issuer),
					jwt.WithSubject(user), jwt.WithAudience(aud), jwt.WithIssuedAt(), jwt.WithExpirationRequired(),
					jwt.WithTimeFunc(func() time.Time { return now }))
				add("open", "golang-jwt", func() {
					claims := jwt.MapClaims{}
					_, err := parser.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return verifyKey, nil })
					must(err)
				})
			}
			add("open", "go-jose", func() {
				var standard josejwt.Claims
				var private struct {
					State json.RawMessage `json:"state"`
				}
				if alg == keys.A256GCM {
					parsed, err := josejwt.ParseEncrypted(tok, []jose.KeyAlgorithm{jose.DIRECT}, []jose.ContentEncryption{jose.A256GCM})
					must(err)
					must(parsed.Claims(f.secret, &standard, &private))
				} else {
					parsed, err := josejwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(alg)})
					must(err)
					must(parsed.Claims(verifyKey, &standard, &private))
				}
				must(standard.ValidateWithLeeway(expected, 0))
			})
			// seal
			add("seal", "mrtrstate", func() {
				_, err := f.sealer.Seal(state, request())
				must(err)
			})
			if alg != keys.A256GCM {
				method := jwt.GetSigningMethod(string(alg))
				add("seal", "golang-jwt", func() {
					t := jwt.NewWithClaims(method, jwt.MapClaims(peerClaims(state)))
					t.Header = map[string]any{"alg": string(alg), "typ": "mrtr-state+jwt", "kid": "k1"}
					_, err := t.SignedString(signKey)
					must(err)
				})
			}
			var builder josejwt.Builder
			if alg == keys.A256GCM {
				enc, err := jose.NewEncrypter(jose.A256GCM, jose.Recipient{Algorithm: jose.DIRECT, Key: f.secret, KeyID: "k1"},
					(&jose.EncrypterOptions{}).WithType("mrtr-state+jwt"))
				must(err)
				builder = josejwt.Encrypted(enc)
			} else {
				signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: signKey},
					(&jose.SignerOptions{}).WithType("mrtr-state+jwt").WithHeader("kid", "k1"))
				must(err)
				builder = josejwt.Signed(signer)
			}
			add("seal", "go-jose", func() {
				_, err := builder.Claims(peerClaims(state)).Serialize()
				must(err)
			})
		}
	}
	return cases
}
