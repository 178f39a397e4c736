package httpx_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/httpx"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

var loopback = netip.MustParseAddr("127.0.0.1")

// testTimeout bounds exchanges that are expected to finish; it is a safety
// net, never what a test measures.
const testTimeout = 10 * time.Second

func ips(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

// fakeResolver answers made-up names. A name may have a sequence of
// answers: call n gets answer n (the last one repeats), which is how DNS
// rebinding is simulated.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	fail    map[string]error
	calls   map[string]int
}

func newResolver() *fakeResolver {
	return &fakeResolver{answers: map[string][][]netip.Addr{}, fail: map[string]error{}, calls: map[string]int{}}
}

func (r *fakeResolver) set(name string, seq ...[]netip.Addr) *fakeResolver {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[name] = seq
	return r
}

func (r *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if network != "ip" {
		return nil, errors.New("unexpected network " + network)
	}
	n := r.calls[host]
	r.calls[host]++
	if err, ok := r.fail[host]; ok {
		return nil, err
	}
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return slices.Clone(seq[min(n, len(seq)-1)]), nil
}

func (r *fakeResolver) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[name]
}

func (r *fakeResolver) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		n += c
	}
	return n
}

// dialLog records what the Control hook was asked to approve.
type dialLog struct {
	mu    sync.Mutex
	addrs []netip.AddrPort
}

func (d *dialLog) add(ap netip.AddrPort) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addrs = append(d.addrs, ap)
}

func (d *dialLog) all() []netip.AddrPort {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.addrs)
}

// newEgress builds the adapter under test. admitLoopback admits exactly
// 127.0.0.1 (where httptest servers listen) on top of the real policy.
func newEgress(t *testing.T, cfg httpx.Config, res ports.Resolver, admitLoopback bool) (*httpx.Egress, *dialLog) {
	t.Helper()
	e, err := httpx.New(cfg, res)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if admitLoopback {
		httpx.AdmitOnly(e, loopback)
	}
	log := &dialLog{}
	httpx.ObserveDials(e, log.add)
	return e, log
}

func portOf(t *testing.T, rawURL string) int {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// serve starts a loopback HTTP server and returns it with its port.
func serve(t *testing.T, h http.Handler) (*httptest.Server, int) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, portOf(t, srv.URL)
}

// release returns a channel closed when the test ends, before the servers
// it started shut down, so handlers blocked on it let go.
func release(t *testing.T) <-chan struct{} {
	ch := make(chan struct{})
	t.Cleanup(func() { close(ch) })
	return ch
}

func get(e *httpx.Egress, rawURL string) (ports.FetchResponse, error) {
	return e.Fetch(context.Background(), ports.FetchRequest{
		Method: http.MethodGet, URL: rawURL, MaxBytes: 1 << 20, Timeout: testTimeout, MaxRedirects: 3,
	})
}

// wantReason asserts err is an EgressError with reason want, a wrapped
// cause, and caller text that leaks none of leaks.
func wantReason(t *testing.T, err error, want ports.EgressReason, leaks ...string) *ports.EgressError {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	var ee *ports.EgressError
	if !errors.As(err, &ee) {
		t.Fatalf("error %T (%v) is not a *ports.EgressError", err, err)
	}
	if ee.Reason != want {
		t.Fatalf("reason %q (cause: %v), want %q", ee.Reason, ee.Err, want)
	}
	if ee.Err == nil {
		t.Errorf("reason %q has no wrapped cause", want)
	}
	for _, l := range leaks {
		if l != "" && strings.Contains(err.Error(), l) {
			t.Errorf("caller text %q leaks %q", err.Error(), l)
		}
	}
	return ee
}

func hostPort(host string, port int) string { return host + ":" + strconv.Itoa(port) }

func TestFetchPublicName(t *testing.T) {
	var gotHost string
	_, port := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHost = r.Host
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "hello")
	}))
	res := newResolver().set("public.test", ips("127.0.0.1"))
	e, dials := newEgress(t, httpx.Config{AllowedPorts: []int{port}}, res, true)

	resp, err := get(e, "http://Public.TEST.:"+strconv.Itoa(port)+"/p?q=1#frag")
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if resp.Status != http.StatusOK || string(resp.Body) != "hello" || resp.ContentType != "text/plain; charset=utf-8" {
		t.Fatalf("response %+v", resp)
	}
	if want := "http://public.test:" + strconv.Itoa(port) + "/p?q=1"; resp.FinalURL != want {
		t.Errorf("FinalURL %q, want %q", resp.FinalURL, want)
	}
	if gotHost != hostPort("public.test", port) {
		t.Errorf("Host header %q", gotHost)
	}
	if got := dials.all(); !slices.Equal(got, []netip.AddrPort{netip.AddrPortFrom(loopback, uint16(port))}) {
		t.Errorf("dialled %v", got)
	}
}

