package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/arrowhead-go/arrowhead/ports"
)

// tamper flips one character in segment i (0 header, 1 payload, 2 signature).
func tamper(token string, i int) string {
	parts := strings.Split(token, ".")
	b := []byte(parts[i])
	mid := len(b) / 2
	if b[mid] == 'A' {
		b[mid] = 'B'
	} else {
		b[mid] = 'A'
	}
	parts[i] = string(b)
	return strings.Join(parts, ".")
}

// swapPayload keeps token's header and signature but replaces its claims.
func swapPayload(t *testing.T, token string, c map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(token, ".")
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}

func TestVerifyRefusals(t *testing.T) {
	ks := newKeyServer(t, standardSet(t))
	clock := newClock()
	v := newJWKSVerifier(t, ks, clock, nil)

	rsa1 := rsaKey1()
	valid := sign(t, jwa.RS256, rsa1, "rsa1", claims())
	pubPEM := pkixPEM(t, &rsa1.PublicKey)
	pubDER, err := x509.MarshalPKIXPublicKey(&rsa1.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	const marker = "MARKER-caller-value"

	tests := []struct {
		name  string
		token func(t *testing.T) string
		want  error
	}{
		{"wrong issuer", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"iss": "https://" + marker}))
		}, ErrWrongIssuer},
		{"issuer with trailing slash", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"iss": testIssuer + "/"}))
		}, ErrWrongIssuer},
		{"missing issuer", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"iss": nil}))
		}, ErrWrongIssuer},
		{"wrong audience", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"aud": "https://other.example/" + marker}))
		}, ErrWrongAudience},
		{"audience list without us", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"aud": []string{"https://a.example", "https://b.example"}}))
		}, ErrWrongAudience},
		{"audience prefix only", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"aud": testAudience + ".evil"}))
		}, ErrWrongAudience},
		{"missing audience", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"aud": nil}))
		}, ErrWrongAudience},
		{"expired", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"exp": epoch.Add(-time.Minute).Unix()}))
		}, ErrExpired},
		{"expired at the epoch (jwx skips exp=0)", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"exp": 0}))
		}, ErrExpired},
		{"missing exp", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"exp": nil}))
		}, ErrMissingExpiry},
		{"nbf in the future", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"nbf": epoch.Add(2 * time.Minute).Unix()}))
		}, ErrNotYetValid},
		{"iat in the future", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"iat": epoch.Add(2 * time.Minute).Unix()}))
		}, ErrIssuedInFuture},
		{"missing sub", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"sub": nil}))
		}, ErrMissingSubject},
		{"empty sub", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"sub": ""}))
		}, ErrMissingSubject},
		{"sub with a control character", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"sub": "user\n{\"forged\":1}"}))
		}, ErrMissingSubject},
		{"sub too long", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"sub": strings.Repeat("u", MaxSubjectBytes+1)}))
		}, ErrMissingSubject},
		{"alg none, empty signature", func(t *testing.T) string {
			return unsigned(t, "rsa1", "")
		}, ErrAlgorithmNotAllowed},
		{"alg none, junk signature", func(t *testing.T) string {
			return unsigned(t, "rsa1", "c2lnbmF0dXJl")
		}, ErrAlgorithmNotAllowed},
		{"alg NONE (not a known alg)", func(t *testing.T) string {
			hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"NONE","kid":"rsa1"}`))
			return hdr + "." + strings.Split(valid, ".")[1] + "."
		}, ErrAlgorithmNotAllowed},
		{"HS256 with an unrelated secret", func(t *testing.T) string {
			return sign(t, jwa.HS256, []byte("0123456789abcdef0123456789abcdef"), "rsa1", claims())
		}, ErrAlgorithmNotAllowed},
		{"HS256 keyed with the RSA public key PEM", func(t *testing.T) string {
			return sign(t, jwa.HS256, pubPEM, "rsa1", claims())
		}, ErrAlgorithmNotAllowed},
		{"HS512 keyed with the RSA public key DER", func(t *testing.T) string {
			return sign(t, jwa.HS512, pubDER, "rsa1", claims())
		}, ErrAlgorithmNotAllowed},
		{"ES256K is not on the list", func(t *testing.T) string {
			hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"ES256K","kid":"ec1"}`))
			return hdr + "." + strings.Join(strings.Split(valid, ".")[1:], ".")
		}, ErrAlgorithmNotAllowed},
		{"RS256 token naming an EC key", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "ec1", claims())
		}, ErrKeyMismatch},
		{"ES384 token naming a P-256 key", func(t *testing.T) string {
			return sign(t, jwa.ES384, ec384(), "ec1", claims())
		}, ErrKeyMismatch},
		{"RS256 token naming a key pinned to PS256", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsaKey2(), "rsa-ps", claims())
		}, ErrKeyMismatch},
		{"EdDSA token naming an RSA key", func(t *testing.T) string {
			return sign(t, jwa.EdDSA, edKey(), "rsa1", claims())
		}, ErrKeyMismatch},
		{"unknown kid", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, marker, claims())
		}, ErrUnknownKey},
		{"no kid", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "", claims())
		}, ErrUnknownKey},
		{"attacker key embedded in the jwk header", func(t *testing.T) string {
			attacker, err := jwk.FromRaw(&rsaKey2().PublicKey)
			if err != nil {
				t.Fatal(err)
			}
			payload, _ := json.Marshal(claims())
			return signRaw(t, jwa.RS256, rsaKey2(), "rsa1", payload, map[string]any{"jwk": attacker})
		}, ErrBadSignature},
		{"attacker key set named by jku", func(t *testing.T) string {
			payload, _ := json.Marshal(claims())
			return signRaw(t, jwa.RS256, rsaKey2(), "rsa1", payload, map[string]any{"jku": ks.URL + "/attacker"})
		}, ErrBadSignature},
		{"tampered signature", func(t *testing.T) string {
			return tamper(valid, 2)
		}, ErrBadSignature},
		{"tampered payload", func(t *testing.T) string {
			return swapPayload(t, valid, with(map[string]any{"sub": "admin"}))
		}, ErrBadSignature},
		{"signed by another key under a known kid", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsaKey2(), "rsa1", claims())
		}, ErrBadSignature},
		{"oversize garbage", func(t *testing.T) string {
			return strings.Repeat("a", MaxTokenBytes+1)
		}, ErrTokenTooLarge},
		{"oversize but validly signed", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"pad": strings.Repeat("p", MaxTokenBytes)}))
		}, ErrTokenTooLarge},
		{"empty", func(*testing.T) string { return "" }, ErrMalformedToken},
		{"two segments", func(*testing.T) string { return "abc.def" }, ErrMalformedToken},
		{"five segments (JWE)", func(*testing.T) string { return "a.b.c.d.e" }, ErrMalformedToken},
		{"padded segment", func(*testing.T) string { return valid + "=" }, ErrMalformedToken},
		{"JSON serialization", func(*testing.T) string {
			return `{"payload":"e30","signatures":[{"protected":"e30","signature":"e30"}]}`
		}, ErrMalformedToken},
		{"header not JSON", func(*testing.T) string {
			return "bm90LWpzb24." + strings.Join(strings.Split(valid, ".")[1:], ".")
		}, ErrMalformedToken},
		{"critical header", func(t *testing.T) string {
			payload, _ := json.Marshal(claims())
			return signRaw(t, jwa.RS256, rsa1, "rsa1", payload, map[string]any{"crit": []string{"x-ext"}, "x-ext": true})
		}, ErrMalformedToken},
		{"nested JWT", func(t *testing.T) string {
			return signRaw(t, jwa.RS256, rsa1, "rsa1", []byte(valid), map[string]any{"cty": "JWT"})
		}, ErrMalformedToken},
		{"payload is a JWS, not claims", func(t *testing.T) string {
			return signRaw(t, jwa.RS256, rsa1, "rsa1", []byte(valid), nil)
		}, ErrMalformedClaims},
		{"payload is a JSON array", func(t *testing.T) string {
			return signRaw(t, jwa.RS256, rsa1, "rsa1", []byte(`["sub"]`), nil)
		}, ErrMalformedClaims},
		{"exp is not a date", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"exp": "soon"}))
		}, ErrMalformedClaims},
		{"scope is an array", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"scope": []string{"docs:read"}}))
		}, ErrMalformedClaims},
		{"scope is a number", func(t *testing.T) string {
			return sign(t, jwa.RS256, rsa1, "rsa1", with(map[string]any{"scope": 7}))
		}, ErrMalformedClaims},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			token := tc.token(t)
			p, err := v.Verify(t.Context(), token)
			if err != tc.want {
				t.Fatalf("Verify error = %v, want exactly %v", err, tc.want)
			}
			if p.Authenticated || p.Subject != "" || len(p.Scopes) != 0 {
				t.Fatalf("refused token still produced a principal: %+v", p)
			}
			msg := err.Error()
			if strings.Contains(msg, marker) || (len(token) > 8 && strings.Contains(msg, token[:8])) {
				t.Fatalf("error text %q echoes a caller value", msg)
			}
		})
	}
	// Everything above was refused from the cached set: an unknown kid at
	// start-up time is inside the refetch floor.
	if got := ks.requests.Load(); got != 1 {
		t.Fatalf("JWKS requests = %d, want 1", got)
	}
}

