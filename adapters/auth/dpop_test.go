package auth

import (
	"context"
	"crypto"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/arrowhead-go/arrowhead/adapters/inproc"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// The DPoP resource-server tests. Each attack of RFC 9449 section 11 that
// a resource server can meet is a case below, named by its subsection:
//
//	11.1 proof replay: a replayed jti, a stale iat, a proof for another
//	     method or URL (TestDPoPRefuses, TestDPoPReplay).
//	11.2 proof pre-generation: an iat beyond the window ahead; no server
//	     nonce is issued, so the window bounds how far ahead a proof may
//	     be made.
//	11.3 nonce downgrade: not applicable, no nonce is issued.
//	11.4 untrusted code in the client context: out of scope for a
//	     resource server (code that can use the client's key can make
//	     valid proofs; only the client can prevent that).
//	11.5 signed JWT swapping: typ must be dpop+jwt, so an access token,
//	     an ID token or any other JWT is refused as a proof, and a proof
//	     is refused as an access token.
//	11.6 signature algorithms: none, HS256 keyed with the public key, and
//	     symmetric or private jwk members are refused.
//	11.7 request integrity: htm and htu (the body is not covered by a
//	     proof, as the RFC notes; TLS protects it).
//	11.8 access token and public key binding: cnf.jkt must be the proof
//	     key's thumbprint, and ath the presented token's hash (a proof
//	     moved to another token is refused).
//	11.9, 11.11 authorization code and client binding: authorization
//	     server concerns, not the resource server's.
//	11.10 hash algorithm agility: ath and jkt are SHA-256 only.

const dpopHTU = testAudience + "/mcp"

// prover is a DPoP client key.
type prover struct {
	priv any
	alg  jwa.SignatureAlgorithm
	pub  jwk.Key
	jkt  string
}

func newProver(t testing.TB, priv crypto.Signer, alg jwa.SignatureAlgorithm) *prover {
	t.Helper()
	pub, err := jwk.FromRaw(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	return &prover{priv: priv, alg: alg, pub: pub, jkt: base64.RawURLEncoding.EncodeToString(tp)}
}

var jtiSeq int

// proofClaimsFor is a valid claim set for a POST to /mcp with token at epoch,
// changed by set (a nil value deletes the claim).
func proofClaimsFor(token string, set map[string]any) map[string]any {
	jtiSeq++
	c := map[string]any{
		"htm": http.MethodPost,
		"htu": dpopHTU,
		"iat": epoch.Unix(),
		"jti": fmt.Sprintf("jti-%d", jtiSeq),
		"ath": tokenHash(token),
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

// proof signs claims as a DPoP proof with typ dpop+jwt and the public jwk,
// changed by hdr (a nil value removes a header).
func (p *prover) proof(t testing.TB, claims map[string]any, hdr map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	h := jws.NewHeaders()
	setHeaders(t, h, map[string]any{jws.TypeKey: "dpop+jwt", jws.JWKKey: p.pub})
	setHeaders(t, h, hdr)
	out, err := jws.Sign(payload, jws.WithKey(p.alg, p.priv, jws.WithProtectedHeaders(h)))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// rawJWS builds a compact JWS from a header and claims with the given
// signature, for algorithms jwx will not sign with (none) or keys it
// would not use.
func rawJWS(hdr, claims map[string]any, sign func(input []byte) []byte) string {
	h, _ := json.Marshal(hdr)
	c, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	return input + "." + enc.EncodeToString(sign([]byte(input)))
}

// dpopEnv is a verifier trusting rsaKey1, a DPoP checker in mode over a
// real in-process replay store, and the clock they share.
type dpopEnv struct {
	v     *Verifier
	d     *DPoP
	clock *portstest.Clock
	store *inproc.RateStore
}

func newDPoPEnv(t testing.TB, mode string) *dpopEnv {
	t.Helper()
	clock := newClock()
	v, err := NewVerifier(t.Context(), Config{
		Issuer: testIssuer, Audience: testAudience,
		PublicKeyPEM: string(pkixPEM(t, &rsaKey1().PublicKey)), Clock: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	store := inproc.NewRateStore(clock)
	d, err := NewDPoP(DPoPConfig{Mode: mode, PublicURL: testAudience + "/", Replay: store, Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &dpopEnv{v: v, d: d, clock: clock, store: store}
}

// boundToken mints an access token bound to jkt (none when jkt is "").
func boundToken(t testing.TB, jkt string) string {
	t.Helper()
	if jkt == "" {
		return sign(t, jwa.RS256, rsaKey1(), "", claims())
	}
	return sign(t, jwa.RS256, rsaKey1(), "", with(map[string]any{"cnf": map[string]any{"jkt": jkt}}))
}

// outcome is what one request through the middleware met.
type outcome struct {
	status     int
	challenges []string
	body       string
	reason     string
	reached    bool
	// forwarded are the credential headers the next handler saw.
	forwarded []string
}

// send makes a request as it arrives behind a proxy (the Host is the
// internal listener, not the public name) with the given Authorization
// and DPoP header values.
func (e *dpopEnv) send(t *testing.T, method string, auth []string, proofs []string) outcome {
	t.Helper()
	return e.sendTo(t, method, "http://10.0.0.7:8000/mcp", auth, proofs, e.d)
}

func (e *dpopEnv) sendTo(t *testing.T, method, target string, auth, proofs []string, d *DPoP) outcome {
	t.Helper()
	var o outcome
	mw := Middleware(e.v, metadataURL, func(_ *http.Request, reason string) { o.reason = reason }, WithDPoP(d))
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.reached = true
		o.forwarded = append(r.Header.Values("Authorization"), r.Header.Values("DPoP")...)
		if p, ok := PrincipalFromContext(r.Context()); !ok || p.Subject != testSubject {
			t.Errorf("principal = %+v, %v", p, ok)
		}
		w.WriteHeader(http.StatusOK)
	}))
	req := httptest.NewRequestWithContext(t.Context(), method, target, strings.NewReader(`{}`))
	for _, v := range auth {
		req.Header.Add("Authorization", v)
	}
	for _, v := range proofs {
		req.Header.Add("DPoP", v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	o.status = rec.Code
	o.challenges = rec.Header().Values("WWW-Authenticate")
	o.body = rec.Body.String()
	return o
}

const wantAlgs = `algs="ES256 ES384 ES512 EdDSA PS256 PS384 PS512 RS256 RS384 RS512"`

// Challenges as the allowed mode sends them.
var (
	bearerPlain   = `Bearer resource_metadata="` + metadataURL + `"`
	bearerInvalid = `Bearer error="invalid_token", resource_metadata="` + metadataURL + `"`
	dpopPlain     = `DPoP ` + wantAlgs + `, resource_metadata="` + metadataURL + `"`
	dpopBadProof  = `DPoP error="invalid_dpop_proof", ` + wantAlgs + `, resource_metadata="` + metadataURL + `"`
	dpopBadToken  = `DPoP error="invalid_token", ` + wantAlgs + `, resource_metadata="` + metadataURL + `"`
)

func TestDPoPGoodProofPasses(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  crypto.Signer
		alg  jwa.SignatureAlgorithm
	}{
		{"ES256", ecKey(), jwa.ES256},
		{"ES384", ec384(), jwa.ES384},
		{"EdDSA", edKey(), jwa.EdDSA},
		{"RS256", rsaKey2(), jwa.RS256},
		{"PS256", rsaKey2(), jwa.PS256},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []string{DPoPAllowed, DPoPRequired} {
				e := newDPoPEnv(t, mode)
				p := newProver(t, tc.key, tc.alg)
				tok := boundToken(t, p.jkt)
				o := e.send(t, http.MethodPost, []string{"DPoP " + tok}, []string{p.proof(t, proofClaimsFor(tok, nil), nil)})
				if o.status != http.StatusOK || !o.reached {
					t.Fatalf("%s: status %d, reason %q, challenges %q; want 200", mode, o.status, o.reason, o.challenges)
				}
				if len(o.forwarded) != 0 {
					t.Fatalf("%s: credentials forwarded: %q", mode, o.forwarded)
				}
			}
		})
	}
}

// TestDPoPRefuses covers the list and RFC 9449 section 11: each
// request is refused with the challenge naming the right error.
func TestDPoPRefuses(t *testing.T) {
	e := newDPoPEnv(t, DPoPAllowed)
	p := newProver(t, ecKey(), jwa.ES256)
	other := newProver(t, ec384(), jwa.ES384)
	tok := boundToken(t, p.jkt)
	dpopAuth := []string{"DPoP " + tok}
	good := func(set map[string]any) string { return p.proof(t, proofClaimsFor(tok, set), nil) }

	// HS256 keyed with the public key's own bytes, the classic algorithm
	// confusion: the jwk header hands the "secret" to the verifier.
	pubJSON, _ := json.Marshal(p.pub)
	hdrFor := func(alg string) map[string]any {
		return map[string]any{"typ": "dpop+jwt", "alg": alg, "jwk": json.RawMessage(pubJSON)}
	}
	hs256 := rawJWS(hdrFor("HS256"), proofClaimsFor(tok, nil), func(in []byte) []byte {
		mac := hmac.New(sha256.New, pubJSON)
		mac.Write(in)
		return mac.Sum(nil)
	})
	none := rawJWS(hdrFor("none"), proofClaimsFor(tok, nil), func([]byte) []byte { return nil })
	octKey, _ := jwk.FromRaw([]byte("0123456789abcdef0123456789abcdef"))
	octJSON, _ := json.Marshal(octKey)
	hs256Oct := rawJWS(map[string]any{"typ": "dpop+jwt", "alg": "HS256", "jwk": json.RawMessage(octJSON)}, proofClaimsFor(tok, nil),
		func([]byte) []byte { return []byte("x") })
	privJWK, _ := jwk.FromRaw(ecKey())
	otherSigned := p.proof(t, proofClaimsFor(tok, nil), map[string]any{jws.JWKKey: newProver(t, mustEC(elliptic.P256()), jwa.ES256).pub})

	// A proof whose claims were edited after signing.
	edited := func() string {
		parts := strings.Split(good(nil), ".")
		c, _ := json.Marshal(proofClaimsFor(tok, map[string]any{"htm": http.MethodGet}))
		parts[1] = base64.RawURLEncoding.EncodeToString(c)
		return strings.Join(parts, ".")
	}()

	tests := []struct {
		name      string
		method    string
		auth      []string
		proofs    []string
		reason    string
		challenge []string
	}{
		// The list.
		{"proof for another method", "", dpopAuth, []string{good(map[string]any{"htm": http.MethodGet})}, "dpop_htm_mismatch", nil},
		{"proof for another method, lower case", "", dpopAuth, []string{good(map[string]any{"htm": "post"})}, "dpop_htm_mismatch", nil},
		{"proof for another URL", "", dpopAuth, []string{good(map[string]any{"htu": "https://mcp.example/other"})}, "dpop_htu_mismatch", nil},
		{"proof for another origin", "", dpopAuth, []string{good(map[string]any{"htu": "https://evil.example/mcp"})}, "dpop_htu_mismatch", nil},
		{"proof for the Host header's URL, not the public one", "", dpopAuth, []string{good(map[string]any{"htu": "http://10.0.0.7:8000/mcp"})}, "dpop_htu_mismatch", nil},
		{"proof for another scheme", "", dpopAuth, []string{good(map[string]any{"htu": "http://mcp.example/mcp"})}, "dpop_htu_mismatch", nil},
		{"relative htu", "", dpopAuth, []string{good(map[string]any{"htu": "/mcp"})}, "dpop_htu_mismatch", nil},
		{"htu missing", "", dpopAuth, []string{good(map[string]any{"htu": nil})}, "dpop_htu_mismatch", nil},
		{"htm missing", "", dpopAuth, []string{good(map[string]any{"htm": nil})}, "dpop_htm_mismatch", nil},
		{"stale iat", "", dpopAuth, []string{good(map[string]any{"iat": epoch.Add(-61 * time.Second).Unix()})}, "dpop_iat_stale", nil},
		{"pre-generated proof (iat ahead)", "", dpopAuth, []string{good(map[string]any{"iat": epoch.Add(61 * time.Second).Unix()})}, "dpop_iat_future", nil},
		{"iat far in the future", "", dpopAuth, []string{good(map[string]any{"iat": 1e300})}, "dpop_iat_stale", nil},
		{"iat as a string", "", dpopAuth, []string{good(map[string]any{"iat": fmt.Sprint(epoch.Unix())})}, "dpop_proof_malformed", nil},
		{"iat missing", "", dpopAuth, []string{good(map[string]any{"iat": nil})}, "dpop_proof_malformed", nil},
		{"key does not match cnf.jkt", "", dpopAuth, []string{other.proof(t, proofClaimsFor(tok, nil), nil)}, "dpop_key_mismatch", []string{bearerPlain, dpopBadToken}},
		{"alg none", "", dpopAuth, []string{none}, "dpop_algorithm_not_allowed", nil},
		{"HS256 keyed with the public key", "", dpopAuth, []string{hs256}, "dpop_algorithm_not_allowed", nil},
		{"HS256 with a symmetric jwk", "", dpopAuth, []string{hs256Oct}, "dpop_algorithm_not_allowed", nil},
		{"missing proof for a bound token", "", dpopAuth, nil, "dpop_proof_missing", nil},
		{"bound token presented as Bearer", "", []string{"Bearer " + tok}, nil, "dpop_bound_token_as_bearer", []string{bearerInvalid, dpopPlain}},
		{"bound token as Bearer with a good proof", "", []string{"Bearer " + tok}, []string{good(nil)}, "dpop_bound_token_as_bearer", []string{bearerInvalid, dpopPlain}},
		// Token binding (11.8) and JWT swapping (11.5).
		{"ath missing", "", dpopAuth, []string{good(map[string]any{"ath": nil})}, "dpop_ath_mismatch", nil},
		{"ath of another token", "", dpopAuth, []string{good(map[string]any{"ath": tokenHash(boundToken(t, other.jkt))})}, "dpop_ath_mismatch", nil},
		{"typ JWT", "", dpopAuth, []string{p.proof(t, proofClaimsFor(tok, nil), map[string]any{jws.TypeKey: "JWT"})}, "dpop_proof_type", nil},
		{"typ at+jwt", "", dpopAuth, []string{p.proof(t, proofClaimsFor(tok, nil), map[string]any{jws.TypeKey: "at+jwt"})}, "dpop_proof_type", nil},
		{"typ missing", "", dpopAuth, []string{p.proof(t, proofClaimsFor(tok, nil), map[string]any{jws.TypeKey: nil})}, "dpop_proof_type", nil},
		{"the access token as its own proof", "", dpopAuth, []string{tok}, "dpop_proof_type", nil},
		{"unbound token under the DPoP scheme", "", []string{"DPoP " + boundToken(t, "")}, []string{good(nil)}, "dpop_token_not_bound", []string{bearerPlain, dpopBadToken}},
		{"certificate-bound token", "", []string{"DPoP " + sign(t, jwa.RS256, rsaKey1(), "", with(map[string]any{"cnf": map[string]any{"x5t#S256": p.jkt}}))}, []string{good(nil)}, "dpop_binding_unverifiable", []string{bearerPlain, dpopBadToken}},
		{"malformed jkt", "", []string{"DPoP " + boundToken(t, "not-a-thumbprint")}, []string{good(nil)}, "dpop_binding_unverifiable", []string{bearerPlain, dpopBadToken}},
		// The proof's key (11.6).
		{"jwk missing", "", dpopAuth, []string{p.proof(t, proofClaimsFor(tok, nil), map[string]any{jws.JWKKey: nil})}, "dpop_key_invalid", nil},
		{"jwk holds the private key", "", dpopAuth, []string{p.proof(t, proofClaimsFor(tok, nil), map[string]any{jws.JWKKey: privJWK})}, "dpop_key_invalid", nil},
		{"jwk of another key than the signer's", "", dpopAuth, []string{otherSigned}, "dpop_bad_signature", nil},
		{"claims edited after signing", "", dpopAuth, []string{edited}, "dpop_bad_signature", nil},
		{"RSA key under an EC alg", "", dpopAuth, []string{p.proof(t, proofClaimsFor(tok, nil), map[string]any{jws.JWKKey: newProver(t, rsaKey2(), jwa.RS256).pub})}, "dpop_key_invalid", nil},
		{"weak RSA key", "", dpopAuth, []string{newProver(t, rsaWeak(), jwa.RS256).proof(t, proofClaimsFor(tok, nil), nil)}, "dpop_key_invalid", nil},
		{"critical header", "", dpopAuth, []string{p.proof(t, proofClaimsFor(tok, nil), map[string]any{jws.CriticalKey: []string{"x"}, "x": true})}, "dpop_proof_malformed", nil},
		// Shape.
		{"two DPoP headers", "", dpopAuth, []string{good(nil), good(nil)}, "dpop_proof_malformed", nil},
		{"not a JWS", "", dpopAuth, []string{"abc"}, "dpop_proof_malformed", nil},
		{"oversized proof", "", dpopAuth, []string{strings.Repeat("a", MaxDPoPProofBytes) + ".b.c"}, "dpop_proof_malformed", nil},
		{"jti missing", "", dpopAuth, []string{good(map[string]any{"jti": nil})}, "dpop_proof_malformed", nil},
		{"jti empty", "", dpopAuth, []string{good(map[string]any{"jti": ""})}, "dpop_proof_malformed", nil},
		{"jti too long", "", dpopAuth, []string{good(map[string]any{"jti": strings.Repeat("j", MaxJTIBytes+1)})}, "dpop_proof_malformed", nil},
		{"GET with a POST proof", http.MethodGet, dpopAuth, []string{good(nil)}, "dpop_htm_mismatch", nil},
		{"a refused token is refused before its proof", "", []string{"DPoP " + sign(t, jwa.RS256, rsaKey1(), "", with(map[string]any{"exp": epoch.Add(-time.Hour).Unix(), "cnf": map[string]any{"jkt": p.jkt}}))}, []string{good(nil)}, "expired", []string{bearerPlain, dpopBadToken}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			o := e.send(t, method, tc.auth, tc.proofs)
			if o.status != http.StatusUnauthorized || o.reached {
				t.Fatalf("status %d (reached %v); want 401", o.status, o.reached)
			}
			if o.reason != tc.reason {
				t.Errorf("reason %q; want %q", o.reason, tc.reason)
			}
			want := tc.challenge
			if want == nil {
				want = []string{bearerPlain, dpopBadProof}
			}
			if !slices.Equal(o.challenges, want) {
				t.Errorf("challenges\n got %q\nwant %q", o.challenges, want)
			}
			// Nothing the caller sent comes back.
			for _, secret := range append(slices.Clone(tc.proofs), tok, p.jkt) {
				if len(secret) > 8 && (strings.Contains(o.body, secret) || strings.Contains(strings.Join(o.challenges, ""), secret)) {
					t.Fatal("the response echoes the caller's input")
				}
			}
		})
	}
}

// TestDPoPNormalisedURLsPass: htu is compared after RFC 3986 syntax- and
// scheme-based normalisation, query and fragment ignored, and the iat
// window is inclusive either way.
func TestDPoPNormalisedURLsPass(t *testing.T) {
	e := newDPoPEnv(t, DPoPAllowed)
	p := newProver(t, ecKey(), jwa.ES256)
	tok := boundToken(t, p.jkt)
	for _, set := range []map[string]any{
		{"htu": "HTTPS://MCP.Example/mcp"},
		{"htu": "https://mcp.example:443/mcp"},
		{"htu": "https://mcp.example/./x/../mcp"},
		{"htu": "https://mcp.example/%6Dcp"},
		{"htu": "https://mcp.example/mcp?session=1#frag"},
		{"iat": epoch.Add(-DefaultDPoPWindow).Unix()},
		{"iat": epoch.Add(DefaultDPoPWindow).Unix()},
		{"iat": float64(epoch.Unix()) + 0.5},
	} {
		o := e.send(t, http.MethodPost, []string{"DPoP " + tok}, []string{p.proof(t, proofClaimsFor(tok, set), nil)})
		if o.status != http.StatusOK {
			t.Errorf("%v: status %d, reason %q; want 200", set, o.status, o.reason)
		}
	}
}

// TestDPoPReplay: a proof is single-use for as long as its iat is in the
// window, and a jti is scoped to the key, so another client's identical
// jti is its own.
func TestDPoPReplay(t *testing.T) {
	e := newDPoPEnv(t, DPoPAllowed)
	p := newProver(t, ecKey(), jwa.ES256)
	tok := boundToken(t, p.jkt)
	proof := p.proof(t, proofClaimsFor(tok, map[string]any{"jti": "same"}), nil)
	if o := e.send(t, http.MethodPost, []string{"DPoP " + tok}, []string{proof}); o.status != http.StatusOK {
		t.Fatalf("first use: status %d, reason %q", o.status, o.reason)
	}
	e.clock.Advance(DefaultDPoPWindow) // still inside the window
	o := e.send(t, http.MethodPost, []string{"DPoP " + tok}, []string{proof})
	if o.status != http.StatusUnauthorized || o.reason != "dpop_replay" || !slices.Equal(o.challenges, []string{bearerPlain, dpopBadProof}) {
		t.Fatalf("replay: status %d, reason %q, challenges %q", o.status, o.reason, o.challenges)
	}
	e.clock.Advance(2 * time.Second) // out of the window: refused as stale, never admitted again
	if o := e.send(t, http.MethodPost, []string{"DPoP " + tok}, []string{proof}); o.status != http.StatusUnauthorized || o.reason != "dpop_iat_stale" {
		t.Fatalf("after the window: status %d, reason %q", o.status, o.reason)
	}

	q := newProver(t, edKey(), jwa.EdDSA)
	qtok := boundToken(t, q.jkt)
	qproof := q.proof(t, proofClaimsFor(qtok, map[string]any{"jti": "same", "iat": e.clock.Now().Unix()}), nil)
	if o := e.send(t, http.MethodPost, []string{"DPoP " + qtok}, []string{qproof}); o.status != http.StatusOK {
		t.Fatalf("another key's jti: status %d, reason %q; want 200", o.status, o.reason)
	}
}

// failingGuard is a replay store that cannot answer.
type failingGuard struct{}

var _ ports.ReplayGuard = failingGuard{}

func (failingGuard) FirstSeen(context.Context, string, time.Duration) (bool, error) {
	return false, errors.New("store down")
}

// TestDPoPReplayStoreDownFailsClosed: a proof whose jti cannot be checked
// is refused with 503, not admitted.
func TestDPoPReplayStoreDownFailsClosed(t *testing.T) {
	e := newDPoPEnv(t, DPoPAllowed)
	d, err := NewDPoP(DPoPConfig{Mode: DPoPAllowed, PublicURL: testAudience, Replay: failingGuard{}, Clock: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	p := newProver(t, ecKey(), jwa.ES256)
	tok := boundToken(t, p.jkt)
	o := e.sendTo(t, http.MethodPost, "/mcp", []string{"DPoP " + tok}, []string{p.proof(t, proofClaimsFor(tok, nil), nil)}, d)
	if o.status != http.StatusServiceUnavailable || o.reached || o.reason != "dpop_replay_store_unavailable" {
		t.Fatalf("status %d (reached %v), reason %q; want 503", o.status, o.reached, o.reason)
	}
}

// TestDPoPModes: what each mode does with an unbound bearer token, a bound
// token as Bearer, and the DPoP scheme.
func TestDPoPModes(t *testing.T) {
	p := newProver(t, ecKey(), jwa.ES256)
	bound := boundToken(t, p.jkt)
	unbound := boundToken(t, "")

	t.Run("off treats a bound token as a bearer token and the DPoP scheme as unknown", func(t *testing.T) {
		e := newDPoPEnv(t, DPoPOff)
		if e.d != nil {
			t.Fatal("NewDPoP returned a checker for off")
		}
		if o := e.send(t, http.MethodPost, []string{"Bearer " + bound}, nil); o.status != http.StatusOK {
			t.Fatalf("bound token as Bearer: status %d; want 200 (RFC 9449 section 7.2: a server without DPoP)", o.status)
		}
		o := e.send(t, http.MethodPost, []string{"DPoP " + bound}, []string{p.proof(t, proofClaimsFor(bound, nil), nil)})
		if o.status != http.StatusUnauthorized || o.reason != "malformed_authorization" || !slices.Equal(o.challenges, []string{bearerPlain}) {
			t.Fatalf("DPoP scheme: status %d, reason %q, challenges %q", o.status, o.reason, o.challenges)
		}
	})

	t.Run("allowed still accepts unbound bearer tokens and offers both schemes", func(t *testing.T) {
		e := newDPoPEnv(t, DPoPAllowed)
		if o := e.send(t, http.MethodPost, []string{"Bearer " + unbound}, nil); o.status != http.StatusOK {
			t.Fatalf("unbound Bearer: status %d, reason %q", o.status, o.reason)
		}
		o := e.send(t, http.MethodPost, nil, nil)
		if o.status != http.StatusUnauthorized || !slices.Equal(o.challenges, []string{bearerPlain, dpopPlain}) {
			t.Fatalf("no credentials: status %d, challenges %q", o.status, o.challenges)
		}
		o = e.send(t, http.MethodPost, []string{"Bearer " + unbound + "x"}, nil)
		if o.status != http.StatusUnauthorized || !slices.Equal(o.challenges, []string{bearerInvalid, dpopPlain}) {
			t.Fatalf("bad Bearer token: status %d, challenges %q", o.status, o.challenges)
		}
	})

	t.Run("required refuses every Bearer token and offers DPoP alone", func(t *testing.T) {
		e := newDPoPEnv(t, DPoPRequired)
		for _, tok := range []string{unbound, bound} {
			o := e.send(t, http.MethodPost, []string{"Bearer " + tok}, nil)
			if o.status != http.StatusUnauthorized || o.reason != "dpop_required" || !slices.Equal(o.challenges, []string{dpopPlain}) {
				t.Fatalf("Bearer: status %d, reason %q, challenges %q", o.status, o.reason, o.challenges)
			}
		}
		o := e.send(t, http.MethodPost, []string{"DPoP " + unbound}, []string{p.proof(t, proofClaimsFor(unbound, nil), nil)})
		if o.status != http.StatusUnauthorized || o.reason != "dpop_token_not_bound" ||
			!slices.Equal(o.challenges, []string{dpopBadToken}) {
			t.Fatalf("unbound DPoP: status %d, reason %q, challenges %q", o.status, o.reason, o.challenges)
		}
		o = e.send(t, http.MethodPost, []string{"DPoP " + bound}, nil)
		if o.status != http.StatusUnauthorized || !slices.Equal(o.challenges, []string{dpopBadProof}) {
			t.Fatalf("missing proof: status %d, challenges %q", o.status, o.challenges)
		}
		if !strings.Contains(o.body, `"invalid_dpop_proof"`) {
			t.Fatalf("body %s", o.body)
		}
	})
}

func TestNewDPoPFailsClosed(t *testing.T) {
	store := inproc.NewRateStore(nil)
	for _, tc := range []struct {
		name string
		cfg  DPoPConfig
	}{
		{"unknown mode", DPoPConfig{Mode: "on", PublicURL: testAudience, Replay: store}},
		{"no replay store", DPoPConfig{Mode: DPoPAllowed, PublicURL: testAudience}},
		{"no public URL", DPoPConfig{Mode: DPoPAllowed, Replay: store}},
		{"relative public URL", DPoPConfig{Mode: DPoPAllowed, PublicURL: "/mcp", Replay: store}},
		{"public URL with a query", DPoPConfig{Mode: DPoPAllowed, PublicURL: testAudience + "?a=b", Replay: store}},
		{"window too short", DPoPConfig{Mode: DPoPAllowed, PublicURL: testAudience, Replay: store, Window: time.Millisecond}},
		{"window too long", DPoPConfig{Mode: DPoPRequired, PublicURL: testAudience, Replay: store, Window: time.Hour}},
	} {
		if d, err := NewDPoP(tc.cfg); err == nil || d != nil {
			t.Errorf("%s: NewDPoP = %v, %v; want an error", tc.name, d, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Middleware took a verifier that cannot report binding")
		}
	}()
	d, _ := NewDPoP(DPoPConfig{Mode: DPoPAllowed, PublicURL: testAudience, Replay: store})
	Middleware(&fakeVerifier{}, metadataURL, nil, WithDPoP(d))
}

// TestDPoPAlgorithmsAreThePinnedList: what is advertised is exactly what
// is accepted.
func TestDPoPAlgorithmsAreThePinnedList(t *testing.T) {
	if len(dpopAlgs) != len(allowedAlgs) {
		t.Fatalf("%d advertised, %d allowed", len(dpopAlgs), len(allowedAlgs))
	}
	for _, a := range dpopAlgs {
		if !allowedAlgs[a] {
			t.Fatalf("%s advertised but not allowed", a)
		}
	}
}

func TestNormalizeHTU(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"https://mcp.example/mcp", "https://mcp.example/mcp"},
		{"HTTPS://MCP.EXAMPLE/mcp", "https://mcp.example/mcp"},
		{"https://mcp.example:443/mcp", "https://mcp.example/mcp"},
		{"http://mcp.example:80/mcp", "http://mcp.example/mcp"},
		{"https://mcp.example:8443/mcp", "https://mcp.example:8443/mcp"},
		{"http://mcp.example:443/mcp", "http://mcp.example:443/mcp"},
		{"https://mcp.example", "https://mcp.example/"},
		{"https://mcp.example/a/./b/../c", "https://mcp.example/a/c"},
		{"https://mcp.example/../../mcp", "https://mcp.example/mcp"},
		{"https://mcp.example/%7euser/%2f%41", "https://mcp.example/~user/%2FA"},
		{"https://mcp.example/mcp?q=1#f", "https://mcp.example/mcp"},
		{"https://[::1]:443/mcp", "https://[::1]/mcp"},
		{"https://[::1]:8000/mcp", "https://[::1]:8000/mcp"},
		{"ftp://mcp.example/mcp", ""},
		{"/mcp", ""},
		{"https://user@mcp.example/mcp", ""},
		{"https:opaque", ""},
		{"https://mcp.example/%zz", ""},
	} {
		got, ok := normalizeHTU(tc.in)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("normalizeHTU(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

func TestDPoPMetadata(t *testing.T) {
	store := inproc.NewRateStore(nil)
	for _, tc := range []struct {
		mode     string
		required any
	}{
		{DPoPOff, nil},
		{DPoPAllowed, false},
		{DPoPRequired, true},
	} {
		d, err := NewDPoP(DPoPConfig{Mode: tc.mode, PublicURL: testAudience, Replay: store})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		ProtectedResourceHandler(testAudience, []string{testIssuer}, WithDPoP(d)).
			ServeHTTP(rec, httptest.NewRequest(http.MethodGet, MetadataPath, nil))
		var doc map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if doc["dpop_bound_access_tokens_required"] != tc.required {
			t.Errorf("%s: dpop_bound_access_tokens_required = %v; want %v", tc.mode, doc["dpop_bound_access_tokens_required"], tc.required)
		}
		algs, _ := doc["dpop_signing_alg_values_supported"].([]any)
		if (tc.mode == DPoPOff) != (algs == nil) || tc.mode != DPoPOff && fmt.Sprint(algs) != "[ES256 ES384 ES512 EdDSA PS256 PS384 PS512 RS256 RS384 RS512]" {
			t.Errorf("%s: dpop_signing_alg_values_supported = %v", tc.mode, algs)
		}
	}
}