func TestGuardIsOnWithoutTheTestSeam(t *testing.T) {
	var hits atomic.Int32
	_, port := serve(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	res := newResolver().set("public.test", ips("127.0.0.1"))
	e, dials := newEgress(t, httpx.Config{AllowedPorts: []int{port}}, res, false)

	_, err := get(e, "http://public.test:"+strconv.Itoa(port)+"/")
	wantReason(t, err, ports.EgressBlockedAddress, "public.test", "127.0.0.1")
	if hits.Load() != 0 || len(dials.all()) != 0 {
		t.Fatalf("loopback reached: hits=%d dials=%v", hits.Load(), dials.all())
	}
}

// TestPinningDefeatsRebinding: the resolver answers with the approved
// address at check time and with another loopback address afterwards, where
// a second server listens on the same port. The request must land on the
// checked address, after exactly one lookup.
func TestPinningDefeatsRebinding(t *testing.T) {
	var good, evil atomic.Int32
	_, port := serve(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { good.Add(1) }))
	// Where 127.0.0.2 can be bound (Linux), a server waits there to catch a
	// dial that followed the rebound answer; the dial-target and lookup
	// assertions below hold everywhere.
	if ln, err := net.Listen("tcp", hostPort("127.0.0.2", port)); err == nil {
		evilSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { evil.Add(1) }))
		_ = evilSrv.Listener.Close()
		evilSrv.Listener = ln
		evilSrv.Start()
		t.Cleanup(evilSrv.Close)
	} else {
		t.Logf("no listener on 127.0.0.2 (%v): relying on the dial-target assertion", err)
	}

	res := newResolver().set("rebind.test", ips("127.0.0.1"), ips("127.0.0.2"))
	e, dials := newEgress(t, httpx.Config{AllowedPorts: []int{port}}, res, true)
	httpx.AdmitOnly(e, loopback, netip.MustParseAddr("127.0.0.2")) // even an admitted rebind target must not be used

	if _, err := get(e, "http://rebind.test:"+strconv.Itoa(port)+"/"); err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if good.Load() != 1 || evil.Load() != 0 {
		t.Fatalf("checked server hits=%d, rebind server hits=%d", good.Load(), evil.Load())
	}
	if n := res.count("rebind.test"); n != 1 {
		t.Errorf("resolver asked %d times, want once", n)
	}
	if got := dials.all(); !slices.Equal(got, []netip.AddrPort{netip.AddrPortFrom(loopback, uint16(port))}) {
		t.Errorf("dial targets %v, want only the checked address", got)
	}
}

// TestEveryHopIsResolvedAndCheckedAgain: a same-host redirect is a new hop;
// the name is resolved again and this time answers with metadata.
func TestEveryHopIsResolvedAndCheckedAgain(t *testing.T) {
	var hits atomic.Int32
	_, port := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, "/second", http.StatusFound)
	}))
	res := newResolver().set("rebind.test", ips("127.0.0.1"), ips("169.254.169.254"))
	e, dials := newEgress(t, httpx.Config{AllowedPorts: []int{port}}, res, true)

	_, err := get(e, "http://rebind.test:"+strconv.Itoa(port)+"/first")
	wantReason(t, err, ports.EgressBlockedAddress, "rebind.test", "169.254")
	if hits.Load() != 1 || res.count("rebind.test") != 2 || len(dials.all()) != 1 {
		t.Fatalf("hits=%d lookups=%d dials=%v", hits.Load(), res.count("rebind.test"), dials.all())
	}
}

