package keys

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"

	"github.com/mrtr-state/mrtr-state/go/token/base64url"
)

// Algorithm is a key's algorithm: a signing algorithm of the profile, or A256GCM
// for an encryption key of the encrypted form. The algorithm belongs to the key,
// never to a token.
type Algorithm string

// The algorithms of the profile (sections 3.1 and 3.6).
const (
	HS256   Algorithm = "HS256"
	EdDSA   Algorithm = "EdDSA"
	A256GCM Algorithm = "A256GCM"
)

// Key sizes and limits of section 7.
const (
	// MinSecretBytes is the shortest HS256 secret, in bytes (section 7.1).
	MinSecretBytes = 32
	// EncryptionKeyBytes is the exact length of an A256GCM key (section 7.6).
	EncryptionKeyBytes = 32
	// MaxRepeatedPattern is the longest repeated pattern refused in a secret (D5).
	MaxRepeatedPattern = 8
)

// KeyringError is the error of anything that loads or builds keys: a bad JWK, a
// short or weak secret, a bad kid, two keys with one kid, a ring that cannot
// sign. Its message says what is wrong and never holds key material.
type KeyringError struct{ msg string }

// Error says what is wrong with the key, never its material.
func (e *KeyringError) Error() string { return e.msg }

func keyringError(msg string) error { return &KeyringError{msg} }

func keyringErrorf(format string, args ...any) error {
	return &KeyringError{fmt.Sprintf(format, args...)}
}

const keygenAdvice = "make one with `mrtr-state keygen --alg HS256` or from 32 bytes of crypto/rand"

// Key is one key of a Keyring. Make keys with Generate, FromSecret,
// NewEncryptionKey, FromJWK or ParseJWK. A Key is immutable and safe to share
// between goroutines; its String shows the algorithm and kid, never the secret.
type Key struct {
	kid     string
	alg     Algorithm
	secret  []byte             // HS256 and A256GCM
	public  ed25519.PublicKey  // EdDSA
	private ed25519.PrivateKey // EdDSA signing keys
	aead    cipher.AEAD        // A256GCM
}

// Kid is the key id a token names in its kid header parameter.
func (k *Key) Kid() string { return k.kid }

// Alg is the key's algorithm.
func (k *Key) Alg() Algorithm { return k.alg }

// CanSign tells whether the key can mint tokens (false for an Ed25519 public key).
func (k *Key) CanSign() bool { return k.alg != EdDSA || k.private != nil }

// IsEncryption tells whether the key is an A256GCM encryption key.
func (k *Key) IsEncryption() bool { return k.alg == A256GCM }

// String shows the algorithm and the kid; never key material.
func (k *Key) String() string {
	return fmt.Sprintf("Key(alg=%s, kid=%q, can_sign=%t)", k.alg, k.kid, k.CanSign())
}

// GoString is String, so that %#v shows no key material either.
func (k *Key) GoString() string { return k.String() }

// Format prints String for every verb, so that no verb (%v, %+v, %#v, %x, %s)
// ever prints key material.
func (k *Key) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(k.String())) }

// Generate makes a new key of alg: 32 random bytes for HS256 and A256GCM, a new
// key pair for EdDSA. An empty kid means the RFC 7638 thumbprint.
func Generate(alg Algorithm, kid string) (*Key, error) {
	switch alg {
	case HS256, A256GCM:
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return nil, err
		}
		if alg == HS256 {
			return FromSecret(secret, kid)
		}
		return NewEncryptionKey(secret, kid)
	case EdDSA:
		_, private, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		return newEdDSA(private, nil, kid)
	}
	return nil, keyringErrorf("unsupported algorithm %q; the profile allows HS256, EdDSA and A256GCM", string(alg))
}

