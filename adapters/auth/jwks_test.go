package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"

	"github.com/arrowhead-go/arrowhead/ports"
)

func TestJWKSFetchAndCache(t *testing.T) {
	ks := newKeyServer(t, standardSet(t))
	clock := newClock()
	v := newJWKSVerifier(t, ks, clock, nil)
	if got := ks.requests.Load(); got != 1 {
		t.Fatalf("requests after NewVerifier = %d, want 1", got)
	}
	tokens := []string{
		sign(t, jwa.RS256, rsaKey1(), "rsa1", claims()),
		sign(t, jwa.ES256, ecKey(), "ec1", claims()),
		sign(t, jwa.EdDSA, edKey(), "ed1", claims()),
	}
	for i := range 30 {
		clock.Advance(time.Second) // well past the floor overall, never past the max age
		if _, err := v.Verify(t.Context(), tokens[i%len(tokens)]); err != nil {
			t.Fatalf("Verify #%d: %v", i, err)
		}
	}
	if got := ks.requests.Load(); got != 1 {
		t.Fatalf("requests after 30 verifications of known kids = %d, want 1 (cached)", got)
	}
	h := ks.header()
	if got := h.Get("Accept"); !strings.Contains(got, "json") {
		t.Fatalf("Accept = %q", got)
	}
	if v.Name() != "oauth_keys" || v.Health(t.Context()) != ports.HealthOK {
		t.Fatalf("Health of %q not ok after a good fetch", v.Name())
	}
}

func TestJWKSRotation(t *testing.T) {
	oldKey, newKey := rsaKey1(), rsaKey2()
	ks := newKeyServer(t, jwksJSON(t, jwkEntry{pub: &oldKey.PublicKey, kid: "2026-a"}))
	clock := newClock()
	v := newJWKSVerifier(t, ks, clock, nil)

	oldToken := sign(t, jwa.RS256, oldKey, "2026-a", claims())
	newToken := sign(t, jwa.RS256, newKey, "2026-b", claims())
	if _, err := v.Verify(t.Context(), oldToken); err != nil {
		t.Fatalf("old key before rotation: %v", err)
	}

	// The issuer rotates: the new key is published and the old one retired.
	ks.publish(jwksJSON(t, jwkEntry{pub: &newKey.PublicKey, kid: "2026-b"}))

	clock.Advance(DefaultMinRefetchInterval / 2)
	if _, err := v.Verify(t.Context(), newToken); err != ErrUnknownKey {
		t.Fatalf("new kid inside the floor: err = %v, want ErrUnknownKey", err)
	}
	if got := ks.requests.Load(); got != 1 {
		t.Fatalf("requests inside the floor = %d, want 1", got)
	}

	clock.Advance(DefaultMinRefetchInterval / 2)
	p, err := v.Verify(t.Context(), newToken)
	if err != nil {
		t.Fatalf("new kid after the floor: %v", err)
	}
	if p.Subject != testSubject {
		t.Fatalf("principal = %+v", p)
	}
	if got := ks.requests.Load(); got != 2 {
		t.Fatalf("requests after rotation = %d, want 2", got)
	}
	// The refetched set replaced the old one: the retired key is gone.
	if _, err := v.Verify(t.Context(), oldToken); err != ErrUnknownKey {
		t.Fatalf("retired key: err = %v, want ErrUnknownKey", err)
	}
}

