package httpx_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/httpx"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Canaries: none of these may ever appear in an error.
const (
	embKey        = "sk-CANARYKEY-7f3a9c2e1d5b"
	embTextCanary = "TEXTCANARY-91b2c4"
	embHost       = "embed.internal"
	embPath       = "/v1/CANARYPATH/embeddings"
)

// embResolver answers every name it knows with 127.0.0.1, where httptest
// servers listen.
type embResolver struct{ names []string }

func (r embResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	if network == "ip" && slices.Contains(r.names, host) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, errors.New("embResolver: unknown name")
}

// embSeen is one request the fake endpoint received.
type embSeen struct {
	method, path, query string
	header              http.Header
	body                []byte
	input               []string
}

// embFake is an OpenAI-compatible embeddings endpoint on loopback.
type embFake struct {
	mu   sync.Mutex
	seen []embSeen
	// respond writes the answer to request number n (from 0).
	respond func(w http.ResponseWriter, in []string, n int)
	port    int
}

func (f *embFake) requests() []embSeen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

func embServe(t *testing.T, respond func(w http.ResponseWriter, in []string, n int)) *embFake {
	t.Helper()
	f := &embFake{respond: respond}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Input []string `json:"input"`
		}
		_ = json.Unmarshal(body, &req)
		f.mu.Lock()
		n := len(f.seen)
		f.seen = append(f.seen, embSeen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body, req.Input})
		f.mu.Unlock()
		f.respond(w, req.Input, n)
	}))
	t.Cleanup(srv.Close)
	f.port = embPortOf(t, srv.URL)
	return f
}

func embPortOf(t *testing.T, rawURL string) int {
	t.Helper()
	_, p, _ := strings.Cut(strings.TrimPrefix(rawURL, "http://"), ":")
	port, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func (f *embFake) endpoint() string {
	return "http://" + embHost + ":" + strconv.Itoa(f.port) + embPath
}

func (f *embFake) pair() string { return embHost + ":" + strconv.Itoa(f.port) }

// embVector is what the fake answers for a text: derived from the text so
// a mix-up of order shows.
func embVector(text string) []float64 {
	return []float64{float64(len(text)), float64(strings.Count(text, "x")) + 0.5, -1.25}
}

// embAnswer answers with one item per input in reverse index order.
func embAnswer(w http.ResponseWriter, in []string, _ int) {
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	var data []item
	for i := len(in) - 1; i >= 0; i-- {
		data = append(data, item{"embedding", i, embVector(in[i])})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": "m",
		"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1},
	})
}

