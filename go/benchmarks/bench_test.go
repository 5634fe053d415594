package benchmarks

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
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

// makeState is the state of benchmarks/_harness.py: a plan, the answers so far
// and a list of items, grown to at most size bytes of JSON.
func makeState(size int) map[string]any {
	items := []any{}
	state := map[string]any{
		"step": 2, "plan": map[string]any{"env": "prod", "branch": "release-1.2", "replicas": 3, "dry_run": false},
		"asked": []string{"confirm"}, "items": items, "note": "",
	}
	for i := 0; ; i++ {
		item := map[string]any{"id": i, "path": fmt.Sprintf("/srv/app/releases/file-%04d.tar.gz", i), "bytes": 1200 + 37*i, "ok": true}
		state["items"] = append(state["items"].([]any), item)
		text, _ := json.Marshal(state)
		if len(text) > size {
			state["items"] = state["items"].([]any)[:i]
			break
		}
	}
	text, _ := json.Marshal(state)
	for len(text) < size { // pad the note to the exact size
		state["note"] = state["note"].(string) + "x"
		text, _ = json.Marshal(state)
	}
	return state
}

// largestState is the largest state every form seals within the cap.
func largestState(sealers []*mrtrstate.Sealer) int {
	low, high := 200, 8192
	for high-low > 1 {
		mid := (low + high) / 2
		ok := true
		for _, s := range sealers {
			if _, err := s.Seal(makeState(mid), request()); err != nil {
				ok = false
			}
		}
		if ok {
			low = mid
		} else {
			high = mid
		}
	}
	return low
}

func request() mrtrstate.Request {
	// No arguments: the peers have no argument binding, so like is compared with like.
	return mrtrstate.Request{User: user, Target: binding.ToolTarget("deploy")}
}

type fixture struct {
	alg    keys.Algorithm
	key    *keys.Key
	sealer *mrtrstate.Sealer
	secret []byte // HS256 and A256GCM
	jwk    jose.JSONWebKey
}

func newFixture(b *testing.B, alg keys.Algorithm) *fixture {
	k, err := keys.Generate(alg, "k1")
	if err != nil {
		b.Fatal(err)
	}
	ring, _ := keys.NewKeyring(k)
	s, err := mrtrstate.New(ring, issuer, mrtrstate.WithClock(func() time.Time { return now }))
	if err != nil {
		b.Fatal(err)
	}
	var jwk jose.JSONWebKey
	private, _ := json.Marshal(k.PrivateJWK())
	if err := jwk.UnmarshalJSON(private); err != nil {
		b.Fatal(err)
	}
	f := &fixture{alg: alg, key: k, sealer: s, jwk: jwk}
	if secret, ok := jwk.Key.([]byte); ok {
		f.secret = secret
	}
	return f
}

// claims are the profile's claims for the peers, with their usual types.
func peerClaims(state any) map[string]any {
	return map[string]any{"iss": issuer, "sub": user, "aud": aud, "iat": now.Unix(), "exp": now.Unix() + 600,
		"jti": "AAAAAAAAAAAAAAAAAAAAAA", "state": state}
}

func sizes(b *testing.B) []struct {
	name string
	size int
} {
	fixtures := []*mrtrstate.Sealer{newFixture(b, keys.HS256).sealer, newFixture(b, keys.EdDSA).sealer, newFixture(b, keys.A256GCM).sealer}
	return []struct {
		name string
		size int
	}{{"small", 200}, {"2KiB", 2048}, {"near-cap", largestState(fixtures)}}
}

// golangJWTParser verifies as a golang-jwt user would, with the profile's claim checks.
func golangJWTParser(alg string) *jwt.Parser {
	return jwt.NewParser(jwt.WithValidMethods([]string{alg}), jwt.WithIssuer(issuer), jwt.WithSubject(user),
		jwt.WithAudience(aud), jwt.WithIssuedAt(), jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(func() time.Time { return now }))
}