func TestJWKSRefetchFloor(t *testing.T) {
	ks := newKeyServer(t, standardSet(t))
	clock := newClock()
	v := newJWKSVerifier(t, ks, clock, func(c *Config) { c.MinRefetchInterval = time.Minute })

	flood := func(round int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 64 {
			wg.Go(func() {
				token := sign(t, jwa.RS256, rsaKey1(), fmt.Sprintf("random-%d-%d", round, i), claims())
				_, err := v.Verify(t.Context(), token)
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != ErrUnknownKey {
				t.Fatalf("round %d: err = %v, want ErrUnknownKey", round, err)
			}
		}
	}

	steps := []struct {
		advance      time.Duration
		wantRequests int64
	}{
		{0, 1},                // at start-up time: inside the floor, no fetch
		{59 * time.Second, 1}, // still inside
		{time.Second, 2},      // floor reached: 64 concurrent unknown kids, one fetch
		{30 * time.Second, 2}, // inside the new floor
		{30 * time.Second, 3}, // next interval: one more
		{0, 3},
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		flood(i)
		waitFetch(v)
		if got := ks.requests.Load(); got != s.wantRequests {
			t.Fatalf("step %d: requests = %d, want %d", i, got, s.wantRequests)
		}
	}
	// Known keys keep verifying throughout.
	if _, err := v.Verify(t.Context(), sign(t, jwa.RS256, rsaKey1(), "rsa1", claims())); err != nil {
		t.Fatalf("known kid: %v", err)
	}
}

func TestJWKSStaleSetRefreshedInBackground(t *testing.T) {
	ks := newKeyServer(t, jwksJSON(t, jwkEntry{pub: &rsaKey1().PublicKey, kid: "k1"}))
	clock := newClock()
	v := newJWKSVerifier(t, ks, clock, func(c *Config) { c.KeySetMaxAge = 10 * time.Minute })
	token := sign(t, jwa.RS256, rsaKey1(), "k1", with(map[string]any{"exp": epoch.Add(time.Hour).Unix()}))

	// The issuer revokes k1 without a new kid ever being presented.
	ks.publish(jwksJSON(t, jwkEntry{pub: &rsaKey2().PublicKey, kid: "k2"}))

	clock.Advance(9 * time.Minute)
	if _, err := v.Verify(t.Context(), token); err != nil {
		t.Fatalf("fresh set: %v", err)
	}
	waitFetch(v)
	if got := ks.requests.Load(); got != 1 {
		t.Fatalf("requests before max age = %d, want 1", got)
	}

	clock.Advance(time.Minute)
	// The stale set still serves this call, and a refresh starts behind it.
	if _, err := v.Verify(t.Context(), token); err != nil {
		t.Fatalf("stale set: %v", err)
	}
	waitFetch(v)
	if got := ks.requests.Load(); got != 2 {
		t.Fatalf("requests after max age = %d, want 2", got)
	}
	if _, err := v.Verify(t.Context(), token); err != ErrUnknownKey {
		t.Fatalf("revoked key after refresh: err = %v, want ErrUnknownKey", err)
	}
}

func TestJWKSServerDown(t *testing.T) {
	t.Run("at start-up", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		uri := srv.URL + "/jwks"
		srv.Close()
		v, err := NewVerifier(t.Context(), Config{Issuer: testIssuer, Audience: testAudience, JWKSURI: uri})
		if v != nil || !errors.Is(err, ErrKeysUnavailable) {
			t.Fatalf("NewVerifier = %v, %v; want ErrKeysUnavailable", v, err)
		}
		if strings.Contains(err.Error(), uri) {
			t.Fatalf("error %q quotes the URL", err)
		}
	})

	t.Run("after start-up", func(t *testing.T) {
		ks := newKeyServer(t, standardSet(t))
		clock := newClock()
		v := newJWKSVerifier(t, ks, clock, nil)
		ks.Close()

		clock.Advance(time.Hour - time.Second)
		if _, err := v.Verify(t.Context(), sign(t, jwa.RS256, rsaKey1(), "rsa1", with(map[string]any{"exp": epoch.Add(2 * time.Hour).Unix()}))); err != nil {
			t.Fatalf("cached key while the issuer is down: %v", err)
		}
		_, err := v.Verify(t.Context(), sign(t, jwa.RS256, rsaKey1(), "new-kid", claims()))
		if err != ErrKeysUnavailable {
			t.Fatalf("unknown kid while the issuer is down: err = %v, want ErrKeysUnavailable", err)
		}
		if got := v.Health(t.Context()); got != ports.HealthDegraded {
			t.Fatalf("Health = %s, want degraded", got)
		}
	})
}

func TestJWKSBadResponses(t *testing.T) {
	symmetric := []byte(`{"keys":[{"kty":"oct","kid":"h","k":"c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0"}]}`)
	tests := []struct {
		name    string
		status  int
		body    []byte
		mod     func(*Config)
		wantSub string
	}{
		{"server error", http.StatusInternalServerError, []byte(`{}`), nil, "HTTP 500"},
		{"not JSON", http.StatusOK, []byte(`<html>`), nil, "not a JWK set"},
		{"too large", http.StatusOK, standardSet(t), func(c *Config) { c.MaxJWKSBytes = 512 }, "exceeds 512 bytes"},
		{"only a symmetric key", http.StatusOK, symmetric, nil, "no usable signing key"},
		{"only an encryption key", http.StatusOK, jwksJSON(t, jwkEntry{pub: &rsaKey1().PublicKey, kid: "e", use: "enc"}), nil, "no usable signing key"},
		{"only a key whose key_ops exclude verify", http.StatusOK, jwksJSON(t, jwkEntry{pub: &rsaKey1().PublicKey, kid: "o", ops: []string{"encrypt", "wrapKey"}}), nil, "no usable signing key"},
		{"only a key without kid", http.StatusOK, jwksJSON(t, jwkEntry{pub: &rsaKey1().PublicKey}), nil, "no usable signing key"},
		{"only an undersized RSA key", http.StatusOK, jwksJSON(t, jwkEntry{pub: &rsaWeak().PublicKey, kid: "w"}), nil, "no usable signing key"},
		{"only a key pinned to HS256", http.StatusOK, jwksJSON(t, jwkEntry{pub: &rsaKey1().PublicKey, kid: "p", alg: "HS256"}), nil, "no usable signing key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ks := newKeyServer(t, tc.body)
			ks.status.Store(int64(tc.status))
			cfg := Config{Issuer: testIssuer, Audience: testAudience, JWKSURI: ks.URL + "/jwks"}
			if tc.mod != nil {
				tc.mod(&cfg)
			}
			v, err := NewVerifier(t.Context(), cfg)
			if v != nil || !errors.Is(err, ErrKeysUnavailable) || !strings.Contains(err.Error(), tc.wantSub) {
				t.Fatalf("NewVerifier = %v, %v; want ErrKeysUnavailable mentioning %q", v, err, tc.wantSub)
			}
		})
	}
}

