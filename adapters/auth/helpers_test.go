package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

const (
	testIssuer   = "https://issuer.example"
	testAudience = "https://mcp.example"
	testSubject  = "user-123"
)

// epoch is the fixed time the tests run at.
var epoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Keys are generated once per test binary: RSA generation is slow under -race.
var (
	rsaKey1 = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA(2048) })
	rsaKey2 = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA(2048) })
	rsaWeak = sync.OnceValue(func() *rsa.PrivateKey { return mustRSA(1024) })
	ecKey   = sync.OnceValue(func() *ecdsa.PrivateKey { return mustEC(elliptic.P256()) })
	ec384   = sync.OnceValue(func() *ecdsa.PrivateKey { return mustEC(elliptic.P384()) })
	edKey   = sync.OnceValue(func() ed25519.PrivateKey {
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			panic(err)
		}
		return k
	})
)

func mustRSA(bits int) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		panic(err)
	}
	return k
}

func mustEC(c elliptic.Curve) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

func newClock() *portstest.Clock { return &portstest.Clock{T: epoch} }

// claims returns a valid claim set at epoch.
func claims() map[string]any {
	return map[string]any{
		"iss":   testIssuer,
		"aud":   testAudience,
		"sub":   testSubject,
		"exp":   epoch.Add(5 * time.Minute).Unix(),
		"iat":   epoch.Unix(),
		"nbf":   epoch.Unix(),
		"scope": "docs:read docs:write",
	}
}

// with returns claims() changed by set (a nil value deletes the claim).
func with(set map[string]any) map[string]any {
	c := claims()
	for k, v := range set {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

// setHeaders sets each of extra's protected headers on h; a nil value
// removes the header instead.
func setHeaders(t testing.TB, h jws.Headers, extra map[string]any) {
	t.Helper()
	for k, v := range extra {
		if v == nil {
			if err := h.Remove(k); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := h.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
}

// signRaw signs payload with alg and key, adding kid (when non-empty) and
// any extra protected headers (a nil value removes a header, typ included).
func signRaw(t testing.TB, alg jwa.SignatureAlgorithm, key any, kid string, payload []byte, extra map[string]any) string {
	t.Helper()
	h := jws.NewHeaders()
	if kid != "" {
		if err := h.Set(jws.KeyIDKey, kid); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Set(jws.TypeKey, "JWT"); err != nil {
		t.Fatal(err)
	}
	setHeaders(t, h, extra)
	out, err := jws.Sign(payload, jws.WithKey(alg, key, jws.WithProtectedHeaders(h)))
	if err != nil {
		t.Fatalf("signing: %v", err)
	}
	return string(out)
}

// sign signs a claim set.
func sign(t testing.TB, alg jwa.SignatureAlgorithm, key any, kid string, c map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return signRaw(t, alg, key, kid, payload, nil)
}

// unsigned builds an alg "none" token with the given signature segment.
func unsigned(t *testing.T, kid, sig string) string {
	t.Helper()
	hdr, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT", "kid": kid})
	payload, _ := json.Marshal(claims())
	enc := base64.RawURLEncoding
	return enc.EncodeToString(hdr) + "." + enc.EncodeToString(payload) + "." + sig
}

// pkixPEM returns the PKIX "PUBLIC KEY" PEM of pub.
func pkixPEM(t testing.TB, pub crypto.PublicKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// jwkEntry is one key a test key server publishes.
type jwkEntry struct {
	pub any
	kid string
	alg string
	use string
	ops []string
}

func jwksJSON(t *testing.T, entries ...jwkEntry) []byte {
	t.Helper()
	set := jwk.NewSet()
	for _, e := range entries {
		k, err := jwk.FromRaw(e.pub)
		if err != nil {
			t.Fatal(err)
		}
		if e.kid != "" {
			_ = k.Set(jwk.KeyIDKey, e.kid)
		}
		if e.alg != "" {
			_ = k.Set(jwk.AlgorithmKey, e.alg)
		}
		if e.use != "" {
			_ = k.Set(jwk.KeyUsageKey, e.use)
		}
		if e.ops != nil {
			if err := k.Set(jwk.KeyOpsKey, e.ops); err != nil {
				t.Fatal(err)
			}
		}
		if err := set.AddKey(k); err != nil {
			t.Fatal(err)
		}
	}
	out, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// keyServer is an in-process JWKS endpoint that counts its requests and
// records the headers of the last one.
type keyServer struct {
	*httptest.Server
	body     atomic.Pointer[[]byte]
	status   atomic.Int64
	requests atomic.Int64

	mu         sync.Mutex
	lastHeader http.Header
}

func newKeyServer(t *testing.T, body []byte) *keyServer {
	t.Helper()
	ks := &keyServer{}
	ks.body.Store(&body)
	ks.status.Store(http.StatusOK)
	ks.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ks.requests.Add(1)
		ks.mu.Lock()
		ks.lastHeader = r.Header.Clone()
		ks.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(int(ks.status.Load()))
		_, _ = w.Write(*ks.body.Load())
	}))
	t.Cleanup(ks.Close)
	return ks
}

func (ks *keyServer) publish(body []byte) { ks.body.Store(&body) }

func (ks *keyServer) header() http.Header {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	return ks.lastHeader.Clone()
}

// standardSet is the key set most tests verify against.
func standardSet(t *testing.T) []byte {
	return jwksJSON(t,
		jwkEntry{pub: &rsaKey1().PublicKey, kid: "rsa1"},
		jwkEntry{pub: &rsaKey2().PublicKey, kid: "rsa-ps", alg: "PS256", use: "sig"},
		jwkEntry{pub: &ecKey().PublicKey, kid: "ec1"},
		jwkEntry{pub: edKey().Public(), kid: "ed1"},
	)
}

// newJWKSVerifier returns a verifier over ks with a fake clock.
func newJWKSVerifier(t *testing.T, ks *keyServer, clock *portstest.Clock, mod func(*Config)) *Verifier {
	t.Helper()
	cfg := Config{
		Issuer:   testIssuer,
		Audience: testAudience,
		JWKSURI:  ks.URL + "/jwks",
		Clock:    clock.Now,
	}
	if mod != nil {
		mod(&cfg)
	}
	v, err := NewVerifier(t.Context(), cfg)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	return v
}

// waitFetch waits for a background JWKS fetch, if one is running.
func waitFetch(v *Verifier) {
	v.jwks.mu.Lock()
	call := v.jwks.inflight
	v.jwks.mu.Unlock()
	if call != nil {
		<-call.done
	}
}
