package e2e

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"
	"github.com/lestrrat-go/jwx/v2/jwt"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
)

// DPoP (RFC 9449) over real HTTP against the built binary: two replicas
// behind one public URL share a redis-server, so a proof used at one is
// refused at the other.

// dpopHolder is a client's DPoP key and an access token bound to it.
type dpopHolder struct {
	key   *ecdsa.PrivateKey
	pub   jwk.Key
	token string
	seq   atomic.Int64
}

func newDPoPHolder(t *testing.T, issuerKey *rsa.PrivateKey) *dpopHolder {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := jwk.FromRaw(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.NewBuilder().Issuer(testIssuer).Audience([]string{testAudience}).Subject("dora").
		IssuedAt(time.Now()).Expiration(time.Now().Add(time.Hour)).Claim("scope", "tools:read").
		Claim("cnf", map[string]any{"jkt": base64.RawURLEncoding.EncodeToString(tp)}).Build()
	if err != nil {
		t.Fatal(err)
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256, issuerKey))
	if err != nil {
		t.Fatal(err)
	}
	return &dpopHolder{key: key, pub: pub, token: string(signed)}
}

// proof makes a fresh proof for method at the public URL's /mcp.
func (h *dpopHolder) proof(t testing.TB, method string) string {
	sum := sha256.Sum256([]byte(h.token))
	claims, _ := json.Marshal(map[string]any{
		"htm": method, "htu": testAudience + "/mcp", "iat": time.Now().Unix(),
		"jti": "e2e-" + strconv.FormatInt(h.seq.Add(1), 10), "ath": base64.RawURLEncoding.EncodeToString(sum[:]),
	})
	hdr := jws.NewHeaders()
	_ = hdr.Set(jws.TypeKey, "dpop+jwt")
	_ = hdr.Set(jws.JWKKey, h.pub)
	out, err := jws.Sign(claims, jws.WithKey(jwa.ES256, h.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Error(err)
	}
	return string(out)
}

// dpopTransport signs a fresh proof for every request an MCP client sends.
type dpopTransport struct {
	t *testing.T
	h *dpopHolder
}

func (d dpopTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "DPoP "+d.h.token)
	r.Header.Set("DPoP", d.h.proof(d.t, r.Method))
	return http.DefaultTransport.RoundTrip(r)
}

// rawPost sends a tools/list with the given credentials and returns the
// status and the WWW-Authenticate values.
func rawPost(t *testing.T, s *server, authorization, proof string) (int, []string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	if proof != "" {
		req.Header.Set("DPoP", proof)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Values("WWW-Authenticate")
}

func TestDPoPOverHTTPAcrossReplicas(t *testing.T) {
	redisURL := startRedisForReplicas(t)
	issuerKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ARROWHEAD_OAUTH_DPOP": "allowed", "ARROWHEAD_REDIS_URL": redisURL}
	a := startHTTPWithKey(t, issuerKey, env)
	b := startHTTPWithKey(t, issuerKey, env)
	h := newDPoPHolder(t, issuerKey)

	// The metadata advertises DPoP.
	resp, err := http.Get(a.url + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil || doc["dpop_bound_access_tokens_required"] != false || doc["dpop_signing_alg_values_supported"] == nil {
		t.Fatalf("metadata %v, %v; want the DPoP members", doc, err)
	}

	// A real MCP client signing a proof per request lists and calls tools.
	tr, err := transport.NewStreamableHTTP(a.url+"/mcp", transport.WithHTTPBasicClient(&http.Client{Transport: dpopTransport{t: t, h: h}}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	initialize(t, c)
	if names := toolNames(t, c); !slices.Contains(names, "calculate") {
		t.Fatalf("tools over DPoP: %v", names)
	}
	if r := call(t, c, "calculate", map[string]any{"expression": "6*7"}); r.IsError || !strings.Contains(text(r), "42") {
		t.Fatalf("calculate over DPoP: %s", text(r))
	}

	// One proof, two replicas: the second use is refused.
	proof := h.proof(t, http.MethodPost)
	if code, ch := rawPost(t, a, "DPoP "+h.token, proof); code != http.StatusOK {
		t.Fatalf("replica a, fresh proof: %d %q", code, ch)
	}
	code, ch := rawPost(t, b, "DPoP "+h.token, proof)
	if code != http.StatusUnauthorized || len(ch) != 2 || !strings.HasPrefix(ch[1], `DPoP error="invalid_dpop_proof", algs="ES256 `) ||
		!strings.Contains(ch[1], `resource_metadata="`+testAudience+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("replica b, replayed proof: %d %q; want 401 with the DPoP challenge", code, ch)
	}
	if code, ch := rawPost(t, b, "DPoP "+h.token, h.proof(t, http.MethodPost)); code != http.StatusOK {
		t.Fatalf("replica b, fresh proof: %d %q", code, ch)
	}

	// The other refusals, through the real endpoint.
	for name, tc := range map[string]struct{ auth, proof, wantPrefix string }{
		"proof for another method": {"DPoP " + h.token, h.proof(t, http.MethodGet), `DPoP error="invalid_dpop_proof"`},
		"missing proof":            {"DPoP " + h.token, "", `DPoP error="invalid_dpop_proof"`},
		"bound token as Bearer":    {"Bearer " + h.token, "", `Bearer error="invalid_token"`},
		"no credentials":           {"", "", `Bearer resource_metadata=`},
	} {
		code, ch := rawPost(t, a, tc.auth, tc.proof)
		if code != http.StatusUnauthorized || !slices.ContainsFunc(ch, func(v string) bool { return strings.HasPrefix(v, tc.wantPrefix) }) {
			t.Errorf("%s: %d %q; want 401 with %s", name, code, ch, tc.wantPrefix)
		}
	}
	// The refused replay is an audit line (its reason code is redacted
	// there like every refusal detail).
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(b.stdout.String(), `"refusal":"unauthenticated"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no audit line for the replay on replica b:\n%s", b.stdout.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