func TestRedirectRefusals(t *testing.T) {
	cases := []struct {
		name     string
		location func(port int) string
		cfg      func(port int) httpx.Config
		want     ports.EgressReason
		leak     string
	}{
		{"metadata literal", func(int) string { return "http://169.254.169.254/latest/meta-data/" }, nil, ports.EgressBlockedAddress, "169.254"},
		{"metadata decimal", func(int) string { return "http://2852039166/" }, nil, ports.EgressBadURL, "2852039166"},
		{"metadata mapped v6", func(int) string { return "http://[::ffff:a9fe:a9fe]/" }, nil, ports.EgressBlockedAddress, "a9fe"},
		{"metadata NAT64", func(int) string { return "http://[64:ff9b::a9fe:a9fe]/" }, nil, ports.EgressBlockedAddress, "64:ff9b"},
		{"scheme-relative metadata", func(int) string { return "//169.254.169.254/" }, nil, ports.EgressBlockedAddress, "169.254"},
		{"private name", func(p int) string { return "http://intranet.test:" + strconv.Itoa(p) + "/" }, nil, ports.EgressBlockedAddress, "intranet"},
		{"localhost name", func(p int) string { return "http://localhost:" + strconv.Itoa(p) + "/" }, nil, ports.EgressBlockedAddress, "localhost"},
		{"not allowlisted", func(p int) string { return "http://other.test:" + strconv.Itoa(p) + "/" },
			func(p int) httpx.Config {
				return httpx.Config{AllowedHosts: []string{"public.test"}, AllowedPorts: []int{p}}
			}, ports.EgressHostNotAllowed, "other.test"},
		{"bad port", func(int) string { return "http://public.test:22/" }, nil, ports.EgressPortNotAllowed, "public.test"},
		{"port zero", func(int) string { return "http://public.test:0/" }, nil, ports.EgressPortNotAllowed, "public.test"},
		{"port out of range", func(int) string { return "http://public.test:99999/" }, nil, ports.EgressPortNotAllowed, "99999"},
		{"file scheme", func(int) string { return "file:///etc/passwd" }, nil, ports.EgressScheme, "passwd"},
		{"userinfo", func(p int) string { return "http://public.test@169.254.169.254/" }, nil, ports.EgressCredentials, "169.254"},
		{"backslash", func(int) string { return "/\\169.254.169.254/" }, nil, ports.EgressBadURL, "169.254"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var hits, after atomic.Int32
			var port int
			_, port = serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/start" {
					after.Add(1)
					return
				}
				hits.Add(1)
				w.Header().Set("Location", tc.location(port))
				w.WriteHeader(http.StatusFound)
			}))
			cfg := httpx.Config{AllowedPorts: []int{port}}
			if tc.cfg != nil {
				cfg = tc.cfg(port)
			}
			res := newResolver().
				set("public.test", ips("127.0.0.1")).
				set("other.test", ips("127.0.0.1")).
				set("localhost", ips("127.0.0.1")).
				set("intranet.test", ips("10.1.2.3"))
			e, dials := newEgress(t, cfg, res, true)

			_, err := get(e, "http://public.test:"+strconv.Itoa(port)+"/start")
			wantReason(t, err, tc.want, tc.leak)
			if hits.Load() != 1 || after.Load() != 0 {
				t.Errorf("first hop hits=%d, later hops=%d", hits.Load(), after.Load())
			}
			for _, ap := range dials.all() {
				if ap.Addr() != loopback {
					t.Errorf("dialled %v", ap)
				}
			}
		})
	}
}

func TestRedirectLimit(t *testing.T) {
	var hits atomic.Int32
	_, port := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		if r.URL.Query().Get("stop") == strconv.Itoa(int(n)) {
			_, _ = io.WriteString(w, "done")
			return
		}
		http.Redirect(w, r, "/hop?stop="+r.URL.Query().Get("stop")+"&n="+strconv.Itoa(int(n)), http.StatusFound)
	}))
	res := newResolver().set("public.test", ips("127.0.0.1"))
	e, _ := newEgress(t, httpx.Config{AllowedPorts: []int{port}}, res, true)
	base := "http://public.test:" + strconv.Itoa(port)
	fetch := func(stop string, maxRedirects int) (ports.FetchResponse, error) {
		hits.Store(0)
		return e.Fetch(context.Background(), ports.FetchRequest{URL: base + "/?stop=" + stop, MaxBytes: 1 << 20, Timeout: testTimeout, MaxRedirects: maxRedirects})
	}

	resp, err := fetch("3", 2)
	if err != nil || string(resp.Body) != "done" || resp.FinalURL != base+"/hop?stop=3&n=2" {
		t.Fatalf("two redirects within a limit of two: %+v %v", resp, err)
	}
	_, err = fetch("never", 2)
	wantReason(t, err, ports.EgressTooManyRedirect)
	if hits.Load() != 3 {
		t.Errorf("server saw %d requests, want 3 (the original and two redirects)", hits.Load())
	}
	_, err = fetch("never", 0)
	wantReason(t, err, ports.EgressRedirectRefused)
	if hits.Load() != 1 {
		t.Errorf("server saw %d requests with redirects off", hits.Load())
	}
	_, err = fetch("never", 1000)
	wantReason(t, err, ports.EgressTooManyRedirect)
	if hits.Load() != httpx.MaxRedirectsCeiling+1 {
		t.Errorf("ceiling not applied: %d requests", hits.Load())
	}
}