// embEgress is the real egress adapter with the real address policy (no
// test seam) and a resolver that maps embHost to loopback.
func embEgress(t *testing.T, cfg httpx.Config) *httpx.Egress {
	t.Helper()
	e, err := httpx.New(cfg, embResolver{names: []string{embHost}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// embInternal is an egress whose allowlist names something else entirely
// and whose internal list names the fake's exact pair.
func embInternal(t *testing.T, f *embFake) *httpx.Egress {
	t.Helper()
	return embEgress(t, httpx.Config{AllowedHosts: []string{"api.example.com"}, InternalHosts: []string{f.pair()}})
}

func newEmbedder(t *testing.T, cfg httpx.EmbedderConfig, e ports.Egress) *httpx.HTTPEmbedder {
	t.Helper()
	h, err := httpx.NewHTTPEmbedder(cfg, e)
	if err != nil {
		t.Fatalf("NewHTTPEmbedder: %v", err)
	}
	return h
}

// wantEmbedErr asserts err is an *EmbedError of kind and that no canary
// shows in it or anything it wraps, in any format.
func wantEmbedErr(t *testing.T, err error, kind httpx.EmbedErrorKind, leaks ...string) *httpx.EmbedError {
	t.Helper()
	var ee *httpx.EmbedError
	if !errors.As(err, &ee) {
		t.Fatalf("error %T (%v) is not an *EmbedError", err, err)
	}
	if ee.Kind != kind {
		t.Fatalf("kind %q, want %q", ee.Kind, kind)
	}
	assertNoLeak(t, err, leaks...)
	return ee
}

func assertNoLeak(t *testing.T, err error, leaks ...string) {
	t.Helper()
	leaks = append(leaks, embKey, embTextCanary, embHost, "CANARYPATH")
	for e := err; e != nil; e = errors.Unwrap(e) {
		for _, form := range []string{e.Error(), fmt.Sprintf("%v", e), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e)} {
			for _, l := range leaks {
				if strings.Contains(form, l) {
					t.Fatalf("error leaks %q: %s", l, form)
				}
			}
		}
	}
}

func TestHTTPEmbedderThroughTheInternalExemption(t *testing.T) {
	f := embServe(t, embAnswer)
	internal := []string{f.pair()}
	cfg := httpx.EmbedderConfig{
		Endpoint:   f.endpoint(),
		Model:      "text-embedding-test",
		APIKey:     embKey,
		Dimensions: 3,
		BatchSize:  3,
		Internal:   httpx.InternalEndpoint(f.endpoint(), internal),
	}
	if !cfg.Internal {
		t.Fatal("InternalEndpoint did not recognise the configured pair")
	}
	h := newEmbedder(t, cfg, embInternal(t, f))
	if !h.Semantic() || h.Dimensions() != 3 {
		t.Fatalf("Semantic %v Dimensions %d", h.Semantic(), h.Dimensions())
	}

	texts := []string{"a", "bx", "cxx", "dxxx", "e" + embTextCanary, "f", "gxxxxxx"}
	got, err := h.Embed(context.Background(), texts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if len(got) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(got), len(texts))
	}
	for i, text := range texts {
		want := embVector(text)
		for j := range want {
			if got[i][j] != float32(want[j]) {
				t.Fatalf("text %d: got %v, want %v (reassembled out of order?)", i, got[i], want)
			}
		}
	}

	reqs := f.requests()
	var sizes []int
	var sent []string
	for _, r := range reqs {
		sizes = append(sizes, len(r.input))
		sent = append(sent, r.input...)
	}
	if !slices.Equal(sizes, []int{3, 3, 1}) || !slices.Equal(sent, texts) {
		t.Fatalf("batches %v carrying %q", sizes, sent)
	}

	// What reached the endpoint: the bearer key in Authorization and no
	// other credential, cookie or proxy header anywhere.
	allowed := []string{"Authorization", "Content-Type", "Accept", "User-Agent", "Accept-Encoding", "Content-Length", "Connection"}
	for i, r := range reqs {
		if r.method != http.MethodPost || r.path != embPath || r.query != "" {
			t.Errorf("request %d: %s %s?%s", i, r.method, r.path, r.query)
		}
		if got := r.header.Values("Authorization"); !slices.Equal(got, []string{"Bearer " + embKey}) {
			t.Errorf("request %d: Authorization %q", i, got)
		}
		for name, vals := range r.header {
			if !slices.Contains(allowed, name) {
				t.Errorf("request %d: unexpected header %s", i, name)
			}
			if name != "Authorization" && strings.Contains(strings.Join(vals, " "), embKey) {
				t.Errorf("request %d: key in header %s", i, name)
			}
		}
		if strings.Contains(string(r.body), embKey) {
			t.Errorf("request %d: key in body", i)
		}
		var body map[string]any
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("request %d: body %v", i, err)
		}
		if body["model"] != "text-embedding-test" || len(body) != 2 {
			t.Errorf("request %d: body fields %v", i, body)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("request %d: Content-Type %q", i, ct)
		}
	}
}