func BenchmarkOpen(b *testing.B) {
	ctx := context.Background()
	for _, size := range sizes(b) {
		for _, alg := range []keys.Algorithm{keys.HS256, keys.EdDSA} {
			f := newFixture(b, alg)
			state := makeState(size.size)
			tok, err := f.sealer.Seal(state, request())
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%s/mrtrstate", size.name, alg), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := f.sealer.Open(ctx, tok, request()); err != nil {
						b.Fatal(err)
					}
				}
			})
			parser := golangJWTParser(string(alg))
			verifyKey := func(*jwt.Token) (any, error) {
				if alg == keys.HS256 {
					return f.secret, nil
				}
				return f.jwk.Public().Key, nil
			}
			b.Run(fmt.Sprintf("%s/%s/golang-jwt", size.name, alg), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					claims := jwt.MapClaims{}
					if _, err := parser.ParseWithClaims(tok, claims, verifyKey); err != nil {
						b.Fatal(err)
					}
					_ = claims["state"]
				}
			})
			joseAlg := jose.SignatureAlgorithm(alg)
			b.Run(fmt.Sprintf("%s/%s/go-jose", size.name, alg), func(b *testing.B) {
				b.ReportAllocs()
				public := f.jwk.Public()
				var key any = public.Key
				if alg == keys.HS256 {
					key = f.secret
				}
				for b.Loop() {
					parsed, err := josejwt.ParseSigned(tok, []jose.SignatureAlgorithm{joseAlg})
					if err != nil {
						b.Fatal(err)
					}
					var standard josejwt.Claims
					var private struct {
						State json.RawMessage `json:"state"`
					}
					if err := parsed.Claims(key, &standard, &private); err != nil {
						b.Fatal(err)
					}
					if err := standard.ValidateWithLeeway(josejwt.Expected{Issuer: issuer, Subject: user,
						AnyAudience: josejwt.Audience{aud}, Time: now}, 0); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		// The encrypted form: go-jose is the peer (golang-jwt has no JWE).
		f := newFixture(b, keys.A256GCM)
		tok, err := f.sealer.Seal(makeState(size.size), request())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%s/A256GCM/mrtrstate", size.name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.sealer.Open(ctx, tok, request()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%s/A256GCM/go-jose", size.name), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				parsed, err := josejwt.ParseEncrypted(tok, []jose.KeyAlgorithm{jose.DIRECT}, []jose.ContentEncryption{jose.A256GCM})
				if err != nil {
					b.Fatal(err)
				}
				var standard josejwt.Claims
				var private struct {
					State json.RawMessage `json:"state"`
				}
				if err := parsed.Claims(f.secret, &standard, &private); err != nil {
					b.Fatal(err)
				}
				if err := standard.ValidateWithLeeway(josejwt.Expected{Issuer: issuer, Subject: user,
					AnyAudience: josejwt.Audience{aud}, Time: now}, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkSeal(b *testing.B) {
	for _, size := range sizes(b) {
		state := makeState(size.size)
		for _, alg := range []keys.Algorithm{keys.HS256, keys.EdDSA, keys.A256GCM} {
			f := newFixture(b, alg)
			b.Run(fmt.Sprintf("%s/%s/mrtrstate", size.name, alg), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := f.sealer.Seal(state, request()); err != nil {
						b.Fatal(err)
					}
				}
			})
			if alg != keys.A256GCM {
				method := jwt.GetSigningMethod(string(alg))
				var signKey any = f.secret
				if alg == keys.EdDSA {
					signKey = f.jwk.Key
				}
				b.Run(fmt.Sprintf("%s/%s/golang-jwt", size.name, alg), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						t := jwt.NewWithClaims(method, jwt.MapClaims(peerClaims(state)))
						t.Header = map[string]any{"alg": string(alg), "typ": "mrtr-state+jwt", "kid": "k1"}
						if _, err := t.SignedString(signKey); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			b.Run(fmt.Sprintf("%s/%s/go-jose", size.name, alg), func(b *testing.B) {
				b.ReportAllocs()
				opts := (&jose.SignerOptions{}).WithType("mrtr-state+jwt").WithHeader("kid", "k1")
				var builder josejwt.Builder
				if alg == keys.A256GCM {
					enc, err := jose.NewEncrypter(jose.A256GCM, jose.Recipient{Algorithm: jose.DIRECT, Key: f.secret, KeyID: "k1"},
						(&jose.EncrypterOptions{}).WithType("mrtr-state+jwt"))
					if err != nil {
						b.Fatal(err)
					}
					builder = josejwt.Encrypted(enc)
				} else {
					var key any = f.secret
					if alg == keys.EdDSA {
						key = f.jwk.Key
					}
					signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: key}, opts)
					if err != nil {
						b.Fatal(err)
					}
					builder = josejwt.Signed(signer)
				}
				for b.Loop() {
					if _, err := builder.Claims(peerClaims(state)).Serialize(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
