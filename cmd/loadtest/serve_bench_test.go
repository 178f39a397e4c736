package main

// BenchmarkServeGuardedVsBare measures what -compare measures, the
// guarded calculate against the same arithmetic bare on mcp-go, but on the
// server side alone: the request a real client sent, replayed straight
// into each HTTP handler, with no network and no client in the process.
// It is steadier than -compare on a shared machine, so a change to the
// chain can be seen in it; -compare remains the measure of the target.
//
//	go test ./cmd/loadtest -run '^$' -bench ServeGuardedVsBare -benchtime 20000x
//
// Each side's median per request, their ratio, and the allocations of one
// request each are reported.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	mcpadapter "github.com/arrowhead-go/arrowhead/adapters/mcp"
)

func BenchmarkServeGuardedVsBare(b *testing.B) {
	guarded, stop, err := guardedHandler(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(stop)
	type side struct {
		h      http.Handler
		path   string
		header http.Header
		body   []byte
		took   []time.Duration
	}
	sides := []*side{{h: guarded, path: mcpadapter.EndpointPath}, {h: bareHandler(), path: bareEndpointPath}}
	for _, s := range sides {
		s.header, s.body = recordCall(b, s.h, s.path)
	}
	serve := func(s *side) {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1"+s.path, bytes.NewReader(s.body))
		r.Header = s.header.Clone()
		w := httptest.NewRecorder()
		s.h.ServeHTTP(w, r)
		if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"text":"14"`)) {
			b.Fatalf("%s answered %d %s", s.path, w.Code, w.Body)
		}
	}
	allocs := make([]float64, len(sides))
	for i, s := range sides {
		allocs[i] = testing.AllocsPerRun(200, func() { serve(s) })
	}
	b.ResetTimer()
	for b.Loop() {
		for _, s := range sides {
			t0 := time.Now()
			serve(s)
			s.took = append(s.took, time.Since(t0))
		}
	}
	b.StopTimer()
	median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	g, bare := median(sides[0].took), median(sides[1].took)
	b.ReportMetric(float64(g.Nanoseconds()), "guarded-p50-ns")
	b.ReportMetric(float64(bare.Nanoseconds()), "bare-p50-ns")
	b.ReportMetric(float64(g)/float64(bare), "ratio")
	b.ReportMetric(allocs[0], "guarded-allocs")
	b.ReportMetric(allocs[1], "bare-allocs")
}

// recordCall drives h with the load test's own client until it has sent a
// tools/call, and returns that request's headers and body.
func recordCall(b *testing.B, h http.Handler, path string) (http.Header, []byte) {
	var (
		mu     sync.Mutex
		header http.Header
		body   []byte
	)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if bytes.Contains(data, []byte(`"tools/call"`)) {
			mu.Lock()
			header, body = r.Header.Clone(), data
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	o := options{clients: 1, duration: 100 * time.Millisecond, tool: "calculate", expr: "2 * (3 + 4)"}
	if _, err := drive(context.Background(), ts.URL+path, o, nil); err != nil {
		b.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if body == nil {
		b.Fatal("the client sent no tools/call")
	}
	return header, body
}