// The exemption, not anything else, is what admits the loopback endpoint:
// the same URL through an egress that allow-lists its host and port but
// does not exempt it is refused as a non-public address.
func TestHTTPEmbedderNeedsTheExemption(t *testing.T) {
	f := embServe(t, embAnswer)
	base := httpx.EmbedderConfig{Endpoint: f.endpoint(), APIKey: embKey, Dimensions: 3}
	open := httpx.Config{AllowedHosts: []string{embHost}, AllowedPorts: []int{f.port}}
	withPair := open
	withPair.InternalHosts = []string{f.pair()}

	cases := []struct {
		name     string
		egress   httpx.Config
		internal bool
		ok       bool
	}{
		{"listed pair, marked internal", withPair, true, true},
		{"listed pair, not marked internal", withPair, false, false},
		{"marked internal, pair not listed", open, true, false},
		{"neither", open, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(f.requests())
			cfg := base
			cfg.Internal = tc.internal
			h := newEmbedder(t, cfg, embEgress(t, tc.egress))
			_, err := h.Embed(context.Background(), []string{embTextCanary})
			hits := len(f.requests()) - before
			if tc.ok {
				if err != nil || hits != 1 {
					t.Fatalf("err %v, hits %d", err, hits)
				}
				return
			}
			ee := wantEmbedErr(t, err, httpx.EmbedEgress)
			if ee.Reason != ports.EgressBlockedAddress || ports.EgressReasonOf(err) != ports.EgressBlockedAddress {
				t.Fatalf("reason %q", ee.Reason)
			}
			if hits != 0 {
				t.Fatalf("the endpoint was reached %d times", hits)
			}
		})
	}
}

func TestHTTPEmbedderRefusesRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		embAnswer(w, []string{"x"}, 0)
	}))
	t.Cleanup(other.Close)
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			f := embServe(t, func(w http.ResponseWriter, _ []string, _ int) {
				w.Header().Set("Location", other.URL+"/steal")
				w.WriteHeader(status)
			})
			// Through the internal exemption ...
			cfg := httpx.EmbedderConfig{Endpoint: f.endpoint(), APIKey: embKey, Dimensions: 3, Internal: true}
			_, err := newEmbedder(t, cfg, embInternal(t, f)).Embed(context.Background(), []string{"x"})
			if ee := wantEmbedErr(t, err, httpx.EmbedEgress); ee.Reason != ports.EgressRedirectRefused {
				t.Fatalf("internal: reason %q", ee.Reason)
			}
			// ... and on the ordinary path (loopback admitted by the test
			// seam), where the embedder itself asks for no redirects.
			e := embEgress(t, httpx.Config{AllowedPorts: []int{f.port, embPortOf(t, other.URL)}})
			httpx.AdmitOnly(e, netip.MustParseAddr("127.0.0.1"))
			cfg.Internal = false
			_, err = newEmbedder(t, cfg, e).Embed(context.Background(), []string{"x"})
			if ee := wantEmbedErr(t, err, httpx.EmbedEgress); ee.Reason != ports.EgressRedirectRefused {
				t.Fatalf("ordinary: reason %q", ee.Reason)
			}
			if len(f.requests()) != 2 || elsewhere.Load() != 0 {
				t.Fatalf("endpoint hits %d, redirect target hits %d", len(f.requests()), elsewhere.Load())
			}
		})
	}
}

func TestHTTPEmbedderResponseSizeCap(t *testing.T) {
	padding := strings.Repeat(" ", 2000)
	f := embServe(t, func(w http.ResponseWriter, in []string, _ int) {
		_, _ = io.WriteString(w, `{"data":[{"index":0,"embedding":[1,2,3]}]}`+padding)
	})
	cfg := httpx.EmbedderConfig{Endpoint: f.endpoint(), Dimensions: 3, Internal: true, MaxResponseBytes: 1024}
	_, err := newEmbedder(t, cfg, embInternal(t, f)).Embed(context.Background(), []string{"x"})
	if ee := wantEmbedErr(t, err, httpx.EmbedEgress); ee.Reason != ports.EgressTooLarge {
		t.Fatalf("reason %q", ee.Reason)
	}
	// The same answer under a cap it fits is accepted.
	cfg.MaxResponseBytes = 4096
	if v, err := newEmbedder(t, cfg, embInternal(t, f)).Embed(context.Background(), []string{"x"}); err != nil || v[0][2] != 3 {
		t.Fatalf("within the cap: %v %v", v, err)
	}
}