func TestRedirectMethodRewriting(t *testing.T) {
	type seen struct {
		method, body, contentType string
	}
	cases := []struct {
		status int
		want   seen
	}{
		{http.StatusSeeOther, seen{http.MethodGet, "", ""}},
		{http.StatusFound, seen{http.MethodGet, "", ""}},
		{http.StatusMovedPermanently, seen{http.MethodGet, "", ""}},
		{http.StatusTemporaryRedirect, seen{http.MethodPost, "payload", "application/json"}},
		{http.StatusPermanentRedirect, seen{http.MethodPost, "payload", "application/json"}},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			var got seen
			_, port := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/start" {
					w.Header().Set("Location", "/next")
					w.WriteHeader(tc.status)
					return
				}
				b, _ := io.ReadAll(r.Body)
				got = seen{r.Method, string(b), r.Header.Get("Content-Type")}
			}))
			res := newResolver().set("public.test", ips("127.0.0.1"))
			e, _ := newEgress(t, httpx.Config{AllowedPorts: []int{port}}, res, true)
			_, err := e.Fetch(context.Background(), ports.FetchRequest{
				Method: http.MethodPost, URL: "http://public.test:" + strconv.Itoa(port) + "/start",
				Headers: map[string]string{"Content-Type": "application/json"}, Body: []byte("payload"),
				MaxBytes: 1 << 20, Timeout: testTimeout, MaxRedirects: 1,
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("after %d: %+v, want %+v", tc.status, got, tc.want)
			}
		})
	}
}

// TestNoCredentialsAreSent asserts, on the server side, the exact header
// set of every hop: no Authorization, no Cookie (though the first hop set
// one), nothing but what the request named plus User-Agent.
func TestNoCredentialsAreSent(t *testing.T) {
	var mu sync.Mutex
	var seenHeaders []http.Header
	_, port := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seenHeaders = append(seenHeaders, r.Header.Clone())
		mu.Unlock()
		if r.URL.Path == "/start" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "secret", Path: "/"})
			w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
			http.Redirect(w, r, "/next", http.StatusFound)
		}
	}))
	res := newResolver().set("public.test", ips("127.0.0.1"))
	e, _ := newEgress(t, httpx.Config{AllowedPorts: []int{port}, UserAgent: "arrowhead-test"}, res, true)
	_, err := e.Fetch(context.Background(), ports.FetchRequest{
		URL: "http://public.test:" + strconv.Itoa(port) + "/start", Headers: map[string]string{"Accept": "text/plain"},
		MaxBytes: 1 << 20, Timeout: testTimeout, MaxRedirects: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seenHeaders) != 2 {
		t.Fatalf("hops %d", len(seenHeaders))
	}
	for i, h := range seenHeaders {
		var names []string
		for k := range h {
			names = append(names, k)
		}
		slices.Sort(names)
		// Connection: close is net/http's framing for a single-use connection.
		if want := []string{"Accept", "Accept-Encoding", "Connection", "User-Agent"}; !slices.Equal(names, want) {
			t.Errorf("hop %d sent headers %v, want exactly %v", i, names, want)
		}
		if h.Get("Connection") != "close" {
			t.Errorf("hop %d Connection %q", i, h.Get("Connection"))
		}
		for _, k := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
			if h.Get(k) != "" {
				t.Errorf("hop %d sent %s", i, k)
			}
		}
		if h.Get("User-Agent") != "arrowhead-test" {
			t.Errorf("hop %d user agent %q", i, h.Get("User-Agent"))
		}
	}
}