// FromSecret makes an HS256 key from raw secret bytes: at least 32 of them, not
// one byte or a short pattern repeated. An empty kid means the thumbprint.
func FromSecret(secret []byte, kid string) (*Key, error) {
	if len(secret) < MinSecretBytes {
		return nil, keyringErrorf("an HS256 secret must be at least %d random bytes, this one has %d; %s",
			MinSecretBytes, len(secret), keygenAdvice)
	}
	if err := checkNotRepeated(secret); err != nil {
		return nil, err
	}
	k := &Key{alg: HS256, secret: bytes.Clone(secret)}
	return k, k.setKid(kid)
}

// NewEncryptionKey makes an A256GCM key of the encrypted form from exactly 32
// random bytes. An empty kid means the thumbprint.
func NewEncryptionKey(secret []byte, kid string) (*Key, error) {
	if len(secret) != EncryptionKeyBytes {
		return nil, keyringErrorf("an A256GCM key must be exactly %d random bytes, this one has %d; "+
			"make one with `mrtr-state keygen --alg A256GCM`", EncryptionKeyBytes, len(secret))
	}
	if err := checkNotRepeated(secret); err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, keyringError("an A256GCM key cannot be used with AES")
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, keyringError("an A256GCM key cannot be used with GCM")
	}
	k := &Key{alg: A256GCM, secret: bytes.Clone(secret), aead: aead}
	return k, k.setKid(kid)
}

// newEdDSA makes an Ed25519 key from its private key, its public key x, or both.
func newEdDSA(private ed25519.PrivateKey, x []byte, kid string) (*Key, error) {
	k := &Key{alg: EdDSA}
	if private != nil {
		public := private.Public().(ed25519.PublicKey)
		if x != nil && !bytes.Equal(public, x) {
			return nil, keyringError(`an Ed25519 JWK's "x" is not the public key of its "d"`)
		}
		k.private, k.public = private, public
	} else {
		if len(x) != ed25519.PublicKeySize {
			return nil, keyringError(`an Ed25519 JWK's "x" must be 32 bytes`)
		}
		// Profile 7.2: a canonical point not of small order, checked once at load,
		// so a key under which a constant signature verifies never enters a ring.
		if err := checkEd25519Point(x); err != nil {
			return nil, err
		}
		k.public = ed25519.PublicKey(bytes.Clone(x))
	}
	return k, k.setKid(kid)
}

// checkKid applies decision D3: an explicit kid is 1 to 128 characters, each in
// U+0021..U+007E.
func checkKid(kid string) error {
	if len(kid) < 1 || len(kid) > 128 {
		return keyringError("a kid must be 1 to 128 printable ASCII characters without spaces")
	}
	for i := 0; i < len(kid); i++ {
		if kid[i] < 0x21 || kid[i] > 0x7e {
			return keyringError("a kid must be 1 to 128 printable ASCII characters without spaces")
		}
	}
	return nil
}

func (k *Key) setKid(kid string) error {
	if kid == "" {
		k.kid = k.Thumbprint()
		return nil
	}
	if err := checkKid(kid); err != nil {
		return err
	}
	k.kid = kid
	return nil
}

// checkNotRepeated applies decision D5 to an oct secret: one byte repeated, or a
// pattern of at most 8 bytes repeated, is refused as obviously not random.
func checkNotRepeated(secret []byte) error {
	for period := 1; period <= MaxRepeatedPattern && period < len(secret); period++ {
		if bytes.Equal(secret[period:], secret[:len(secret)-period]) {
			what := "one byte repeated"
			if period > 1 {
				what = fmt.Sprintf("a pattern of %d bytes repeated", period)
			}
			return keyringErrorf("the secret is %s, not random bytes; %s", what, keygenAdvice)
		}
	}
	return nil
}

// Thumbprint is the RFC 7638 JWK thumbprint (SHA-256, base64url) over the
// required members: {"k", "kty"} for an oct key, {"crv", "kty", "x"} for Ed25519.
func (k *Key) Thumbprint() string {
	var input string
	if k.alg == EdDSA {
		input = `{"crv":"Ed25519","kty":"OKP","x":"` + base64url.Encode(k.public) + `"}`
	} else {
		input = `{"k":"` + base64url.Encode(k.secret) + `","kty":"oct"}`
	}
	sum := sha256.Sum256([]byte(input))
	return base64url.Encode(sum[:])
}