func TestJWKSSkipsUnusableKeys(t *testing.T) {
	ks := newKeyServer(t, jwksJSON(t,
		jwkEntry{pub: &rsaKey1().PublicKey, kid: "enc", use: "enc"},
		jwkEntry{pub: &rsaKey1().PublicKey, kid: "ops", ops: []string{"sign", "verify"}},
		jwkEntry{pub: &rsaKey2().PublicKey, kid: "sig", use: "sig"},
	))
	v := newJWKSVerifier(t, ks, newClock(), nil)
	if _, err := v.Verify(t.Context(), sign(t, jwa.RS256, rsaKey1(), "enc", claims())); err != ErrUnknownKey {
		t.Fatalf("token naming an encryption key: err = %v, want ErrUnknownKey", err)
	}
	for _, kid := range []string{"sig", "ops"} {
		key := rsaKey2()
		if kid == "ops" {
			key = rsaKey1()
		}
		if _, err := v.Verify(t.Context(), sign(t, jwa.RS256, key, kid, claims())); err != nil {
			t.Fatalf("signing key %s: %v", kid, err)
		}
	}
}

func TestJWKSRedirectRefused(t *testing.T) {
	target := newKeyServer(t, standardSet(t))
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/jwks", http.StatusFound)
	}))
	t.Cleanup(redirector.Close)

	clients := []struct {
		name   string
		client *http.Client
	}{
		{"default client", nil},
		{"caller client that follows redirects", &http.Client{}},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			v, err := NewVerifier(t.Context(), Config{
				Issuer: testIssuer, Audience: testAudience,
				JWKSURI:    redirector.URL + "/jwks",
				HTTPClient: c.client,
			})
			if v != nil || !errors.Is(err, ErrKeysUnavailable) || !strings.Contains(err.Error(), "HTTP 302") {
				t.Fatalf("NewVerifier = %v, %v; want a refused redirect", v, err)
			}
			if got := target.requests.Load(); got != 0 {
				t.Fatalf("redirect target was fetched %d times", got)
			}
		})
	}
	if clients[1].client.CheckRedirect != nil {
		t.Fatal("the caller's client was modified")
	}
}

// TestJWKSSharedFetch: callers that need the same refetch wait on one
// request; a caller that gives up leaves it running for the others.
func TestJWKSSharedFetch(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	var (
		mu    sync.Mutex
		calls int
	)
	before := jwksJSON(t, jwkEntry{pub: &rsaKey1().PublicKey, kid: "k1"})
	after := jwksJSON(t, jwkEntry{pub: &rsaKey1().PublicKey, kid: "k1"}, jwkEntry{pub: &rsaKey2().PublicKey, kid: "k2"})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			_, _ = w.Write(before)
			return
		}
		arrived <- struct{}{}
		select { // hang until released
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(after)
	}))
	t.Cleanup(srv.Close)
	unblock := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unblock) // runs before srv.Close, so a failed test does not hang
	clock := newClock()
	v, err := NewVerifier(t.Context(), Config{
		Issuer: testIssuer, Audience: testAudience, JWKSURI: srv.URL, Clock: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(DefaultMinRefetchInterval)
	token := sign(t, jwa.RS256, rsaKey2(), "k2", claims())

	first := make(chan error, 1)
	go func() {
		_, err := v.Verify(t.Context(), token)
		first <- err
	}()
	<-arrived // the first caller's fetch is at the issuer

	// A second caller joins that fetch rather than being turned away by the
	// floor; it gives up (its context is done) while the fetch hangs.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := v.Verify(ctx, token); err != ErrKeysUnavailable {
		t.Fatalf("joined caller that gave up: err = %v, want ErrKeysUnavailable", err)
	}

	unblock()
	if err := <-first; err != nil {
		t.Fatalf("first caller after the shared fetch: %v", err)
	}
	if _, err := v.Verify(t.Context(), token); err != nil {
		t.Fatalf("after the shared fetch: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Fatalf("JWKS requests = %d, want 2", calls)
	}
}