func TestVerifyAccepts(t *testing.T) {
	ks := newKeyServer(t, standardSet(t))
	clock := newClock()
	v := newJWKSVerifier(t, ks, clock, nil)

	tests := []struct {
		name       string
		alg        jwa.SignatureAlgorithm
		key        any
		kid        string
		claims     map[string]any
		wantScopes []string
	}{
		{"RS256 with scope string", jwa.RS256, rsaKey1(), "rsa1", claims(), []string{"docs:read", "docs:write"}},
		{"RS512", jwa.RS512, rsaKey1(), "rsa1", claims(), []string{"docs:read", "docs:write"}},
		{"PS256 under a key pinned to it", jwa.PS256, rsaKey2(), "rsa-ps", claims(), []string{"docs:read", "docs:write"}},
		{"PS384 under an unpinned RSA key", jwa.PS384, rsaKey1(), "rsa1", claims(), []string{"docs:read", "docs:write"}},
		{"ES256", jwa.ES256, ecKey(), "ec1", claims(), []string{"docs:read", "docs:write"}},
		{"EdDSA", jwa.EdDSA, edKey(), "ed1", claims(), []string{"docs:read", "docs:write"}},
		{"audience among several", jwa.RS256, rsaKey1(), "rsa1",
			with(map[string]any{"aud": []string{"https://other.example", testAudience}}), []string{"docs:read", "docs:write"}},
		{"expired inside the skew", jwa.RS256, rsaKey1(), "rsa1",
			with(map[string]any{"exp": epoch.Add(-10 * time.Second).Unix()}), []string{"docs:read", "docs:write"}},
		{"nbf inside the skew", jwa.RS256, rsaKey1(), "rsa1",
			with(map[string]any{"nbf": epoch.Add(10 * time.Second).Unix()}), []string{"docs:read", "docs:write"}},
		{"no nbf, no iat", jwa.RS256, rsaKey1(), "rsa1",
			with(map[string]any{"nbf": nil, "iat": nil}), []string{"docs:read", "docs:write"}},
		{"no scopes", jwa.RS256, rsaKey1(), "rsa1", with(map[string]any{"scope": nil}), nil},
		{"scp is not read by default", jwa.RS256, rsaKey1(), "rsa1",
			with(map[string]any{"scope": nil, "scp": []string{"memory:write", "docs:read"}}), nil},
		{"duplicates collapse", jwa.RS256, rsaKey1(), "rsa1",
			with(map[string]any{"scope": "docs:read b docs:read"}), []string{"b", "docs:read"}},
		{"invalid scope tokens dropped", jwa.RS256, rsaKey1(), "rsa1",
			with(map[string]any{"scope": "docs:read bad\"quote back\\slash caf\u00e9  ok"}), []string{"docs:read", "ok"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := v.Verify(t.Context(), sign(t, tc.alg, tc.key, tc.kid, tc.claims))
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := ports.NewPrincipal(testSubject, tc.wantScopes...)
			if p.Subject != want.Subject || !p.Authenticated || p.AllScopes || !slices.Equal(p.Scopes, want.Scopes) {
				t.Fatalf("principal = %+v, want %+v", p, want)
			}
		})
	}
}

