package auth

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
)

// MinRSAKeyBits is the smallest RSA modulus accepted from a key set or a
// PEM file; smaller keys are skipped (JWKS) or refused (static key).
const MinRSAKeyBits = 2048

// allowedAlgs is the pinned list of accepted signature algorithms. It is
// never widened from a key's type: none, every HMAC alg and anything not
// listed here is refused before a key is looked at.
var allowedAlgs = map[jwa.SignatureAlgorithm]bool{
	jwa.RS256: true, jwa.RS384: true, jwa.RS512: true,
	jwa.PS256: true, jwa.PS384: true, jwa.PS512: true,
	jwa.ES256: true, jwa.ES384: true, jwa.ES512: true,
	jwa.EdDSA: true,
}

// verificationKey is one public key the verifier may use.
type verificationKey struct {
	key crypto.PublicKey // *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey
	// alg is the algorithm the key is pinned to by its JWK "alg" member,
	// or "" when the key does not name one.
	alg jwa.SignatureAlgorithm
}

// fits reports whether k may verify a signature made with alg: the alg must
// be allowed, match the key's type (and curve), and match the JWK's own
// "alg" when it has one.
func (k verificationKey) fits(alg jwa.SignatureAlgorithm) bool {
	if !allowedAlgs[alg] || (k.alg != "" && k.alg != alg) {
		return false
	}
	switch pub := k.key.(type) {
	case *rsa.PublicKey:
		switch alg {
		case jwa.RS256, jwa.RS384, jwa.RS512, jwa.PS256, jwa.PS384, jwa.PS512:
			return true
		}
	case *ecdsa.PublicKey:
		switch alg {
		case jwa.ES256:
			return pub.Curve == elliptic.P256()
		case jwa.ES384:
			return pub.Curve == elliptic.P384()
		case jwa.ES512:
			return pub.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == jwa.EdDSA
	}
	return false
}

// checkPublicKey accepts the supported public key types at a usable size.
func checkPublicKey(pub crypto.PublicKey) error {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k.N == nil || k.N.BitLen() < MinRSAKeyBits {
			return errors.New("RSA key is shorter than 2048 bits")
		}
		return nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256(), elliptic.P384(), elliptic.P521():
			return nil
		}
		return errors.New("EC key is not on P-256, P-384 or P-521")
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return errors.New("Ed25519 key has the wrong length")
		}
		return nil
	}
	return errors.New("key type is not RSA, EC or Ed25519")
}

// keyFromJWK converts one JWK from a key set into a verification key. It
// returns ok=false for a key this verifier must not use: symmetric keys,
// encryption keys, unsupported types and undersized keys.
func keyFromJWK(k jwk.Key) (verificationKey, bool) {
	if k.KeyType() == "oct" {
		return verificationKey{}, false
	}
	if use := k.KeyUsage(); use != "" && use != string(jwk.ForSignature) {
		return verificationKey{}, false
	}
	if ops := k.KeyOps(); len(ops) > 0 {
		verify := false
		for _, op := range ops {
			if op == jwk.KeyOpVerify {
				verify = true
			}
		}
		if !verify {
			return verificationKey{}, false
		}
	}
	var alg jwa.SignatureAlgorithm
	if a := k.Algorithm().String(); a != "" {
		alg = jwa.SignatureAlgorithm(a)
		if !allowedAlgs[alg] {
			return verificationKey{}, false
		}
	}
	if err := k.Validate(); err != nil {
		return verificationKey{}, false
	}
	raw, err := jwk.PublicRawKeyOf(k)
	if err != nil || checkPublicKey(raw) != nil {
		return verificationKey{}, false
	}
	return verificationKey{key: raw, alg: alg}, true
}

// parsePublicKeyPEM reads exactly one public key from PEM text: a PKIX
// "PUBLIC KEY", a PKCS#1 "RSA PUBLIC KEY", or a "CERTIFICATE" whose key is
// used. Private key material is refused so it is never configured here.
// Error texts are fixed: they never quote the input.
func parsePublicKeyPEM(text []byte) (crypto.PublicKey, error) {
	block, rest := pem.Decode(text)
	if block == nil {
		return nil, errors.New("auth: public key is not PEM encoded")
	}
	if next, _ := pem.Decode(rest); next != nil {
		return nil, errors.New("auth: public key PEM holds more than one block")
	}
	if strings.Contains(block.Type, "PRIVATE KEY") {
		return nil, errors.New("auth: public key PEM holds a private key; configure the public key only")
	}
	var (
		pub crypto.PublicKey
		err error
	)
	switch block.Type {
	case "PUBLIC KEY":
		pub, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		pub, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case "CERTIFICATE":
		var cert *x509.Certificate
		if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
			pub = cert.PublicKey
		}
	default:
		return nil, errors.New("auth: public key PEM block must be PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE")
	}
	if err != nil {
		return nil, errors.New("auth: public key PEM could not be parsed")
	}
	if err := checkPublicKey(pub); err != nil {
		return nil, errors.New("auth: public key not usable: " + err.Error())
	}
	return pub, nil
}

// unescapeNewlines turns literal "\n" sequences into newlines when PEM text
// arrived through an environment variable that could not hold real ones.
func unescapeNewlines(text []byte) []byte {
	if bytes.Contains(text, []byte("\n")) {
		return text
	}
	return bytes.ReplaceAll(text, []byte(`\n`), []byte("\n"))
}
