package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// idpKeyID is the kid the in-process IdP signs with.
const idpKeyID = "idp-key-1"

// idp is an in-process identity provider: it serves a JWKS on loopback and
// mints tokens with any claim set and header, well-formed or hostile.
type idp struct {
	key *rsa.PrivateKey
	srv *httptest.Server
}

func newIdP(t *testing.T) *idp {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := jwk.FromRaw(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{jwk.KeyIDKey: idpKeyID, jwk.AlgorithmKey: jwa.RS256, jwk.KeyUsageKey: "sig"} {
		if err := pub.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	set := jwk.NewSet()
	if err := set.AddKey(pub); err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jwks" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return &idp{key: key, srv: srv}
}

// env points a server at this IdP's JWKS instead of a static key.
func (p *idp) env(extra map[string]string) map[string]string {
	env := map[string]string{
		"ARROWHEAD_OAUTH_PUBLIC_KEY": "",
		"ARROWHEAD_OAUTH_JWKS_URI":   p.srv.URL + "/jwks",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// claims is a valid claim set for the test server, changed by set (a nil
// value deletes the claim).
func (p *idp) claims(set map[string]any) map[string]any {
	c := map[string]any{
		"iss": testIssuer,
		"aud": testAudience,
		"sub": "mallory",
		"iat": time.Now().Unix(),
		"exp": time.Now().Add(time.Hour).Unix(),
	}
	for k, v := range set {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

// mint signs claims as given (no type coercion, so a string exp stays a
// string) with the typ header typ, or none when typ is nil.
func (p *idp) mint(t *testing.T, claims map[string]any, typ any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	h := jws.NewHeaders()
	if err := h.Set(jws.KeyIDKey, idpKeyID); err != nil {
		t.Fatal(err)
	}
	if typ != nil {
		if err := h.Set(jws.TypeKey, typ); err != nil {
			t.Fatal(err)
		}
	}
	signed, err := jws.Sign(payload, jws.WithKey(jwa.RS256, p.key, jws.WithProtectedHeaders(h)))
	if err != nil {
		t.Fatal(err)
	}
	return string(signed)
}