func TestVerifyHonoursClock(t *testing.T) {
	ks := newKeyServer(t, standardSet(t))
	clock := newClock()
	v := newJWKSVerifier(t, ks, clock, func(c *Config) { c.AcceptableSkew = 5 * time.Second })
	token := sign(t, jwa.RS256, rsaKey1(), "rsa1", claims()) // exp = epoch+5m

	steps := []struct {
		advance time.Duration
		want    error
	}{
		{0, nil},
		{5 * time.Minute, nil},        // exp reached, inside the 5s skew
		{5 * time.Second, ErrExpired}, // exp + skew reached
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		if _, err := v.Verify(t.Context(), token); err != s.want {
			t.Fatalf("step %d: Verify error = %v, want %v", i, err, s.want)
		}
	}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func selfSignedCert(t *testing.T, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "issuer"},
		NotBefore:    epoch.Add(-time.Hour),
		NotAfter:     epoch.Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestStaticKey(t *testing.T) {
	rsa1 := rsaKey1()
	rsaPEM := pkixPEM(t, &rsa1.PublicKey)
	pkcs1PEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&rsa1.PublicKey)})
	edPEM := pkixPEM(t, edKey().Public())

	tests := []struct {
		name   string
		source func(t *testing.T) string
		alg    jwa.SignatureAlgorithm
		key    any
		kid    string
		want   error
	}{
		{"inline PKIX PEM", func(*testing.T) string { return string(rsaPEM) }, jwa.RS256, rsa1, "", nil},
		{"inline PEM, any kid ignored", func(*testing.T) string { return string(rsaPEM) }, jwa.PS512, rsa1, "whatever", nil},
		{"inline PEM with escaped newlines", func(*testing.T) string {
			return strings.ReplaceAll(strings.TrimSpace(string(rsaPEM)), "\n", `\n`)
		}, jwa.RS256, rsa1, "", nil},
		{"PEM file path", func(t *testing.T) string { return writeFile(t, "issuer.pem", rsaPEM) }, jwa.RS256, rsa1, "", nil},
		{"PKCS#1 RSA PUBLIC KEY", func(*testing.T) string { return string(pkcs1PEM) }, jwa.RS384, rsa1, "", nil},
		{"Ed25519 PEM", func(*testing.T) string { return string(edPEM) }, jwa.EdDSA, edKey(), "", nil},
		{"certificate PEM", func(t *testing.T) string { return string(selfSignedCert(t, ecKey())) }, jwa.ES256, ecKey(), "", nil},
		{"other signer", func(*testing.T) string { return string(rsaPEM) }, jwa.RS256, rsaKey2(), "", ErrBadSignature},
		{"ES256 token against an RSA key", func(*testing.T) string { return string(rsaPEM) }, jwa.ES256, ecKey(), "", ErrKeyMismatch},
		{"HS256 keyed with the PEM itself", func(*testing.T) string { return string(rsaPEM) }, jwa.HS256, rsaPEM, "", ErrAlgorithmNotAllowed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := NewVerifier(t.Context(), Config{
				Issuer: testIssuer, Audience: testAudience,
				PublicKeyPEM: tc.source(t),
				Clock:        newClock().Now,
			})
			if err != nil {
				t.Fatalf("NewVerifier: %v", err)
			}
			p, err := v.Verify(t.Context(), sign(t, tc.alg, tc.key, tc.kid, claims()))
			if err != tc.want {
				t.Fatalf("Verify error = %v, want %v", err, tc.want)
			}
			if tc.want == nil && p.Subject != testSubject {
				t.Fatalf("principal = %+v", p)
			}
			if got := v.Health(t.Context()); got != ports.HealthOK {
				t.Fatalf("Health = %s, want ok", got)
			}
		})
	}
}