func TestCallerHeadersStayWithTheirOrigin(t *testing.T) {
	var first, second http.Header
	_, otherPort := serve(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { second = r.Header.Clone() }))
	_, port := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first = r.Header.Clone()
		http.Redirect(w, r, "http://other.test:"+strconv.Itoa(otherPort)+"/", http.StatusFound)
	}))
	res := newResolver().set("public.test", ips("127.0.0.1")).set("other.test", ips("127.0.0.1"))
	e, _ := newEgress(t, httpx.Config{AllowedPorts: []int{port, otherPort}}, res, true)
	_, err := e.Fetch(context.Background(), ports.FetchRequest{
		URL:      "http://public.test:" + strconv.Itoa(port) + "/",
		Headers:  map[string]string{"Authorization": "Bearer configured-key", "Accept": "application/json"},
		MaxBytes: 1 << 20, Timeout: testTimeout, MaxRedirects: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if first.Get("Authorization") != "Bearer configured-key" {
		t.Errorf("origin did not get its configured header")
	}
	if second.Get("Authorization") != "" || second.Get("Accept") != "application/json" {
		t.Errorf("cross-origin hop headers: %v", second)
	}
}

func TestBodyCaps(t *testing.T) {
	const maxBytes = 64 << 10
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, _ = zw.Write(make([]byte, 16<<20))
	_ = zw.Close()
	var small bytes.Buffer
	zw = gzip.NewWriter(&small)
	_, _ = io.WriteString(zw, "decoded text")
	_ = zw.Close()

	done := release(t)
	_, port := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/exact":
			_, _ = w.Write(bytes.Repeat([]byte("a"), maxBytes))
		case "/stream":
			// No Content-Length: chunks until the client gives up.
			for i := 0; i < 2*maxBytes/1024+1; i++ {
				_, _ = w.Write(bytes.Repeat([]byte("b"), 1024))
				w.(http.Flusher).Flush()
			}
		case "/bomb":
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(bomb.Bytes())
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(small.Bytes())
		case "/declared":
			// Declare a body over the cap, then send nothing: only an early
			// refusal can answer before the test ends.
			w.Header().Set("Content-Length", strconv.Itoa(10*maxBytes))
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-done:
			}
		case "/brotli":
			w.Header().Set("Content-Encoding", "br")
			_, _ = io.WriteString(w, "x")
		}
	}))
	if int64(bomb.Len()) >= maxBytes {
		t.Fatalf("bomb is %d bytes compressed; the test needs it under the cap", bomb.Len())
	}
	res := newResolver().set("public.test", ips("127.0.0.1"))
	e, _ := newEgress(t, httpx.Config{AllowedPorts: []int{port}}, res, true)
	fetch := func(path string) (ports.FetchResponse, error) {
		return e.Fetch(context.Background(), ports.FetchRequest{
			URL: "http://public.test:" + strconv.Itoa(port) + path, MaxBytes: maxBytes, Timeout: testTimeout,
		})
	}

	if resp, err := fetch("/exact"); err != nil || len(resp.Body) != maxBytes {
		t.Errorf("body of exactly the cap: %d bytes, %v", len(resp.Body), err)
	}
	_, err := fetch("/stream")
	if ee := wantReason(t, err, ports.EgressTooLarge); !errors.Is(ee, httpx.ErrWireCap) {
		t.Errorf("stream cause %v", ee.Err)
	}
	_, err = fetch("/bomb")
	if ee := wantReason(t, err, ports.EgressTooLarge); !errors.Is(ee, httpx.ErrBodyCap) {
		t.Errorf("gzip bomb was not cut off by the decoded cap: %v", ee.Err)
	}
	if resp, err := fetch("/gzip"); err != nil || string(resp.Body) != "decoded text" {
		t.Errorf("gzip body: %q, %v", resp.Body, err)
	}
	_, err = fetch("/declared")
	if ee := wantReason(t, err, ports.EgressTooLarge); !errors.Is(ee, httpx.ErrContentLength) {
		t.Errorf("declared length cause %v", ee.Err)
	}
	_, err = fetch("/brotli")
	wantReason(t, err, ports.EgressProtocol)

	// TruncateBody keeps the first MaxBytes instead of failing, on the wire
	// cap and on the decoded cap alike, and says so.
	truncated := func(path string) (ports.FetchResponse, error) {
		return e.Fetch(context.Background(), ports.FetchRequest{
			URL: "http://public.test:" + strconv.Itoa(port) + path, MaxBytes: maxBytes, Timeout: testTimeout, TruncateBody: true,
		})
	}
	for _, path := range []string{"/stream", "/bomb"} {
		resp, err := truncated(path)
		if err != nil || len(resp.Body) != maxBytes || !resp.Truncated {
			t.Errorf("truncated %s: %d bytes, truncated=%v, %v", path, len(resp.Body), resp.Truncated, err)
		}
	}
	if resp, err := truncated("/exact"); err != nil || len(resp.Body) != maxBytes || resp.Truncated {
		t.Errorf("body of exactly the cap with truncation: %d bytes, truncated=%v, %v", len(resp.Body), resp.Truncated, err)
	}
}

func TestTimeout(t *testing.T) {
	done := release(t)
	_, port := serve(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	res := newResolver().set("slow.test", ips("127.0.0.1"))
	e, _ := newEgress(t, httpx.Config{AllowedPorts: []int{port}}, res, true)
	_, err := e.Fetch(context.Background(), ports.FetchRequest{
		URL: "http://slow.test:" + strconv.Itoa(port) + "/", MaxBytes: 1 << 20, Timeout: 100 * time.Millisecond,
	})
	wantReason(t, err, ports.EgressTimeout, "slow.test")

	// A caller's earlier deadline bounds the exchange too.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = e.Fetch(ctx, ports.FetchRequest{URL: "http://slow.test:" + strconv.Itoa(port) + "/", Timeout: testTimeout})
	wantReason(t, err, ports.EgressTimeout)
}

func TestHTTPProxyEnvironmentIsIgnored(t *testing.T) {
	var proxied atomic.Int32
	proxy, _ := serve(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { proxied.Add(1) }))
	var requestURI string
	_, port := serve(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { requestURI = r.RequestURI }))
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"} {
		t.Setenv(k, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")

	res := newResolver().set("public.test", ips("127.0.0.1"))
	e, _ := newEgress(t, httpx.Config{AllowedPorts: []int{port}}, res, true)
	if _, err := get(e, "http://public.test:"+strconv.Itoa(port)+"/direct"); err != nil {
		t.Fatal(err)
	}
	if proxied.Load() != 0 || requestURI != "/direct" {
		t.Fatalf("proxy hits=%d, origin saw request-target %q", proxied.Load(), requestURI)
	}
	u, _ := url.Parse("http://public.test/")
	tgt, d := security.CheckURL(u, httpx.ToASCII)
	if !d.Allowed {
		t.Fatal(d)
	}
	if tr := httpx.TransportOf(e, tgt); tr.Proxy != nil {
		t.Fatal("transport has a Proxy function")
	}
}

