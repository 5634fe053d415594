package keys

import (
	"bytes"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"os"
	"regexp"
	"strings"

	"github.com/mrtr-state/mrtr-state/go/token/jsonstrict"
)

// DefaultKeysVariable is the environment variable FromEnv reads by default.
const DefaultKeysVariable = "MRTR_STATE_KEYS"

// MaxKeyFileBytes is the largest key file FromFile reads.
const MaxKeyFileBytes = 1 << 20

// Source gives the keys to use now. A *Keyring is a Source of itself; a source
// whose keys change while the server runs (a remote JWKS) returns a new
// Keyring each time they change, so that one call always sees one generation.
type Source interface {
	Keyring() *Keyring
}

// Keyring is an ordered, immutable set of keys with distinct kids: the first
// signs (or, an encryption key, encrypts), every key opens the tokens of its own
// form. Rotation (profile, 7.3) builds new rings with Rotated and Without.
type Keyring struct {
	keys  []*Key
	byKid map[string]*Key
}

// NewKeyring makes a ring of keys, the first one signing. It refuses an empty
// ring, two keys with one kid, (decision D4) an encryption key that holds the
// same secret as any other key, and (issue 32, D4) an HS256 or encryption key
// whose secret is the d or the x of an Ed25519 key of the ring.
func NewKeyring(keys ...*Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, keyringError("a key ring needs at least one key")
	}
	r := &Keyring{keys: append([]*Key(nil), keys...), byKid: make(map[string]*Key, len(keys))}
	for i, k := range r.keys {
		if k == nil {
			return nil, keyringError("a key ring holds keys, not nil")
		}
		// Profile 7.6 and 9.10, decision D4: one secret never serves two uses.
		// Checked before the kids, so that two keys sharing a secret under
		// thumbprint kids (equal, since the thumbprint covers only the secret)
		// are refused for what is wrong with them.
		for _, other := range r.keys[:i] {
			if (k.alg == A256GCM || other.alg == A256GCM) && k.secret != nil && other.secret != nil &&
				bytes.Equal(k.secret, other.secret) {
				return nil, keyringErrorf("keys %q and %q hold the same secret; an encryption key must be "+
					"a separate, freshly generated key", other.kid, k.kid)
			}
		}
		if r.byKid[k.kid] != nil {
			return nil, keyringErrorf("two keys in the ring have the kid %q", k.kid)
		}
		r.byKid[k.kid] = k
	}
	// Issue 32, D4: the d and the x of an Ed25519 key are secret bytes for the
	// rule of profile 7.6 too (an x is published, a d signs), so no oct key of
	// the ring may hold either.
	for _, k := range r.keys {
		for _, other := range r.keys {
			if k.holdsBytesOf(other) {
				return nil, keyringErrorf("key %q holds the same secret bytes as the d or the x of the Ed25519 key "+
					"%q; an oct key must hold a secret of its own", k.kid, other.kid)
			}
		}
	}
	return r, nil
}

// holdsBytesOf tells whether k is an oct key (HS256 or A256GCM) whose secret
// is the private key d or the public key x of the Ed25519 key other, compared
// in constant time.
func (k *Key) holdsBytesOf(other *Key) bool {
	if k.secret == nil || other.alg != EdDSA {
		return false
	}
	held := subtle.ConstantTimeCompare(k.secret, other.public)
	if other.private != nil {
		held |= subtle.ConstantTimeCompare(k.secret, other.private.Seed())
	}
	return held == 1
}

// Keyring returns the ring itself, so a *Keyring is a Source.
func (r *Keyring) Keyring() *Keyring { return r }

// Keys returns the keys, signing key first (a copy).
func (r *Keyring) Keys() []*Key { return append([]*Key(nil), r.keys...) }

// Len is the number of keys.
func (r *Keyring) Len() int { return len(r.keys) }

// Get returns the key with this kid, or nil.
func (r *Keyring) Get(kid string) *Key { return r.byKid[kid] }

// SigningKey is the first key, which mints; an error for a verify-only ring.
func (r *Keyring) SigningKey() (*Key, error) {
	k := r.keys[0]
	if !k.CanSign() {
		return nil, keyringError("this key ring is verify-only: its first key is an Ed25519 public key; " +
			"load the private JWKS to mint request state")
	}
	return k, nil
}

// String lists the keys without key material.
func (r *Keyring) String() string {
	parts := make([]string, len(r.keys))
	for i, k := range r.keys {
		parts[i] = k.String()
	}
	return "Keyring[" + strings.Join(parts, ", ") + "]"
}

// GoString is String.
func (r *Keyring) GoString() string { return r.String() }

// Rotated returns a new ring with k first (it signs from now on); the old keys still open.
func (r *Keyring) Rotated(k *Key) (*Keyring, error) {
	return NewKeyring(append([]*Key{k}, r.keys...)...)
}

// Without returns a new ring without the key kid; tokens it signed stop opening.
func (r *Keyring) Without(kid string) (*Keyring, error) {
	if r.byKid[kid] == nil {
		return nil, keyringErrorf("the ring has no key %q", kid)
	}
	var rest []*Key
	for _, k := range r.keys {
		if k.kid != kid {
			rest = append(rest, k)
		}
	}
	return NewKeyring(rest...)
}