// SignatureSize is the length of the key's signatures (32 for HS256, 64 for
// EdDSA), 0 for an encryption key.
func (k *Key) SignatureSize() int {
	switch k.alg {
	case HS256:
		return sha256.Size
	case EdDSA:
		return ed25519.SignatureSize
	}
	return 0
}

// Sign signs message with the key's algorithm. An Ed25519 public key and an
// encryption key cannot sign.
func (k *Key) Sign(message []byte) ([]byte, error) {
	switch {
	case k.alg == HS256:
		mac := hmac.New(sha256.New, k.secret)
		mac.Write(message)
		return mac.Sum(nil), nil
	case k.alg == EdDSA && k.private != nil:
		return ed25519.Sign(k.private, message), nil
	case k.alg == EdDSA:
		return nil, keyringErrorf("key %q is an Ed25519 public key and cannot sign", k.kid)
	}
	return nil, keyringErrorf("key %q is an A256GCM encryption key and does not sign", k.kid)
}

// Verify tells whether signature is the key's signature of message; an HS256 MAC
// is compared in constant time. An encryption key verifies nothing.
func (k *Key) Verify(message, signature []byte) bool {
	switch k.alg {
	case HS256:
		if len(signature) != sha256.Size {
			return false
		}
		mac := hmac.New(sha256.New, k.secret)
		mac.Write(message)
		var sum [sha256.Size]byte
		return subtle.ConstantTimeCompare(mac.Sum(sum[:0]), signature) == 1
	case EdDSA:
		return len(signature) == ed25519.SignatureSize && ed25519.Verify(k.public, message, signature)
	}
	return false
}

// Encrypt returns the AES-256-GCM ciphertext of plaintext followed by its
// 16-byte tag, under iv (12 bytes) with aad authenticated. Only an encryption key
// encrypts.
func (k *Key) Encrypt(iv, plaintext, aad []byte) ([]byte, error) {
	if k.aead == nil {
		return nil, keyringErrorf("key %q is not an A256GCM encryption key", k.kid)
	}
	if len(iv) != k.aead.NonceSize() {
		return nil, keyringError("an A256GCM IV must be 12 bytes")
	}
	return k.aead.Seal(nil, iv, plaintext, aad), nil
}

// Decrypt returns the plaintext of data (ciphertext then tag), or false when the
// tag does not verify or the key is not an encryption key.
func (k *Key) Decrypt(iv, data, aad []byte) ([]byte, bool) {
	if k.aead == nil || len(iv) != k.aead.NonceSize() {
		return nil, false
	}
	plaintext, err := k.aead.Open(nil, iv, data, aad)
	return plaintext, err == nil
}

// PublicJWK is the public JWK of an Ed25519 key (kty, crv, alg, use, kid, x).
// HS256 secrets and encryption keys are never published: they have none.
func (k *Key) PublicJWK() (map[string]string, error) {
	switch k.alg {
	case HS256:
		return nil, keyringErrorf("key %q is an HS256 secret, which has no public JWK", k.kid)
	case A256GCM:
		return nil, keyringErrorf("key %q is an A256GCM encryption key, which has no public JWK", k.kid)
	}
	return map[string]string{
		"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": k.kid, "x": base64url.Encode(k.public),
	}, nil
}

// PrivateJWK is the full JWK, secret included, for storing the key. Handle it as
// a secret.
func (k *Key) PrivateJWK() map[string]string {
	switch k.alg {
	case HS256:
		return map[string]string{"kty": "oct", "alg": "HS256", "use": "sig", "kid": k.kid, "k": base64url.Encode(k.secret)}
	case A256GCM:
		return map[string]string{"kty": "oct", "alg": "A256GCM", "use": "enc", "kid": k.kid, "k": base64url.Encode(k.secret)}
	}
	jwk, _ := k.PublicJWK()
	if k.private != nil {
		jwk["d"] = base64url.Encode(k.private.Seed())
	}
	return jwk
}