func TestNewVerifierConfigErrors(t *testing.T) {
	rsaPEM := string(pkixPEM(t, &rsaKey1().PublicKey))
	privDER, err := x509.MarshalPKCS8PrivateKey(rsaKey1())
	if err != nil {
		t.Fatal(err)
	}
	privPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}))
	weakPEM := string(pkixPEM(t, &rsaWeak().PublicKey))
	missing := filepath.Join(t.TempDir(), "secret-dir", "missing.pem")
	big := writeFile(t, "big.pem", []byte(strings.Repeat("x", MaxPublicKeyFileBytes+1)))

	base := Config{Issuer: testIssuer, Audience: testAudience, PublicKeyPEM: rsaPEM}
	tests := []struct {
		name    string
		mod     func(*Config)
		wantSub string
	}{
		{"no issuer", func(c *Config) { c.Issuer = "" }, "issuer"},
		{"no audience", func(c *Config) { c.Audience = " " }, "audience"},
		{"no key source", func(c *Config) { c.PublicKeyPEM = "" }, "exactly one key source"},
		{"two key sources", func(c *Config) { c.JWKSURI = "https://issuer.example/jwks" }, "exactly one key source"},
		{"private key", func(c *Config) { c.PublicKeyPEM = privPEM }, "private key"},
		{"undersized RSA key", func(c *Config) { c.PublicKeyPEM = weakPEM }, "2048"},
		{"not PEM", func(c *Config) { c.PublicKeyPEM = "-----BEGIN PUBLIC KEY-----\nnot base64\n" }, "not PEM"},
		{"two PEM blocks", func(c *Config) { c.PublicKeyPEM = rsaPEM + rsaPEM }, "more than one"},
		{"missing file", func(c *Config) { c.PublicKeyPEM = missing }, "not found"},
		{"oversize file", func(c *Config) { c.PublicKeyPEM = big }, "too large"},
		{"negative skew", func(c *Config) { c.AcceptableSkew = -time.Second }, "AcceptableSkew"},
		{"huge skew", func(c *Config) { c.AcceptableSkew = time.Hour }, "AcceptableSkew"},
		{"JWKS over plain http", func(c *Config) { c.PublicKeyPEM = ""; c.JWKSURI = "http://issuer.example/jwks" }, "https"},
		{"JWKS with credentials", func(c *Config) { c.PublicKeyPEM = ""; c.JWKSURI = "https://u:p@issuer.example/jwks" }, "credentials"},
		{"JWKS relative", func(c *Config) { c.PublicKeyPEM = ""; c.JWKSURI = "/jwks" }, "absolute"},
		{"floor too small", func(c *Config) {
			c.PublicKeyPEM = ""
			c.JWKSURI = "https://issuer.example/jwks"
			c.MinRefetchInterval = time.Millisecond
		}, "MinRefetchInterval"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			tc.mod(&cfg)
			v, err := NewVerifier(t.Context(), cfg)
			if err == nil || v != nil {
				t.Fatalf("NewVerifier = %v, %v; want an error", v, err)
			}
			if !strings.Contains(err.Error(), tc.wantSub) {
				t.Fatalf("error %q does not mention %q", err, tc.wantSub)
			}
			if strings.Contains(err.Error(), "secret-dir") || strings.Contains(err.Error(), "BEGIN") {
				t.Fatalf("error %q quotes its input", err)
			}
		})
	}
}