func TestTLSUsesTheOriginalHost(t *testing.T) {
	var serverName, host string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		serverName, host = r.TLS.ServerName, r.Host
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below is expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	port := portOf(t, srv.URL)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())

	// httptest's certificate names example.com.
	res := newResolver().set("example.com", ips("127.0.0.1")).set("public.test", ips("127.0.0.1"))
	e, dials := newEgress(t, httpx.Config{AllowedPorts: []int{port}}, res, true)
	httpx.TrustRoots(e, pool)

	if _, err := get(e, "https://example.com:"+strconv.Itoa(port)+"/"); err != nil {
		t.Fatal(err)
	}
	if serverName != "example.com" || host != hostPort("example.com", port) {
		t.Fatalf("SNI %q, Host %q", serverName, host)
	}
	if got := dials.all(); len(got) != 1 || got[0].Addr() != loopback {
		t.Fatalf("dialled %v", got)
	}
	// A name the certificate does not cover fails verification, so the
	// pinned address cannot stand in for another host.
	_, err := get(e, "https://public.test:"+strconv.Itoa(port)+"/")
	wantReason(t, err, ports.EgressConnect, "public.test")
}

func TestUnicodeHostsAreCheckedAsWhatTheyDenote(t *testing.T) {
	_, port := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	res := newResolver().set("public.test", ips("127.0.0.1"))

	guarded, _ := newEgress(t, httpx.Config{AllowedPorts: []int{port}}, res, false)
	for _, raw := range []string{
		"http://１６９．２５４．１６９．２５４/",
		"http://169。254。169。254/",
		"http://%EF%BC%91%EF%BC%92%EF%BC%97.0.0.1:" + strconv.Itoa(port) + "/",
		"http://１２７．０．０．１:" + strconv.Itoa(port) + "/",
	} {
		_, err := get(guarded, raw)
		wantReason(t, err, ports.EgressBlockedAddress, "169", "127", "１")
	}
	if res.total() != 0 {
		t.Errorf("resolver consulted %d times: Unicode IP spellings were treated as names", res.total())
	}

	admitted, dials := newEgress(t, httpx.Config{AllowedPorts: []int{port}}, res, true)
	resp, err := get(admitted, "http://ｐｕｂｌｉｃ。ｔｅｓｔ:"+strconv.Itoa(port)+"/")
	if err != nil || resp.FinalURL != "http://public.test:"+strconv.Itoa(port)+"/" {
		t.Fatalf("full-width name: %+v %v", resp, err)
	}
	if res.count("public.test") != 1 || len(dials.all()) != 1 {
		t.Fatalf("lookups %d, dials %v", res.count("public.test"), dials.all())
	}
}

