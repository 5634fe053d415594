package keys

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mrtr-state/mrtr-state/go/token/base64url"
)

func secret(seed byte) []byte {
	b := make([]byte, 32)
	for i := range b {
		b[i] = seed + byte(i*7+i*i)
	}
	return b
}

func TestAnExplicitKidIsOneTo128PrintableASCIICharacters(t *testing.T) {
	for _, kid := range []string{"a", "k-1", strings.Repeat("x", 128), "!~"} {
		if _, err := FromSecret(secret(1), kid); err != nil {
			t.Errorf("kid %q refused: %v", kid, err)
		}
	}
	for _, kid := range []string{strings.Repeat("x", 129), "a b", "é", "tab\t", "\x7f"} {
		if _, err := FromSecret(secret(1), kid); err == nil {
			t.Errorf("kid %q loaded; decision D3 refuses it", kid)
		}
		jwk := `{"kty":"oct","kid":"` + strings.ReplaceAll(kid, "\t", `\t`) + `","k":"` + base64url.Encode(secret(1)) + `"}`
		if _, err := ParseJWK([]byte(jwk)); err == nil {
			t.Errorf("JWK kid %q loaded; decision D3 refuses it", kid)
		}
	}
	if _, err := ParseJWK([]byte(`{"kty":"oct","kid":7,"k":"` + base64url.Encode(secret(1)) + `"}`)); err == nil {
		t.Error("a numeric kid loaded")
	}
	// D3: a present kid member is always checked; null is not "absent".
	for _, kid := range []string{`null`, `""`} {
		if _, err := ParseJWK([]byte(`{"kty":"oct","kid":` + kid + `,"k":"` + base64url.Encode(secret(1)) + `"}`)); err == nil {
			t.Errorf("a kid of %s loaded instead of being refused", kid)
		}
	}
}

func TestASecretThatIsAShortPatternRepeatedIsRefusedInEveryForm(t *testing.T) {
	for period := 1; period <= 8; period++ {
		weak := bytes.Repeat(secret(3)[:period], 64/period+1)[:32]
		if _, err := FromSecret(weak, ""); err == nil {
			t.Errorf("an HS256 secret of period %d loaded", period)
		}
		if _, err := NewEncryptionKey(weak, ""); err == nil {
			t.Errorf("an A256GCM key of period %d loaded", period)
		}
		k := base64url.Encode(weak)
		for _, jwk := range []string{`{"kty":"oct","k":"` + k + `"}`, `{"kty":"oct","alg":"A256GCM","k":"` + k + `"}`} {
			if _, err := ParseJWK([]byte(jwk)); err == nil {
				t.Errorf("a JWK with a secret of period %d loaded", period)
			}
			if _, err := ParseJWKS([]byte(`{"keys":[` + jwk + `]}`)); err == nil {
				t.Errorf("a JWKS with a secret of period %d loaded", period)
			}
		}
		if _, err := Parse(k, "test"); err == nil {
			t.Errorf("a bare secret of period %d loaded", period)
		}
	}
	if _, err := FromSecret(make([]byte, 32), ""); err == nil {
		t.Error("the all-zero key loaded")
	}
	nine := bytes.Repeat(secret(5)[:9], 4)[:32]
	if _, err := FromSecret(nine, ""); err != nil {
		t.Errorf("a pattern of 9 bytes is beyond the rule and must load: %v", err)
	}
}

func TestAnEncryptionKeySharingASecretWithAnotherKeyIsRefusedWhateverTheKids(t *testing.T) {
	s := secret(9)
	hs, _ := FromSecret(s, "signing")
	enc, _ := NewEncryptionKey(s, "encrypting")
	enc2, _ := NewEncryptionKey(s, "encrypting-2")
	if _, err := NewKeyring(enc, hs); err == nil {
		t.Error("a ring with an HS256 key and an encryption key of one secret loaded")
	}
	if _, err := NewKeyring(hs, enc); err == nil {
		t.Error("a ring with an HS256 key and an encryption key of one secret loaded (order swapped)")
	}
	if _, err := NewKeyring(enc, enc2); err == nil {
		t.Error("a ring with two encryption keys of one secret loaded")
	}
	k := base64url.Encode(s)
	jwks := `{"keys":[{"kty":"oct","alg":"A256GCM","kid":"e","k":"` + k + `"},{"kty":"oct","kid":"s","k":"` + k + `"}]}`
	if _, err := ParseJWKS([]byte(jwks)); err == nil {
		t.Error("a JWKS with one secret used twice loaded")
	}
	// Under thumbprint kids the two keys also share a kid (the thumbprint covers
	// only kty and k); the refusal names the shared secret, what is wrong.
	thumbprints := `{"keys":[{"kty":"oct","alg":"A256GCM","k":"` + k + `"},{"kty":"oct","k":"` + k + `"}]}`
	if _, err := ParseJWKS([]byte(thumbprints)); err == nil || !strings.Contains(err.Error(), "same secret") {
		t.Errorf("a JWKS with one secret under thumbprint kids: %v; want the shared-secret refusal", err)
	}
	other, _ := NewEncryptionKey(secret(10), "")
	if _, err := NewKeyring(hs, other); err != nil {
		t.Errorf("distinct secrets must load: %v", err)
	}
}

func TestARingRefusesTwoKeysWithOneKid(t *testing.T) {
	a, _ := FromSecret(secret(1), "same")
	b, _ := FromSecret(secret(2), "same")
	if _, err := NewKeyring(a, b); err == nil {
		t.Error("two keys with one kid loaded")
	}
	if _, err := NewKeyring(); err == nil {
		t.Error("an empty ring loaded")
	}
}

