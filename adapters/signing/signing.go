// Package signing holds the server's Ed25519 attestation key. The key signs
// the attested tool surface and the audit log's checkpoints; its public half
// is published as a JWK so clients and auditors verify both offline. The key
// comes from ARROWHEAD_ATTESTATION_KEY, or is generated once into the data
// directory, where every local client sharing that directory finds the same
// key.
package signing

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/arrowhead-go/arrowhead/ports"
)

// FileName is the key file generated in the data directory when
// ARROWHEAD_ATTESTATION_KEY is empty.
const FileName = "attestation-key.pem"

// Key is an Ed25519 signing key. It implements ports.Signer.
type Key struct {
	private jwk.Key
	public  jwk.Key
	kid     string
	jwkJSON []byte
}

var _ ports.Signer = (*Key)(nil)

// Load returns the key configured by setting, or the one in dataDir. The
// setting is either a PEM (PKCS#8 Ed25519 private key) given inline, or the
// path of a file holding one. With setting empty the key is read from
// dataDir/FileName, and generated there (mode 0600) when absent; two
// processes starting at once end up with the same key.
func Load(setting, dataDir string) (*Key, error) {
	setting = strings.TrimSpace(setting)
	switch {
	case strings.HasPrefix(setting, "-----BEGIN"):
		return parsePrivatePEM([]byte(setting))
	case setting != "":
		text, err := os.ReadFile(setting)
		if err != nil {
			return nil, fmt.Errorf("attestation key: ARROWHEAD_ATTESTATION_KEY names a file that cannot be read: %w", errors.Unwrap(err))
		}
		return parsePrivatePEM(text)
	}
	if dataDir == "" {
		return nil, errors.New("attestation key: neither ARROWHEAD_ATTESTATION_KEY nor a data directory is set")
	}
	path := filepath.Join(dataDir, FileName)
	text, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		text, err = generate(dataDir, path)
	}
	if err != nil {
		return nil, fmt.Errorf("attestation key: %w", err)
	}
	return parsePrivatePEM(text)
}

// generate writes a new key to path unless another process got there first,
// and returns whichever key is at path afterwards. The key is written to a
// private temporary file and linked into place, so a reader never sees half
// a key and a lost race leaves the winner's key untouched.
func generate(dataDir, path string) ([]byte, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	text := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	tmp, err := os.CreateTemp(dataDir, ".attestation-key-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, err
	}
	if _, err := tmp.Write(text); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	return os.ReadFile(path)
}

// New wraps an Ed25519 private key.
func New(priv ed25519.PrivateKey) (*Key, error) {
	private, err := jwk.FromRaw(priv)
	if err != nil {
		return nil, fmt.Errorf("attestation key: %w", err)
	}
	public, err := jwk.PublicKeyOf(private)
	if err != nil {
		return nil, fmt.Errorf("attestation key: %w", err)
	}
	thumb, err := public.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("attestation key: %w", err)
	}
	kid := base64.RawURLEncoding.EncodeToString(thumb)
	for _, k := range []jwk.Key{private, public} {
		if err := k.Set(jwk.KeyIDKey, kid); err != nil {
			return nil, err
		}
		if err := k.Set(jwk.AlgorithmKey, jwa.EdDSA); err != nil {
			return nil, err
		}
		if err := k.Set(jwk.KeyUsageKey, jwk.ForSignature); err != nil {
			return nil, err
		}
	}
	body, err := json.Marshal(public)
	if err != nil {
		return nil, err
	}
	return &Key{private: private, public: public, kid: kid, jwkJSON: body}, nil
}

func parsePrivatePEM(text []byte) (*Key, error) {
	block, _ := pem.Decode(text)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, errors.New("attestation key: not a PEM PKCS#8 private key")
	}
	raw, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("attestation key: not a PEM PKCS#8 private key")
	}
	priv, ok := raw.(ed25519.PrivateKey)
	if !ok {
		return nil, errors.New("attestation key: the key is not Ed25519")
	}
	return New(priv)
}

// Sign returns a compact JWS (alg EdDSA, kid the key's thumbprint) over
// payload.
func (k *Key) Sign(payload []byte) (string, error) {
	hdr := jws.NewHeaders()
	if err := hdr.Set(jws.KeyIDKey, k.kid); err != nil {
		return "", err
	}
	out, err := jws.Sign(payload, jws.WithKey(jwa.EdDSA, k.private, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		return "", fmt.Errorf("attestation key: sign: %w", err)
	}
	return string(out), nil
}

// KeyID is the key's RFC 7638 SHA-256 thumbprint, base64url.
func (k *Key) KeyID() string { return k.kid }

// PublicJWK is the public key as a JWK.
func (k *Key) PublicJWK() []byte { return k.jwkJSON }

// PublicKeyOf parses a public key given as a JWK, a JWK set holding one
// key, or a PEM (PKIX) Ed25519 public key; it is what verifiers use.
func PublicKeyOf(text []byte) (jwk.Key, error) {
	trimmed := strings.TrimSpace(string(text))
	if strings.HasPrefix(trimmed, "-----BEGIN") {
		key, err := jwk.ParseKey([]byte(trimmed), jwk.WithPEM(true))
		if err != nil {
			return nil, errors.New("public key: not a PEM Ed25519 public key")
		}
		return onlyEd25519Public(key)
	}
	set, err := jwk.Parse([]byte(trimmed))
	if err != nil || set.Len() != 1 {
		return nil, errors.New("public key: not a JWK or a JWK set of one key")
	}
	key, _ := set.Key(0)
	return onlyEd25519Public(key)
}

func onlyEd25519Public(key jwk.Key) (jwk.Key, error) {
	pub, err := jwk.PublicKeyOf(key)
	if err != nil {
		return nil, errors.New("public key: unusable key")
	}
	var raw ed25519.PublicKey
	if err := pub.Raw(&raw); err != nil {
		return nil, errors.New("public key: the key is not Ed25519")
	}
	return pub, nil
}

// Verify checks a compact JWS against an Ed25519 public key and returns its
// payload. Only EdDSA is accepted, whatever the token's header claims.
func Verify(token []byte, public jwk.Key) ([]byte, error) {
	payload, err := jws.Verify(token, jws.WithKey(jwa.EdDSA, public))
	if err != nil {
		return nil, errors.New("signature does not verify with this key")
	}
	return payload, nil
}