func TestAnswersAreCheckedAsAWhole(t *testing.T) {
	var hits atomic.Int32
	_, port := serve(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	res := newResolver().
		set("mixed.test", ips("127.0.0.1", "10.0.0.1")).
		set("mixed6.test", ips("127.0.0.1", "fd00:ec2::254")).
		set("empty.test", []netip.Addr{})
	res.fail["broken.test"] = &net.DNSError{Err: "server misbehaving", Name: "broken.test"}
	e, dials := newEgress(t, httpx.Config{AllowedPorts: []int{port}}, res, true)

	for _, name := range []string{"mixed.test", "mixed6.test"} {
		_, err := get(e, "http://"+name+":"+strconv.Itoa(port)+"/")
		wantReason(t, err, ports.EgressBlockedAddress, name)
	}
	_, err := get(e, "http://empty.test:"+strconv.Itoa(port)+"/")
	wantReason(t, err, ports.EgressResolve, "empty.test")
	_, err = get(e, "http://broken.test:"+strconv.Itoa(port)+"/")
	wantReason(t, err, ports.EgressResolve, "broken.test")
	if hits.Load() != 0 || len(dials.all()) != 0 {
		t.Fatalf("hits %d dials %v", hits.Load(), dials.all())
	}
}

func TestInternalExemptionAdmitsOnlyTheExactPair(t *testing.T) {
	var hits atomic.Int32
	_, port := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/v1", http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "model says hi")
	}))
	_, otherPort := serve(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	p := strconv.Itoa(port)
	res := newResolver().
		set("llm.local", ips("127.0.0.1")).
		set("localhost", ips("127.0.0.1")).
		set("other.local", ips("127.0.0.1"))
	// The real address policy: no test seam. The allowlist names something
	// else entirely, and the port allowlist is empty.
	cfg := httpx.Config{
		AllowedHosts:  []string{"api.example.com"},
		InternalHosts: []string{"LLM.local:" + p, "localhost:" + p},
	}
	e, dials := newEgress(t, cfg, res, false)
	internal := func(raw string) (ports.FetchResponse, error) {
		return e.Fetch(context.Background(), ports.FetchRequest{
			Method: http.MethodPost, URL: raw, Body: []byte("{}"), Internal: true,
			MaxBytes: 1 << 20, Timeout: testTimeout, MaxRedirects: 3,
		})
	}

	for _, raw := range []string{"http://llm.local:" + p + "/v1", "http://localhost:" + p + "/v1"} {
		resp, err := internal(raw)
		if err != nil || string(resp.Body) != "model says hi" {
			t.Fatalf("%s: %+v %v", raw, resp, err)
		}
	}
	if got := dials.all(); len(got) != 2 || got[0] != netip.AddrPortFrom(loopback, uint16(port)) {
		t.Fatalf("internal dials %v", got)
	}
	if res.count("llm.local") != 1 {
		t.Fatalf("internal pair resolved %d times", res.count("llm.local"))
	}

	hits.Store(0)
	refusals := []struct {
		name     string
		raw      string
		internal bool
		want     ports.EgressReason
	}{
		{"pair without the Internal flag", "http://llm.local:" + p + "/v1", false, ports.EgressHostNotAllowed},
		{"same host, other port", "http://llm.local:" + strconv.Itoa(otherPort) + "/", true, ports.EgressHostNotAllowed},
		{"same address, other name", "http://other.local:" + p + "/", true, ports.EgressHostNotAllowed},
		{"same address as a literal", "http://127.0.0.1:" + p + "/", true, ports.EgressHostNotAllowed},
		{"scheme still checked", "ftp://llm.local:" + p + "/", true, ports.EgressScheme},
		{"credentials still refused", "http://user:pw@llm.local:" + p + "/", true, ports.EgressCredentials},
		{"no redirects for internal requests", "http://llm.local:" + p + "/redirect", true, ports.EgressRedirectRefused},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Fetch(context.Background(), ports.FetchRequest{
				URL: tc.raw, Internal: tc.internal, MaxBytes: 1 << 20, Timeout: testTimeout, MaxRedirects: 3,
			})
			wantReason(t, err, tc.want, "llm.local", "127.0.0.1")
		})
	}
	if hits.Load() != 1 { // only the redirecting internal request reached the server
		t.Errorf("server hits %d, want 1", hits.Load())
	}

	// Without an allowlist the same non-exempt requests meet the address
	// refusal instead.
	open, _ := newEgress(t, httpx.Config{AllowedPorts: []int{port, otherPort}, InternalHosts: []string{"llm.local:" + p}}, res, false)
	for _, raw := range []string{"http://llm.local:" + strconv.Itoa(otherPort) + "/", "http://other.local:" + p + "/"} {
		_, err := open.Fetch(context.Background(), ports.FetchRequest{URL: raw, Internal: true, Timeout: testTimeout})
		wantReason(t, err, ports.EgressBlockedAddress)
	}
	_, err := open.Fetch(context.Background(), ports.FetchRequest{URL: "http://llm.local:" + p + "/", Internal: false, Timeout: testTimeout})
	wantReason(t, err, ports.EgressBlockedAddress)
}

func TestControlHookRechecksTheConnectedAddress(t *testing.T) {
	e, _ := newEgress(t, httpx.Config{}, newResolver(), true)
	pinned := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:80")}
	control := httpx.ControlFor(e, pinned, false)
	if err := control("tcp4", "127.0.0.1:80", nil); err != nil {
		t.Fatalf("pinned address refused: %v", err)
	}
	for _, addr := range []string{"127.0.0.2:80", "127.0.0.1:81", "[::1]:80", "not-an-address"} {
		if err := control("tcp", addr, nil); !errors.Is(err, httpx.ErrPinViolation) {
			t.Errorf("Control(%s) = %v, want a pin violation", addr, err)
		}
	}
	// An address that is pinned but fails the policy is still refused.
	meta := []netip.AddrPort{netip.MustParseAddrPort("169.254.169.254:80")}
	if err := httpx.ControlFor(e, meta, false)("tcp4", "169.254.169.254:80", nil); !errors.Is(err, httpx.ErrPinViolation) {
		t.Errorf("metadata passed the Control hook: %v", err)
	}
	// An exempt internal hop skips the policy, not the pin.
	if err := httpx.ControlFor(e, meta, true)("tcp4", "169.254.169.254:80", nil); err != nil {
		t.Errorf("exempt pinned address refused: %v", err)
	}
	if err := httpx.ControlFor(e, meta, true)("tcp4", "169.254.169.253:80", nil); !errors.Is(err, httpx.ErrPinViolation) {
		t.Errorf("exempt hop dialled an unpinned address: %v", err)
	}
}

