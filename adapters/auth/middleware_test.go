package auth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"github.com/arrowhead-go/arrowhead/ports"
)

const metadataURL = "https://mcp.example/.well-known/oauth-protected-resource/mcp"

// fakeVerifier accepts exactly one token.
type fakeVerifier struct {
	good string
	p    ports.Principal
	err  error // returned for any other token
	seen []string
}

func (f *fakeVerifier) Verify(_ context.Context, token string) (ports.Principal, error) {
	f.seen = append(f.seen, token)
	if token == f.good {
		return f.p, nil
	}
	return ports.Principal{}, f.err
}

type refusal struct {
	reason     string
	authHeader string
}

func TestMiddlewareRefuses(t *testing.T) {
	const (
		challenge = `Bearer resource_metadata="` + metadataURL + `"`
		invalid   = `Bearer error="invalid_token", resource_metadata="` + metadataURL + `"`
	)
	tests := []struct {
		name       string
		headers    []string
		verifier   *fakeVerifier
		wantHeader string
		wantReason string
		wantBody   string
		wantSeen   int
	}{
		{"no header", nil, &fakeVerifier{}, challenge, "missing_token", "unauthorized", 0},
		{"other scheme", []string{"Basic dXNlcjpwYXNz"}, &fakeVerifier{}, challenge, "malformed_authorization", "unauthorized", 0},
		{"empty header", []string{""}, &fakeVerifier{}, challenge, "malformed_authorization", "unauthorized", 0},
		{"scheme only", []string{"Bearer"}, &fakeVerifier{}, invalid, "malformed_authorization", "invalid_token", 0},
		{"two spaces", []string{"Bearer  abc"}, &fakeVerifier{}, invalid, "malformed_authorization", "invalid_token", 0},
		{"trailing text", []string{"Bearer abc def"}, &fakeVerifier{}, invalid, "malformed_authorization", "invalid_token", 0},
		{"not a b64token", []string{"Bearer ab\"c"}, &fakeVerifier{}, invalid, "malformed_authorization", "invalid_token", 0},
		{"two Authorization headers", []string{"Bearer good", "Bearer good"}, &fakeVerifier{good: "good"}, invalid, "malformed_authorization", "invalid_token", 0},
		{"refused token", []string{"Bearer abc.def.ghi"}, &fakeVerifier{err: ErrExpired}, invalid, "expired", "invalid_token", 1},
		{"refusal wrapped by another verifier", []string{"Bearer abc"}, &fakeVerifier{err: errors.Join(errors.New("x"), ErrWrongAudience)}, invalid, "wrong_audience", "invalid_token", 1},
		{"foreign error", []string{"Bearer abc"}, &fakeVerifier{err: errors.New("boom")}, invalid, ReasonInvalidToken, "invalid_token", 1},
		{"verifier returns no principal", []string{"Bearer good"}, &fakeVerifier{good: "good"}, invalid, "no_principal", "invalid_token", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []refusal
			mw := Middleware(tc.verifier, metadataURL, func(r *http.Request, reason string) {
				got = append(got, refusal{reason: reason, authHeader: r.Header.Get("Authorization")})
			})
			h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				t.Fatal("next handler reached")
			}))
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mcp", strings.NewReader(`{}`))
			for _, v := range tc.headers {
				req.Header.Add("Authorization", v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			if rec.Code != http.StatusUnauthorized {
				t.Fatalf("status = %d, want 401", rec.Code)
			}
			if got := rec.Header().Values("WWW-Authenticate"); len(got) != 1 || got[0] != tc.wantHeader {
				t.Fatalf("WWW-Authenticate = %q, want %q", got, tc.wantHeader)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type = %q", ct)
			}
			if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
				t.Fatalf("Cache-Control = %q", cc)
			}
			var body map[string]string
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if body["error"] != tc.wantBody {
				t.Fatalf("body error = %q, want %q", body["error"], tc.wantBody)
			}
			for _, v := range tc.headers {
				if v != "" && strings.Contains(rec.Body.String(), strings.TrimPrefix(v, "Bearer ")) {
					t.Fatalf("body echoes the credential: %s", rec.Body)
				}
			}
			if len(got) != 1 || got[0].reason != tc.wantReason {
				t.Fatalf("refused calls = %+v, want one with reason %q", got, tc.wantReason)
			}
			if got[0].authHeader != "" {
				t.Fatal("refused callback saw the Authorization header")
			}
			if len(tc.verifier.seen) != tc.wantSeen {
				t.Fatalf("verifier called %d times, want %d", len(tc.verifier.seen), tc.wantSeen)
			}
		})
	}
}