// TestKeyFits pins the algorithm/key-type matrix independently of jwx.
func TestKeyFits(t *testing.T) {
	rsaPub := verificationKey{key: &rsaKey1().PublicKey}
	ecPub := verificationKey{key: &ecKey().PublicKey}
	edPub := verificationKey{key: edKey().Public().(ed25519.PublicKey)}
	pinned := verificationKey{key: &rsaKey1().PublicKey, alg: jwa.PS256}
	tests := []struct {
		key  verificationKey
		alg  jwa.SignatureAlgorithm
		want bool
	}{
		{rsaPub, jwa.RS256, true}, {rsaPub, jwa.PS512, true}, {rsaPub, jwa.ES256, false},
		{rsaPub, jwa.HS256, false}, {rsaPub, jwa.NoSignature, false}, {rsaPub, jwa.EdDSA, false},
		{ecPub, jwa.ES256, true}, {ecPub, jwa.ES384, false}, {ecPub, jwa.ES512, false},
		{ecPub, jwa.ES256K, false}, {ecPub, jwa.RS256, false}, {ecPub, jwa.HS256, false},
		{edPub, jwa.EdDSA, true}, {edPub, jwa.ES256, false},
		{pinned, jwa.PS256, true}, {pinned, jwa.RS256, false},
		{verificationKey{key: []byte("secret")}, jwa.HS256, false},
	}
	for _, tc := range tests {
		if got := tc.key.fits(tc.alg); got != tc.want {
			t.Errorf("fits(%T, %s) = %v, want %v", tc.key.key, tc.alg, got, tc.want)
		}
	}
}