func TestRequestValidation(t *testing.T) {
	e, _ := newEgress(t, httpx.Config{}, newResolver(), false)
	cases := []struct {
		name string
		req  ports.FetchRequest
	}{
		{"method", ports.FetchRequest{Method: http.MethodDelete, URL: "http://example.com/"}},
		{"host header", ports.FetchRequest{URL: "http://example.com/", Headers: map[string]string{"Host": "169.254.169.254"}}},
		{"cookie header", ports.FetchRequest{URL: "http://example.com/", Headers: map[string]string{"cookie": "a=b"}}},
		{"accept-encoding header", ports.FetchRequest{URL: "http://example.com/", Headers: map[string]string{"Accept-Encoding": "br"}}},
		{"header injection", ports.FetchRequest{URL: "http://example.com/", Headers: map[string]string{"X-A": "b\r\nHost: x"}}},
		{"bad header name", ports.FetchRequest{URL: "http://example.com/", Headers: map[string]string{"X A": "b"}}},
		{"negative cap", ports.FetchRequest{URL: "http://example.com/", MaxBytes: -1}},
		{"negative timeout", ports.FetchRequest{URL: "http://example.com/", Timeout: -time.Second}},
		{"negative redirects", ports.FetchRequest{URL: "http://example.com/", MaxRedirects: -1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Fetch(context.Background(), tc.req)
			wantReason(t, err, ports.EgressBadURL, "169.254.169.254")
		})
	}
}

func TestNewValidatesConfiguration(t *testing.T) {
	res := newResolver()
	if _, err := httpx.New(httpx.Config{}, nil); err == nil {
		t.Error("nil resolver accepted")
	}
	bad := []httpx.Config{
		{AllowedHosts: []string{"not a host"}},
		{AllowedHosts: []string{"0x7f.1"}},
		{AllowedPorts: []int{0}},
		{AllowedPorts: []int{65536}},
		{InternalHosts: []string{"llm.local"}},
		{InternalHosts: []string{"llm.local:0"}},
		{InternalHosts: []string{"llm.local:080"}},
		{InternalHosts: []string{"llm.local:99999"}},
		{UserAgent: "bad\r\nagent"},
	}
	for _, cfg := range bad {
		if _, err := httpx.New(cfg, res); err == nil {
			t.Errorf("config %+v accepted", cfg)
		}
	}
	if _, err := httpx.New(httpx.Config{AllowedHosts: []string{"Example.COM.", "[2001:db8::1]", "bücher.de"}, InternalHosts: []string{"[::1]:11434"}}, res); err != nil {
		t.Errorf("valid config refused: %v", err)
	}
}

func TestAllowlistIsExactAndCaseInsensitive(t *testing.T) {
	_, port := serve(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	res := newResolver().set("public.test", ips("127.0.0.1")).set("public.test.evil", ips("127.0.0.1")).set("sub.public.test", ips("127.0.0.1"))
	e, _ := newEgress(t, httpx.Config{AllowedHosts: []string{"PUBLIC.test."}, AllowedPorts: []int{port}}, res, true)
	p := strconv.Itoa(port)
	if _, err := get(e, "http://Public.Test:"+p+"/"); err != nil {
		t.Fatalf("allowlisted host refused: %v", err)
	}
	for _, raw := range []string{"http://public.test.evil:" + p + "/", "http://sub.public.test:" + p + "/"} {
		_, err := get(e, raw)
		wantReason(t, err, ports.EgressHostNotAllowed, "public.test")
	}
}

func BenchmarkFetchLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	res := newResolver().set("public.test", ips("127.0.0.1"))
	e, err := httpx.New(httpx.Config{AllowedPorts: []int{port}}, res)
	if err != nil {
		b.Fatal(err)
	}
	httpx.AdmitOnly(e, loopback)
	raw := "http://public.test:" + u.Port() + "/"
	for b.Loop() {
		if _, err := get(e, raw); err != nil {
			b.Fatal(err)
		}
	}
}