// PublicJWKS is the JWKS of the ring's Ed25519 public keys, for verify-only
// replicas (profile, 7.5). HS256 secrets and encryption keys are always left out.
func (r *Keyring) PublicJWKS() []byte {
	jwks := struct {
		Keys []map[string]string `json:"keys"`
	}{Keys: []map[string]string{}}
	for _, k := range r.keys {
		if jwk, err := k.PublicJWK(); err == nil {
			jwks.Keys = append(jwks.Keys, jwk)
		}
	}
	text, _ := json.Marshal(jwks)
	return text
}

// PrivateJWKS is the full JWKS, secrets included, for storing the ring. Handle
// it as a secret.
func (r *Keyring) PrivateJWKS() []byte {
	jwks := struct {
		Keys []map[string]string `json:"keys"`
	}{}
	for _, k := range r.keys {
		jwks.Keys = append(jwks.Keys, k.PrivateJWK())
	}
	text, _ := json.Marshal(jwks)
	return text
}

// ParseJWKS loads a JWKS ({"keys": [...]}) from its JSON text; the first key signs.
func ParseJWKS(text []byte) (*Keyring, error) {
	v, err := parseKeyJSON(text, "a JWKS")
	if err != nil {
		return nil, err
	}
	return fromJWKS(v)
}

func fromJWKS(v *jsonstrict.Value) (*Keyring, error) {
	list := v.Get("keys")
	if v.Kind != jsonstrict.Object || list == nil || list.Kind != jsonstrict.Array {
		return nil, keyringError(`a JWKS must be a JSON object with a "keys" array`)
	}
	ring := make([]*Key, 0, len(list.Items))
	for _, item := range list.Items {
		k, err := FromJWK(item)
		if err != nil {
			return nil, err
		}
		ring = append(ring, k)
	}
	return NewKeyring(ring...)
}

// FromEnv loads keys from the environment variable name (DefaultKeysVariable when
// empty) by Parse's rules.
func FromEnv(name string) (*Keyring, error) {
	if name == "" {
		name = DefaultKeysVariable
	}
	value := os.Getenv(name)
	if strings.TrimSpace(value) == "" {
		return nil, keyringErrorf("the environment variable %s is not set: set it to a JWKS "+
			"(`mrtr-state keygen --alg EdDSA`) or an HS256 secret of at least %d bytes (%s)",
			name, MinSecretBytes, keygenAdvice)
	}
	return Parse(value, "the environment variable "+name)
}

// FromFile loads keys from a key file (at most MaxKeyFileBytes, UTF-8) by
// Parse's rules. Only a regular file is read (a FIFO, a device or a directory
// is refused without waiting for a writer), and not one anyone may write (mode
// o+w: anyone could put in a key of their own). Messages name the file, never
// its contents.
func FromFile(path string) (*Keyring, error) {
	data, _, err := readKeyFile(path, false)
	if err != nil {
		return nil, err
	}
	return parseKeyFile(path, data)
}

var (
	urlAlphabet = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	stdAlphabet = regexp.MustCompile(`^[A-Za-z0-9+/]+$`)
)

// Parse reads keys written as MRTR_STATE_KEYS holds them: a JWKS or a single
// JWK as JSON, or one HS256 secret in base64 or base64url (padding optional)
// that decodes to at least 32 bytes and is not a short pattern repeated. An
// A256GCM key comes as a JWK or in a JWKS; a bare secret is always HS256. what
// names the origin in error messages ("the environment variable X").
func Parse(value, what string) (*Keyring, error) {
	value = strings.TrimSpace(value)
	if strings.HasPrefix(value, "{") {
		v, err := parseKeyJSON([]byte(value), what)
		if err != nil {
			return nil, err
		}
		if v.Get("keys") != nil {
			return fromJWKS(v)
		}
		k, err := FromJWK(v)
		if err != nil {
			return nil, err
		}
		return NewKeyring(k)
	}
	text := strings.TrimRight(value, "=")
	var secret []byte
	var err error
	switch {
	case urlAlphabet.MatchString(text):
		secret, err = base64.RawURLEncoding.DecodeString(text)
	case stdAlphabet.MatchString(text):
		secret, err = base64.RawStdEncoding.DecodeString(text)
	default:
		err = errNotBase64
	}
	if err != nil {
		return nil, keyringErrorf("%s is neither JSON nor a base64 secret; %s", what, keygenAdvice)
	}
	if len(secret) < MinSecretBytes {
		return nil, keyringErrorf("%s holds a secret of %d bytes; HS256 needs at least %d random bytes: %s",
			what, len(secret), MinSecretBytes, keygenAdvice)
	}
	k, err := FromSecret(secret, "")
	if err != nil {
		return nil, keyringErrorf("%s: %s", what, err.Error())
	}
	return NewKeyring(k)
}

var errNotBase64 = keyringError("not base64")