func TestMiddlewareAdmits(t *testing.T) {
	want := ports.NewPrincipal("alice", "docs:read")
	tests := []struct {
		name   string
		header string
	}{
		{"canonical scheme", "Bearer tok-123.abc_DEF~+/=="},
		{"lowercase scheme", "bearer tok-123.abc_DEF~+/=="},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fv := &fakeVerifier{good: "tok-123.abc_DEF~+/==", p: want}
			refusedCalled := false
			var (
				gotPrincipal ports.Principal
				gotOK        bool
				gotAuth      []string
				gotCookie    string
			)
			h := Middleware(fv, metadataURL, func(*http.Request, string) { refusedCalled = true })(
				http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					gotPrincipal, gotOK = PrincipalFromContext(r.Context())
					gotAuth = r.Header.Values("Authorization")
					gotCookie = r.Header.Get("Cookie")
					w.WriteHeader(http.StatusNoContent)
				}))
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mcp", nil)
			req.Header.Set("Authorization", tc.header)
			req.Header.Set("Cookie", "c=1")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			if rec.Code != http.StatusNoContent || refusedCalled {
				t.Fatalf("status = %d, refused = %v", rec.Code, refusedCalled)
			}
			if !gotOK || gotPrincipal.Subject != "alice" || !gotPrincipal.HasScope("docs:read") {
				t.Fatalf("principal in context = %+v, %v", gotPrincipal, gotOK)
			}
			if len(gotAuth) != 0 {
				t.Fatalf("next handler saw Authorization %q", gotAuth)
			}
			if gotCookie != "c=1" {
				t.Fatal("other headers must pass through untouched")
			}
			if req.Header.Get("Authorization") != tc.header {
				t.Fatal("the inbound request was mutated")
			}
		})
	}
}

func TestPrincipalContext(t *testing.T) {
	if _, ok := PrincipalFromContext(t.Context()); ok {
		t.Fatal("empty context reported a principal")
	}
	p := ports.NewPrincipal("bob", "a", "b")
	got, ok := PrincipalFromContext(WithPrincipal(t.Context(), p))
	if !ok || got.Subject != "bob" || !got.HasScope("b") {
		t.Fatalf("round trip = %+v, %v", got, ok)
	}
}

func TestMiddlewarePanicsOnWiringMistakes(t *testing.T) {
	tests := []struct {
		name string
		v    TokenVerifier
		url  string
	}{
		{"nil verifier", nil, metadataURL},
		{"empty URL", &fakeVerifier{}, ""},
		{"relative URL", &fakeVerifier{}, "/.well-known/oauth-protected-resource/mcp"},
		{"quote in URL", &fakeVerifier{}, `https://mcp.example/"x`},
		{"newline in URL", &fakeVerifier{}, "https://mcp.example/\r\nX-Injected: 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("Middleware did not panic")
				}
			}()
			Middleware(tc.v, tc.url, nil)
		})
	}
}

// TestMiddlewareWithJWKSVerifier runs the real verifier behind the
// middleware and checks that a JWKS refetch triggered by a request carries
// nothing from that request.
func TestMiddlewareWithJWKSVerifier(t *testing.T) {
	ks := newKeyServer(t, jwksJSON(t, jwkEntry{pub: &rsaKey1().PublicKey, kid: "k1"}))
	clock := newClock()
	v := newJWKSVerifier(t, ks, clock, nil)
	ks.publish(jwksJSON(t,
		jwkEntry{pub: &rsaKey1().PublicKey, kid: "k1"},
		jwkEntry{pub: &rsaKey2().PublicKey, kid: "k2"},
	))
	clock.Advance(DefaultMinRefetchInterval)

	var reasons []string
	var got ports.Principal
	h := Middleware(v, MetadataURL("https://mcp.example"), func(_ *http.Request, reason string) {
		reasons = append(reasons, reason)
	})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = PrincipalFromContext(r.Context())
		w.WriteHeader(http.StatusOK)
	}))

	tokens := []struct {
		token      string
		wantStatus int
	}{
		{sign(t, jwa.RS256, rsaKey2(), "k2", with(map[string]any{"scp": []string{"memory:read"}})), http.StatusOK},
		{sign(t, jwa.RS256, rsaKey2(), "k2", with(map[string]any{"aud": "https://elsewhere.example"})), http.StatusUnauthorized},
	}
	for _, tc := range tokens {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+tc.token)
		req.Header.Set("Cookie", "session=inbound-cookie")
		req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.wantStatus {
			t.Fatalf("status = %d, want %d", rec.Code, tc.wantStatus)
		}
	}
	// Scopes come from "scope" alone: the scp claim adds nothing.
	if got.Subject != testSubject || got.HasScope("memory:read") || !got.HasScope("docs:read") {
		t.Fatalf("principal = %+v", got)
	}
	if len(reasons) != 1 || reasons[0] != "wrong_audience" {
		t.Fatalf("refusal reasons = %q", reasons)
	}
	if n := ks.requests.Load(); n != 2 {
		t.Fatalf("JWKS requests = %d, want 2 (start-up + the refetch for k2)", n)
	}
	fetched := ks.header()
	for _, name := range []string{"Authorization", "Cookie", "Traceparent"} {
		if fetched.Get(name) != "" {
			t.Fatalf("JWKS fetch carried the inbound %s header", name)
		}
	}
	for name, vals := range fetched {
		for _, val := range vals {
			if strings.Contains(val, "eyJ") || strings.Contains(val, "inbound") {
				t.Fatalf("JWKS fetch header %s carries inbound data", name)
			}
		}
	}
}