func TestHTTPEmbedderParsesStrictly(t *testing.T) {
	cases := []struct {
		name string
		body string
		want httpx.EmbedErrorKind // "" = accepted
	}{
		{"well formed", `{"data":[{"index":1,"embedding":[4,5,6]},{"index":0,"embedding":[1,2.5e-3,-3]}],"usage":{}}`, ""},
		{"tiny numbers underflow to zero", `{"data":[{"index":0,"embedding":[1e-60,0,0]},{"index":1,"embedding":[1,2,3]}]}`, ""},
		{"not JSON", `<html>oops</html>`, httpx.EmbedMalformed},
		{"empty body", ``, httpx.EmbedMalformed},
		{"no data", `{"object":"list"}`, httpx.EmbedMalformed},
		{"data not a list", `{"data":{"index":0}}`, httpx.EmbedMalformed},
		{"too few items", `{"data":[{"index":0,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"too many items", `{"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]},{"index":2,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"index missing", `{"data":[{"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"index null", `{"data":[{"index":null,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"index repeated", `{"data":[{"index":1,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"index out of range", `{"data":[{"index":0,"embedding":[1,2,3]},{"index":2,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"index negative", `{"data":[{"index":-1,"embedding":[1,2,3]},{"index":0,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"index fractional", `{"data":[{"index":0.5,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"index as string", `{"data":[{"index":"0","embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"short vector", `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedWidth},
		{"long vector", `{"data":[{"index":0,"embedding":[1,2,3,4]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedWidth},
		{"missing vector", `{"data":[{"index":0},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedWidth},
		{"base64 vector", `{"data":[{"index":0,"embedding":"AAAA"},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"NaN literal", `{"data":[{"index":0,"embedding":[NaN,2,3]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"NaN as string", `{"data":[{"index":0,"embedding":["NaN",2,3]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"number as string", `{"data":[{"index":0,"embedding":["1",2,3]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"null component", `{"data":[{"index":0,"embedding":[null,2,3]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"boolean component", `{"data":[{"index":0,"embedding":[true,2,3]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"nested component", `{"data":[{"index":0,"embedding":[[1],2,3]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedMalformed},
		{"beyond float32", `{"data":[{"index":0,"embedding":[1e39,2,3]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedNonFinite},
		{"beyond float64", `{"data":[{"index":0,"embedding":[-1e400,2,3]},{"index":1,"embedding":[1,2,3]}]}`, httpx.EmbedNonFinite},
		{"trailing data", `{"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]}]} {}`, httpx.EmbedMalformed},
		{"top-level list", `[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]}]`, httpx.EmbedMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := embServe(t, func(w http.ResponseWriter, _ []string, _ int) { _, _ = io.WriteString(w, tc.body) })
			cfg := httpx.EmbedderConfig{Endpoint: f.endpoint(), APIKey: embKey, Dimensions: 3, Internal: true}
			got, err := newEmbedder(t, cfg, embInternal(t, f)).Embed(context.Background(), []string{"a", "b"})
			if tc.want == "" {
				if err != nil || len(got) != 2 || len(got[0]) != 3 || len(got[1]) != 3 {
					t.Fatalf("got %v, %v", got, err)
				}
				return
			}
			if got != nil {
				t.Fatalf("vectors returned with an error: %v", got)
			}
			wantEmbedErr(t, err, tc.want)
		})
	}
}

func TestHTTPEmbedderReassemblesByIndex(t *testing.T) {
	// Items arrive in reverse order within each batch; the result follows
	// the input order across batches.
	f := embServe(t, embAnswer)
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = strings.Repeat("x", i)
	}
	for _, batch := range []int{1, 3, 4, 10, 64} {
		before := len(f.requests())
		cfg := httpx.EmbedderConfig{Endpoint: f.endpoint(), Dimensions: 3, BatchSize: batch, Internal: true}
		got, err := newEmbedder(t, cfg, embInternal(t, f)).Embed(context.Background(), texts)
		if err != nil {
			t.Fatalf("batch %d: %v", batch, err)
		}
		for i, v := range got {
			if v[0] != float32(i) || v[1] != float32(i)+0.5 {
				t.Fatalf("batch %d: text %d got %v", batch, i, v)
			}
		}
		if n, want := len(f.requests())-before, (len(texts)+batch-1)/batch; n != want {
			t.Fatalf("batch %d: %d requests, want %d", batch, n, want)
		}
	}
}

func TestHTTPEmbedderErrorsNeverLeak(t *testing.T) {
	// A hostile or careless endpoint echoes everything it got: the key, the
	// texts and the URL, in an error status and in a 200 that is not JSON
	// the embedder accepts.
	echo := func(status int) func(http.ResponseWriter, []string, int) {
		return func(w http.ResponseWriter, in []string, _ int) {
			w.WriteHeader(status)
			_, _ = fmt.Fprintf(w, `{"error":{"message":"bad key %s for %s at %s%s"},"data":[{"index":0,"embedding":["%s"]}]}`,
				embKey, strings.Join(in, ","), embHost, embPath, embKey)
		}
	}
	for _, tc := range []struct {
		status int
		kind   httpx.EmbedErrorKind
	}{
		{http.StatusUnauthorized, httpx.EmbedStatus},
		{http.StatusInternalServerError, httpx.EmbedStatus},
		{http.StatusOK, httpx.EmbedMalformed},
	} {
		f := embServe(t, echo(tc.status))
		cfg := httpx.EmbedderConfig{Endpoint: f.endpoint(), APIKey: embKey, Dimensions: 3, Internal: true}
		_, err := newEmbedder(t, cfg, embInternal(t, f)).Embed(context.Background(), []string{"one " + embTextCanary})
		ee := wantEmbedErr(t, err, tc.kind)
		if tc.kind == httpx.EmbedStatus && ee.Status != tc.status {
			t.Errorf("status %d, want %d", ee.Status, tc.status)
		}
	}

	// A transport failure: the underlying error names the URL; ours does not.
	f := embServe(t, embAnswer)
	egress := embInternal(t, f)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadPort := embPortOf(t, dead.URL)
	dead.Close()
	deadCfg := httpx.EmbedderConfig{Endpoint: "http://" + embHost + ":" + strconv.Itoa(deadPort) + embPath, APIKey: embKey, Dimensions: 3, Internal: true}
	deadEgress := embEgress(t, httpx.Config{InternalHosts: []string{embHost + ":" + strconv.Itoa(deadPort)}})
	_, err := newEmbedder(t, deadCfg, deadEgress).Embed(context.Background(), []string{embTextCanary})
	if ee := wantEmbedErr(t, err, httpx.EmbedEgress); ee.Reason != ports.EgressConnect {
		t.Fatalf("reason %q", ee.Reason)
	}

	// A refusal before any request.
	cfg := httpx.EmbedderConfig{Endpoint: f.endpoint(), APIKey: embKey, Dimensions: 3, Internal: false}
	_, err = newEmbedder(t, cfg, egress).Embed(context.Background(), []string{embTextCanary})
	wantEmbedErr(t, err, httpx.EmbedEgress)

	// Configuration errors.
	for i, bad := range []httpx.EmbedderConfig{
		{Endpoint: "ftp://" + embHost + embPath, APIKey: embKey, Dimensions: 3},
		{Endpoint: "http://user:" + embKey + "@" + embHost + embPath, Dimensions: 3},
		{Endpoint: f.endpoint(), APIKey: embKey + "\r\nX-Injected: 1", Dimensions: 3},
		{Endpoint: f.endpoint() + "\n", APIKey: embKey, Dimensions: 3},
		{Endpoint: f.endpoint(), APIKey: embKey, Dimensions: 0},
	} {
		_, err := httpx.NewHTTPEmbedder(bad, egress)
		if err == nil {
			t.Fatalf("config %d accepted", i)
		}
		assertNoLeak(t, err)
	}
}

// recordingEgress captures the request the embedder hands the egress port.
type recordingEgress struct {
	mu   sync.Mutex
	reqs []ports.FetchRequest
	resp ports.FetchResponse
	err  error
}

func (r *recordingEgress) Fetch(_ context.Context, req ports.FetchRequest) (ports.FetchResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	return r.resp, r.err
}

func TestHTTPEmbedderFetchRequest(t *testing.T) {
	rec := &recordingEgress{resp: ports.FetchResponse{Status: 200, Body: []byte(`{"data":[{"index":0,"embedding":[1,2]}]}`)}}
	cfg := httpx.EmbedderConfig{
		Endpoint: "https://api.example.com/v1/embeddings", APIKey: embKey, Dimensions: 2,
		RequestDimensions: true, MaxResponseBytes: 12345, Timeout: 7 * time.Second, Internal: true,
	}
	if _, err := newEmbedder(t, cfg, rec).Embed(context.Background(), []string{"q"}); err != nil {
		t.Fatal(err)
	}
	req := rec.reqs[0]
	if req.Method != http.MethodPost || req.URL != cfg.Endpoint || req.MaxRedirects != 0 ||
		req.MaxBytes != 12345 || req.Timeout != 7*time.Second || !req.Internal {
		t.Fatalf("request %+v", req)
	}
	if req.Headers["Authorization"] != "Bearer "+embKey || len(req.Headers) != 3 {
		t.Fatalf("headers %v", req.Headers)
	}
	var body map[string]any
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	// No model configured: none sent. Dimensions requested: sent.
	if _, ok := body["model"]; ok || body["dimensions"] != float64(2) || len(body) != 2 {
		t.Fatalf("body %s", req.Body)
	}

	// Defaults, no key: no Authorization header at all.
	rec.reqs = nil
	h := newEmbedder(t, httpx.EmbedderConfig{Endpoint: cfg.Endpoint, Dimensions: 2}, rec)
	if _, err := h.Embed(context.Background(), []string{"q"}); err != nil {
		t.Fatal(err)
	}
	req = rec.reqs[0]
	if req.MaxBytes != httpx.DefaultEmbeddingMaxResponseBytes || req.Timeout != httpx.DefaultEmbeddingTimeout || req.Internal {
		t.Fatalf("defaults %+v", req)
	}
	if _, ok := req.Headers["Authorization"]; ok {
		t.Fatal("an Authorization header without a key")
	}

	// An egress that fails with something other than an EgressError still
	// yields a clean EmbedError.
	rec.err = errors.New("boom at " + embHost + " with " + embKey)
	_, err := h.Embed(context.Background(), []string{"q"})
	wantEmbedErr(t, err, httpx.EmbedEgress)
}

func TestHTTPEmbedderLimits(t *testing.T) {
	rec := &recordingEgress{resp: ports.FetchResponse{Status: 200, Body: []byte(`{"data":[]}`)}}
	cfg := httpx.EmbedderConfig{Endpoint: "https://api.example.com/v1/embeddings", Dimensions: 2, MaxTexts: 3}
	h := newEmbedder(t, cfg, rec)

	_, err := h.Embed(context.Background(), []string{"a", "b", "c", embTextCanary})
	wantEmbedErr(t, err, httpx.EmbedTooManyTexts)

	got, err := h.Embed(context.Background(), nil)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("no texts: %v %v", got, err)
	}

	// The request cap: refused before encoding when the raw texts exceed
	// it, after encoding when escaping pushes the body over it, and sent
	// when the body fits.
	small := cfg
	small.MaxRequestBytes = 200
	hs := newEmbedder(t, small, rec)
	_, err = hs.Embed(context.Background(), []string{embTextCanary + strings.Repeat("x", 200)})
	wantEmbedErr(t, err, httpx.EmbedRequestTooLarge)
	_, err = hs.Embed(context.Background(), []string{strings.Repeat("<", 40)}) // 40 raw, 240 as \u003c
	wantEmbedErr(t, err, httpx.EmbedRequestTooLarge)
	if len(rec.reqs) != 0 {
		t.Fatalf("%d requests sent for refused calls", len(rec.reqs))
	}
	_, _ = hs.Embed(context.Background(), []string{strings.Repeat("x", 150)})
	if len(rec.reqs) != 1 || len(rec.reqs[0].Body) > 200 {
		t.Fatalf("a request under the cap was not sent as is: %d", len(rec.reqs))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestNewHTTPEmbedderValidates(t *testing.T) {
	rec := &recordingEgress{}
	ok := httpx.EmbedderConfig{Endpoint: "https://api.example.com/v1/embeddings", Dimensions: 1536}
	if _, err := httpx.NewHTTPEmbedder(ok, rec); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	if _, err := httpx.NewHTTPEmbedder(ok, nil); err == nil {
		t.Error("nil egress accepted")
	}
	for name, mutate := range map[string]func(*httpx.EmbedderConfig){
		"no endpoint":        func(c *httpx.EmbedderConfig) { c.Endpoint = "" },
		"relative endpoint":  func(c *httpx.EmbedderConfig) { c.Endpoint = "/v1/embeddings" },
		"port out of range":  func(c *httpx.EmbedderConfig) { c.Endpoint = "https://api.example.com:70000/" },
		"zero dimensions":    func(c *httpx.EmbedderConfig) { c.Dimensions = 0 },
		"too wide":           func(c *httpx.EmbedderConfig) { c.Dimensions = httpx.MaxEmbeddingDimensions + 1 },
		"negative batch":     func(c *httpx.EmbedderConfig) { c.BatchSize = -1 },
		"negative max texts": func(c *httpx.EmbedderConfig) { c.MaxTexts = -1 },
		"negative cap":       func(c *httpx.EmbedderConfig) { c.MaxResponseBytes = -1 },
		"negative request":   func(c *httpx.EmbedderConfig) { c.MaxRequestBytes = -1 },
		"negative timeout":   func(c *httpx.EmbedderConfig) { c.Timeout = -time.Second },
		"key with a newline": func(c *httpx.EmbedderConfig) { c.APIKey = "k\nX: y" },
	} {
		cfg := ok
		mutate(&cfg)
		if _, err := httpx.NewHTTPEmbedder(cfg, rec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestInternalEndpoint(t *testing.T) {
	list := []string{"LLM.Local:11434", "[::1]:8080", "models.internal:80"}
	cases := []struct {
		endpoint string
		want     bool
	}{
		{"http://llm.local:11434/v1/embeddings", true},
		{"http://LLM.LOCAL.:11434/v1/embeddings", true},
		{"http://[::1]:8080/v1/embeddings", true},
		{"http://models.internal/v1/embeddings", true}, // default port 80
		{"https://models.internal/v1/embeddings", false},
		{"http://llm.local:11435/v1/embeddings", false},
		{"http://llm.local/v1/embeddings", false},
		{"http://127.0.0.1:11434/v1/embeddings", false}, // same address, other name
		{"http://user@llm.local:11434/", false},
		{"not a url", false},
	}
	for _, tc := range cases {
		if got := httpx.InternalEndpoint(tc.endpoint, list); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.endpoint, got, tc.want)
		}
	}
	if httpx.InternalEndpoint("http://llm.local:11434/", nil) {
		t.Error("an empty list made an endpoint internal")
	}
}

func TestHTTPEmbedderConcurrentUse(t *testing.T) {
	f := embServe(t, embAnswer)
	cfg := httpx.EmbedderConfig{Endpoint: f.endpoint(), APIKey: embKey, Dimensions: 3, BatchSize: 2, Internal: true}
	h := newEmbedder(t, cfg, embInternal(t, f))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			texts := []string{strings.Repeat("x", g), "y", strings.Repeat("x", g+1)}
			got, err := h.Embed(context.Background(), texts)
			if err == nil && (got[0][1] != float32(g)+0.5 || got[2][1] != float32(g+1)+0.5) {
				err = fmt.Errorf("goroutine %d: %v", g, got)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestHTTPEmbedderFormatsWithoutSecrets(t *testing.T) {
	cfg := httpx.EmbedderConfig{Endpoint: "http://" + embHost + embPath + "?key=" + embKey, Model: "m", APIKey: embKey, Dimensions: 3}
	h := newEmbedder(t, cfg, &recordingEgress{})
	for _, v := range []any{cfg, &cfg, h} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			out := fmt.Sprintf(verb, v)
			for _, l := range []string{embKey, embHost, "CANARYPATH"} {
				if strings.Contains(out, l) {
					t.Fatalf("%s of %T leaks %q: %s", verb, v, l, out)
				}
			}
			if !strings.Contains(out, "Dimensions:3") {
				t.Fatalf("%s of %T lost the settings: %s", verb, v, out)
			}
		}
	}
}