func TestNoKeyMaterialInStringsOrErrors(t *testing.T) {
	s := secret(11)
	k, _ := FromSecret(s, "")
	e, _ := Generate(EdDSA, "")
	ring, _ := NewKeyring(k, e)
	shown := fmt.Sprintf("%v %+v %#v %s %x %v %#v", k, k, k, k, k, ring, ring)
	for _, secretText := range []string{base64url.Encode(s), fmt.Sprintf("%x", s), e.PrivateJWK()["d"]} {
		if strings.Contains(shown, secretText) {
			t.Fatalf("key material shown: %s", shown)
		}
	}
	_, err := Parse(base64url.Encode(s[:20]), "the environment variable X")
	if err == nil || strings.Contains(err.Error(), base64url.Encode(s[:20])) {
		t.Errorf("a short secret: %v", err)
	}
	var ke *KeyringError
	if !errors.As(err, &ke) {
		t.Errorf("not a KeyringError: %T", err)
	}
}

func TestRingsRotateAndPublishOnlyEd25519PublicKeys(t *testing.T) {
	hs, _ := Generate(HS256, "")
	ed, _ := Generate(EdDSA, "ed")
	enc, _ := Generate(A256GCM, "")
	ring, err := NewKeyring(hs, ed, enc)
	if err != nil {
		t.Fatal(err)
	}
	public := string(ring.PublicJWKS())
	if strings.Contains(public, `"k"`) || strings.Contains(public, `"d"`) || !strings.Contains(public, `"kid":"ed"`) {
		t.Errorf("public JWKS %s", public)
	}
	verifyOnly, err := ParseJWKS(ring.PublicJWKS())
	if err != nil || verifyOnly.Len() != 1 {
		t.Fatalf("the public JWKS does not load: %v", err)
	}
	if _, err := verifyOnly.SigningKey(); err == nil {
		t.Error("a verify-only ring signs")
	}
	again, err := ParseJWKS(ring.PrivateJWKS())
	if err != nil || again.Len() != 3 || again.Get(hs.Kid()) == nil {
		t.Fatalf("the private JWKS does not load back: %v", err)
	}
	next, _ := Generate(HS256, "")
	rotated, _ := ring.Rotated(next)
	if k, _ := rotated.SigningKey(); k != next || rotated.Get(hs.Kid()) == nil {
		t.Error("rotation did not put the new key first and keep the old")
	}
	without, _ := rotated.Without(hs.Kid())
	if without.Get(hs.Kid()) != nil {
		t.Error("Without kept the key")
	}
}

func TestKeysLoadFromTheEnvironmentAndFromAFile(t *testing.T) {
	s := secret(21)
	t.Setenv("MRTR_STATE_KEYS", base64url.Encode(s)+"\n")
	ring, err := FromEnv("")
	if err != nil || ring.Len() != 1 {
		t.Fatalf("a bare base64url secret: %v", err)
	}
	t.Setenv("MRTR_STATE_KEYS", "   ")
	if _, err := FromEnv(""); err == nil || !strings.Contains(err.Error(), "MRTR_STATE_KEYS") {
		t.Errorf("an unset variable: %v", err)
	}
	ed, _ := Generate(EdDSA, "")
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, ed.keyringJWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile, err := FromFile(path)
	if err != nil || fromFile.Get(ed.Kid()) == nil {
		t.Fatalf("a key file: %v", err)
	}
	single, _ := Parse(string(mustJSON(ed.PrivateJWK())), "x")
	if single.Get(ed.Kid()) == nil {
		t.Error("a single JWK did not load")
	}
	if _, err := FromFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file loaded")
	}
	if _, err := Parse("not base64!", "x"); err == nil {
		t.Error("text that is neither JSON nor base64 loaded")
	}
}

func (k *Key) keyringJWKS() []byte {
	r, _ := NewKeyring(k)
	return r.PrivateJWKS()
}

func mustJSON(m map[string]string) []byte {
	var b strings.Builder
	b.WriteString("{")
	first := true
	for name, value := range m {
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, "%q:%q", name, value)
	}
	b.WriteString("}")
	return []byte(b.String())
}

func TestAnEd25519JWKWhoseXIsNotThePublicKeyOfItsDIsRefused(t *testing.T) {
	a, _ := Generate(EdDSA, "")
	b, _ := Generate(EdDSA, "")
	jwk := a.PrivateJWK()
	jwk["x"] = b.PrivateJWK()["x"]
	if _, err := ParseJWK(mustJSON(jwk)); err == nil {
		t.Error("a mismatched x and d loaded")
	}
}

func TestAKeyOnlyDoesWhatItsAlgorithmDoes(t *testing.T) {
	enc, _ := Generate(A256GCM, "")
	if _, err := enc.Sign([]byte("m")); err == nil || enc.Verify([]byte("m"), make([]byte, 32)) {
		t.Error("an encryption key signs or verifies")
	}
	hs, _ := Generate(HS256, "")
	if _, err := hs.Encrypt(make([]byte, 12), nil, nil); err == nil {
		t.Error("an HS256 key encrypts")
	}
	sig, _ := hs.Sign([]byte("m"))
	if !hs.Verify([]byte("m"), sig) || hs.Verify([]byte("n"), sig) || hs.Verify([]byte("m"), sig[:31]) {
		t.Error("HS256 verification is wrong")
	}
}
