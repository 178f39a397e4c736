package integration_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/arrowhead-go/arrowhead/adapters/auth"
	"github.com/arrowhead-go/arrowhead/adapters/redis"
)

const (
	dpopIssuer   = "https://issuer.example"
	dpopResource = "https://mcp.example"
)

// dpopClient is a client holding a DPoP key and a token bound to it.
type dpopClient struct {
	priv  ed25519.PrivateKey
	pub   jwk.Key
	token string
	n     int
}

// newDPoPClient mints a token bound to a fresh Ed25519 key, signed by as.
func newDPoPClient(t *testing.T, as *ecdsa.PrivateKey) *dpopClient {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := jwk.FromRaw(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	claims, _ := json.Marshal(map[string]any{
		"iss": dpopIssuer, "aud": dpopResource, "sub": "alice",
		"exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix(),
		"cnf": map[string]any{"jkt": base64.RawURLEncoding.EncodeToString(tp)},
	})
	tok, err := jws.Sign(claims, jws.WithKey(jwa.ES256, as))
	if err != nil {
		t.Fatal(err)
	}
	return &dpopClient{priv: priv, pub: pub, token: string(tok)}
}

// proof makes a fresh proof for a POST to /mcp.
func (c *dpopClient) proof(t *testing.T) string {
	t.Helper()
	c.n++
	sum := sha256.Sum256([]byte(c.token))
	claims, _ := json.Marshal(map[string]any{
		"htm": http.MethodPost, "htu": dpopResource + "/mcp", "iat": time.Now().Unix(),
		"jti": "jti-" + strings.Repeat("x", c.n), "ath": base64.RawURLEncoding.EncodeToString(sum[:]),
	})
	h := jws.NewHeaders()
	_ = h.Set(jws.TypeKey, "dpop+jwt")
	_ = h.Set(jws.JWKKey, c.pub)
	out, err := jws.Sign(claims, jws.WithKey(jwa.EdDSA, c.priv, jws.WithProtectedHeaders(h)))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestDPoPReplayRefusedAcrossReplicas: two replicas' middlewares share one
// real redis-server through their rate stores; a proof admitted by one is
// refused as a replay by the other, and with Redis gone both fail closed.
func TestDPoPReplayRefusedAcrossReplicas(t *testing.T) {
	srv := startRedisServer(t)
	as, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&as.PublicKey)
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	metadata := auth.MetadataURL(dpopResource)

	type replica struct {
		h      http.Handler
		reason string
	}
	newReplica := func() *replica {
		store, err := redis.NewRateStore(redisClient(t, srv.URL()), localStore(), redis.WithCallTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		v, err := auth.NewVerifier(t.Context(), auth.Config{Issuer: dpopIssuer, Audience: dpopResource, PublicKeyPEM: pemKey})
		if err != nil {
			t.Fatal(err)
		}
		d, err := auth.NewDPoP(auth.DPoPConfig{Mode: auth.DPoPRequired, PublicURL: dpopResource, Replay: store})
		if err != nil {
			t.Fatal(err)
		}
		r := &replica{}
		r.h = auth.Middleware(v, metadata, func(_ *http.Request, reason string) { r.reason = reason }, auth.WithDPoP(d))(
			http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		return r
	}
	send := func(r *replica, c *dpopClient, proof string) (int, string) {
		r.reason = ""
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "http://10.0.0.1:8000/mcp", strings.NewReader("{}"))
		req.Header.Set("Authorization", "DPoP "+c.token)
		req.Header.Set("DPoP", proof)
		rec := httptest.NewRecorder()
		r.h.ServeHTTP(rec, req)
		return rec.Code, rec.Header().Get("WWW-Authenticate")
	}

	a, b := newReplica(), newReplica()
	c := newDPoPClient(t, as)
	proof := c.proof(t)
	if code, _ := send(a, c, proof); code != http.StatusNoContent {
		t.Fatalf("replica a, fresh proof: %d (%s); want admitted", code, a.reason)
	}
	code, challenge := send(b, c, proof)
	if code != http.StatusUnauthorized || b.reason != "dpop_replay" || !strings.HasPrefix(challenge, `DPoP error="invalid_dpop_proof", algs="`) {
		t.Fatalf("replica b, replayed proof: %d %q (%s); want 401 invalid_dpop_proof", code, challenge, b.reason)
	}
	if code, _ := send(a, c, proof); code != http.StatusUnauthorized || a.reason != "dpop_replay" {
		t.Fatalf("replica a, replayed proof: %d (%s); want refused", code, a.reason)
	}
	if code, _ := send(b, c, c.proof(t)); code != http.StatusNoContent {
		t.Fatalf("replica b, fresh proof: %d (%s); want admitted", code, b.reason)
	}

	srv.Stop()
	if code, _ := send(a, c, c.proof(t)); code != http.StatusServiceUnavailable || a.reason != "dpop_replay_store_unavailable" {
		t.Fatalf("Redis down: %d (%s); want 503, fail closed", code, a.reason)
	}
}
