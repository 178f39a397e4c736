package auth

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwk"
)

// jwksCache holds the issuer's signing keys by kid and refetches them when
// a token names an unknown kid or the set has grown old, never more often
// than the floor. It is safe for concurrent use.
type jwksCache struct {
	uri      string
	client   *http.Client
	maxBytes int64
	timeout  time.Duration
	floor    time.Duration
	maxAge   time.Duration
	clock    func() time.Time

	mu        sync.Mutex
	keys      map[string][]verificationKey
	fetchedAt time.Time  // last successful fetch
	attempted time.Time  // start of the last fetch attempt, successful or not
	lastErr   error      // outcome of the last completed attempt
	inflight  *fetchCall // the running fetch, if any
}

// fetchCall is one fetch that any number of callers may wait on.
type fetchCall struct {
	done chan struct{}
	err  error
}

// noRedirects refuses every redirect: the operator configured one URL, and
// a redirect would be a different destination. The 3xx response itself is
// returned and then refused for its status.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// jwksClient returns a copy of base (or of a fresh client) that never
// follows a redirect, keeps no cookies, and times out.
func jwksClient(base *http.Client, timeout time.Duration) *http.Client {
	var c http.Client
	if base != nil {
		c = *base
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxResponseHeaderBytes = 64 << 10
		c.Transport = t
	}
	c.CheckRedirect = noRedirects
	c.Jar = nil
	if c.Timeout == 0 || c.Timeout > timeout {
		c.Timeout = timeout
	}
	return &c
}

// checkJWKSURI accepts an absolute https URL, or http for a loopback host,
// with no credentials and no fragment.
func checkJWKSURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("auth: JWKSURI must be an absolute URL")
	}
	if u.User != nil || u.Fragment != "" {
		return fmt.Errorf("auth: JWKSURI must not carry credentials or a fragment")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
	}
	return fmt.Errorf("auth: JWKSURI must use https (plain http only for a loopback host)")
}

// load performs the initial fetch under the caller's context.
func (c *jwksCache) load(ctx context.Context) error {
	c.mu.Lock()
	c.attempted = c.clock()
	c.mu.Unlock()
	keys, err := c.fetch(ctx)
	c.store(keys, err)
	return err
}

// lookup returns the keys published under kid. An unknown kid triggers a
// refetch when the floor allows one (joining a fetch already running); a
// stale set is refreshed in the background while its keys keep serving.
// Errors are sentinels: ErrUnknownKey or ErrKeysUnavailable.
func (c *jwksCache) lookup(ctx context.Context, kid string) ([]verificationKey, error) {
	c.mu.Lock()
	now := c.clock()
	keys := c.keys[kid]
	if len(keys) > 0 {
		if now.Sub(c.fetchedAt) >= c.maxAge {
			c.startLocked(now)
		}
		c.mu.Unlock()
		return keys, nil
	}
	call := c.startLocked(now)
	c.mu.Unlock()
	if call == nil {
		// The floor forbids another fetch yet: a flood of invented kids
		// costs the issuer at most one request per floor interval.
		return nil, ErrUnknownKey
	}
	select {
	case <-call.done:
	case <-ctx.Done():
		return nil, ErrKeysUnavailable
	}
	c.mu.Lock()
	keys = c.keys[kid]
	c.mu.Unlock()
	switch {
	case len(keys) > 0:
		return keys, nil
	case call.err != nil:
		return nil, ErrKeysUnavailable
	}
	return nil, ErrUnknownKey
}

// startLocked returns the running fetch, or starts one when the floor has
// passed since the last attempt; it returns nil when neither applies.
// c.mu must be held.
func (c *jwksCache) startLocked(now time.Time) *fetchCall {
	if c.inflight != nil {
		return c.inflight
	}
	if now.Sub(c.attempted) < c.floor {
		return nil
	}
	c.attempted = now
	call := &fetchCall{done: make(chan struct{})}
	c.inflight = call
	go c.run(call)
	return call
}

// run performs one background fetch. It runs under its own context, not
// the inbound request's, so nothing from that request (values, deadlines,
// trace context) reaches the issuer, and one caller giving up does not
// abort a fetch others wait on. The client's timeout bounds it.
func (c *jwksCache) run(call *fetchCall) {
	keys, err := c.fetch(context.Background())
	c.store(keys, err)
	c.mu.Lock()
	call.err = err
	c.inflight = nil
	c.mu.Unlock()
	close(call.done)
}

// store installs a freshly fetched key set; a failed fetch keeps the keys
// already held.
func (c *jwksCache) store(keys map[string][]verificationKey, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastErr = err
	if err == nil {
		c.keys = keys
		c.fetchedAt = c.clock()
	}
}

// fetch GETs the key set. The request is built from nothing but the
// configured URL; the body is capped; only a 200 is accepted. Errors wrap
// ErrKeysUnavailable with a fixed description.
func (c *jwksCache) fetch(ctx context.Context) (map[string][]verificationKey, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.uri, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: building the JWKS request failed", ErrKeysUnavailable)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: the JWKS endpoint could not be reached", ErrKeysUnavailable)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: the JWKS endpoint answered HTTP %d", ErrKeysUnavailable, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the JWKS response failed", ErrKeysUnavailable)
	}
	if int64(len(body)) > c.maxBytes {
		return nil, fmt.Errorf("%w: the JWKS response exceeds %d bytes", ErrKeysUnavailable, c.maxBytes)
	}
	set, err := jwk.Parse(body, jwk.WithIgnoreParseError(true))
	if err != nil {
		return nil, fmt.Errorf("%w: the JWKS response is not a JWK set", ErrKeysUnavailable)
	}
	keys := make(map[string][]verificationKey)
	for i := range set.Len() {
		k, _ := set.Key(i)
		kid := k.KeyID()
		if kid == "" {
			continue // tokens must name their key; an anonymous key is never chosen
		}
		if vk, ok := keyFromJWK(k); ok {
			keys[kid] = append(keys[kid], vk)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: the JWK set holds no usable signing key", ErrKeysUnavailable)
	}
	return keys, nil
}

// health reports ok while the last fetch succeeded, degraded while cached
// keys serve after a failed refresh, and down with no keys.
func (c *jwksCache) health() (ok, hasKeys bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr == nil, len(c.keys) > 0
}