func TestReasonOf(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{ErrExpired, "expired"},
		{ErrWrongAudience, "wrong_audience"},
		{ErrKeysUnavailable, "keys_unavailable"},
		{os.ErrNotExist, ReasonInvalidToken},
	}
	for _, tc := range tests {
		if got := ReasonOf(tc.err); got != tc.want {
			t.Errorf("ReasonOf(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestScopesComeFromOneClaim: a token carrying both claims is read through
// the configured one only; the other can never widen the grant.
func TestScopesComeFromOneClaim(t *testing.T) {
	ks := newKeyServer(t, standardSet(t))
	clock := newClock()
	byScope := newJWKSVerifier(t, ks, clock, nil)
	bySCP := newJWKSVerifier(t, ks, clock, func(c *Config) { c.ScopeClaim = ScopeClaimSCP })

	tests := []struct {
		name     string
		v        *Verifier
		claims   map[string]any
		want     []string
		wantErr  error
		excluded string
	}{
		{"scope wins by default", byScope,
			with(map[string]any{"scope": "tools:read", "scp": "docs:write"}), []string{"tools:read"}, nil, "docs:write"},
		{"scp array ignored by default", byScope,
			with(map[string]any{"scope": "tools:read", "scp": []string{"docs:write"}}), []string{"tools:read"}, nil, "docs:write"},
		{"malformed scp ignored by default", byScope,
			with(map[string]any{"scope": "tools:read", "scp": map[string]any{"docs:write": true}}), []string{"tools:read"}, nil, "docs:write"},
		{"scp chosen: scope ignored", bySCP,
			with(map[string]any{"scope": "docs:write", "scp": "tools:read"}), []string{"tools:read"}, nil, "docs:write"},
		{"scp chosen: array", bySCP,
			with(map[string]any{"scope": "docs:write", "scp": []string{"memory:write", "docs:read"}}), []string{"docs:read", "memory:write"}, nil, "docs:write"},
		{"scp chosen: string", bySCP,
			with(map[string]any{"scope": nil, "scp": "sql:query  docs:read"}), []string{"docs:read", "sql:query"}, nil, ""},
		{"scp chosen: only scope present", bySCP,
			with(map[string]any{"scope": "docs:write"}), nil, nil, "docs:write"},
		{"scp chosen: holds a number", bySCP,
			with(map[string]any{"scp": []any{"docs:read", 7}}), nil, ErrMalformedClaims, ""},
		{"scp chosen: an object", bySCP,
			with(map[string]any{"scp": map[string]any{"docs:read": true}}), nil, ErrMalformedClaims, ""},
		{"scope chosen: an array", byScope,
			with(map[string]any{"scope": []string{"docs:read"}}), nil, ErrMalformedClaims, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.v.Verify(t.Context(), sign(t, jwa.RS256, rsaKey1(), "rsa1", tc.claims))
			if err != tc.wantErr {
				t.Fatalf("Verify error = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if want := ports.NewPrincipal(testSubject, tc.want...); !slices.Equal(p.Scopes, want.Scopes) {
				t.Fatalf("scopes = %q, want %q", p.Scopes, want.Scopes)
			}
			if tc.excluded != "" && p.HasScope(tc.excluded) {
				t.Fatalf("the ignored claim granted %q", tc.excluded)
			}
		})
	}
	if _, err := NewVerifier(t.Context(), Config{Issuer: testIssuer, Audience: testAudience,
		PublicKeyPEM: string(pkixPEM(t, rsaKey1().Public())), ScopeClaim: "roles"}); err == nil {
		t.Fatal("a ScopeClaim other than scope or scp was accepted")
	}
}

// TestTokenTypeHeader: typ may be absent, JWT or at+jwt (a media type:
// case-insensitive, "application/" optional); anything else is refused,
// and RequireAccessTokenType admits at+jwt alone.
func TestTokenTypeHeader(t *testing.T) {
	ks := newKeyServer(t, standardSet(t))
	clock := newClock()
	lenient := newJWKSVerifier(t, ks, clock, nil)
	strict := newJWKSVerifier(t, ks, clock, func(c *Config) { c.RequireAccessTokenType = true })
	payload, err := json.Marshal(claims())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		typ                 any // nil: no typ header
		lenientOK, strictOK bool
	}{
		{nil, true, false},
		{"JWT", true, false},
		{"jwt", true, false},
		{"application/jwt", true, false},
		{"at+jwt", true, true},
		{"AT+JWT", true, true},
		{"application/at+jwt", true, true},
		{"Application/At+JWT", true, true},
		{"JWE", false, false},
		{"JOSE", false, false},
		{"JOSE+JSON", false, false},
		{"secevent+jwt", false, false},
		{"logout+jwt", false, false},
		{"dpop+jwt", false, false},
		{"at+jwt; charset=utf-8", false, false},
		{" at+jwt", false, false},
		{"", false, false},
		{"text/at+jwt", false, false},
		{"application/application/at+jwt", false, false},
	}
	for _, tc := range tests {
		token := signRaw(t, jwa.RS256, rsaKey1(), "rsa1", payload, map[string]any{jws.TypeKey: tc.typ})
		for _, side := range []struct {
			name string
			v    *Verifier
			ok   bool
		}{{"lenient", lenient, tc.lenientOK}, {"strict", strict, tc.strictOK}} {
			_, err := side.v.Verify(t.Context(), token)
			switch {
			case side.ok && err != nil:
				t.Errorf("%s: typ %q refused: %v", side.name, tc.typ, err)
			case !side.ok && err != ErrTokenType:
				t.Errorf("%s: typ %q: error %v, want %v", side.name, tc.typ, err, ErrTokenType)
			}
		}
	}
}

// TestTimeClaimsMustBeNumbers: NumericDate is a JSON number; a numeric
// string, a boolean or null in exp, nbf or iat is refused, however far in
// the future the string points.
func TestTimeClaimsMustBeNumbers(t *testing.T) {
	ks := newKeyServer(t, standardSet(t))
	v := newJWKSVerifier(t, ks, newClock(), nil)
	far := strconv.FormatInt(epoch.Add(24*time.Hour).Unix(), 10)
	now := strconv.FormatInt(epoch.Unix(), 10)
	for _, claim := range []string{"exp", "nbf", "iat"} {
		valid := map[string]string{"exp": far, "nbf": now, "iat": now}[claim]
		for _, bad := range []any{"9999999999", valid, valid + ".0", " " + valid, true, nil, []any{valid}, map[string]any{}} {
			c := claims()
			c[claim] = bad
			if _, err := v.Verify(t.Context(), sign(t, jwa.RS256, rsaKey1(), "rsa1", c)); err != ErrMalformedClaims {
				t.Errorf("%s = %#v: error %v, want %v", claim, bad, err, ErrMalformedClaims)
			}
		}
		// The same instant as a number is fine.
		n, _ := strconv.ParseFloat(valid, 64)
		c := claims()
		c[claim] = n
		if _, err := v.Verify(t.Context(), sign(t, jwa.RS256, rsaKey1(), "rsa1", c)); err != nil {
			t.Errorf("%s = %v (a number): %v", claim, n, err)
		}
	}
}
