package telemetry

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an in-process OTLP/HTTP receiver that keeps every request.
type collector struct {
	mu       sync.Mutex
	requests []received
}

type received struct {
	path    string
	header  http.Header
	body    []byte
	traces  *coltracepb.ExportTraceServiceRequest
	metrics *colmetricpb.ExportMetricsServiceRequest
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, "bad gzip", http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	rec := received{path: r.URL.Path, header: r.Header.Clone(), body: raw}
	var resp proto.Message
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, TracesPath):
		rec.traces = &coltracepb.ExportTraceServiceRequest{}
		err = proto.Unmarshal(raw, rec.traces)
		resp = &coltracepb.ExportTraceServiceResponse{}
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, MetricsPath):
		rec.metrics = &colmetricpb.ExportMetricsServiceRequest{}
		err = proto.Unmarshal(raw, rec.metrics)
		resp = &colmetricpb.ExportMetricsServiceResponse{}
	}
	c.mu.Lock()
	c.requests = append(c.requests, rec)
	c.mu.Unlock()
	if resp == nil || err != nil {
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (c *collector) all() []received {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.requests)
}

func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	return m
}

// TestOTLPExportEndToEnd runs the probe calls through the guard chain with
// export on, against an in-process collector mounted under a path prefix,
// and checks what arrives after Shutdown.
func TestOTLPExportEndToEnd(t *testing.T) {
	col := &collector{}
	srv := httptest.NewServer(col)
	t.Cleanup(srv.Close)

	ctx := t.Context()
	tel, err := Setup(ctx, Config{
		ServiceName:  "arrowhead-e2e",
		OTLPEndpoint: srv.URL + "/otlp",
		OTLPHeaders:  "x-api-key=key%20one, x-tenant=t1",
		Version:      "1.2.3",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !tel.Enabled() {
		t.Fatal("export not enabled with an endpoint")
	}
	var audit syncBuffer
	app := newProbeApp(t, NewAuditSink(&audit), tel.Tracer(), tel.Metrics())
	calls := probeCalls()
	for _, c := range calls {
		c.run(ctx, app, traceOpt())
	}
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatalf("second Shutdown = %v", err)
	}

	reqs := col.all()
	var spans []*tracepb.Span
	var sawTraces, sawMetrics bool
	var calls64, durations uint64
	for _, r := range reqs {
		if r.path != "/otlp"+TracesPath && r.path != "/otlp"+MetricsPath {
			t.Errorf("export posted to %q", r.path)
		}
		if got := r.header.Get("x-api-key"); got != "key one" {
			t.Errorf("x-api-key = %q", got)
		}
		if got := r.header.Get("x-tenant"); got != "t1" {
			t.Errorf("x-tenant = %q", got)
		}
		if bytes.Contains(r.body, []byte(canary)) || bytes.Contains(r.body, []byte("CANARY")) {
			t.Errorf("the canary reached the collector on %s", r.path)
		}
		if r.traces != nil {
			sawTraces = true
			for _, rs := range r.traces.GetResourceSpans() {
				res := attrMap(rs.GetResource().GetAttributes())
				if res["service.name"] != "arrowhead-e2e" || res["service.version"] != "1.2.3" {
					t.Errorf("resource = %v", res)
				}
				for _, ss := range rs.GetScopeSpans() {
					if ss.GetScope().GetName() != InstrumentationName || ss.GetScope().GetVersion() != "1.2.3" {
						t.Errorf("scope = %v", ss.GetScope())
					}
					spans = append(spans, ss.GetSpans()...)
				}
			}
		}
		if r.metrics != nil {
			sawMetrics = true
			for _, rm := range r.metrics.GetResourceMetrics() {
				for _, sm := range rm.GetScopeMetrics() {
					for _, m := range sm.GetMetrics() {
						switch m.GetName() {
						case MetricCalls:
							for _, dp := range m.GetSum().GetDataPoints() {
								checkMetricAttrs(t, m.GetName(), attrMap(dp.GetAttributes()))
								calls64 += uint64(dp.GetAsInt())
							}
						case MetricDuration:
							if m.GetUnit() != "s" {
								t.Errorf("%s unit = %q, want s", m.GetName(), m.GetUnit())
							}
							for _, dp := range m.GetHistogram().GetDataPoints() {
								checkMetricAttrs(t, m.GetName(), attrMap(dp.GetAttributes()))
								if !slices.Equal(dp.GetExplicitBounds(), DurationBuckets) {
									t.Errorf("bounds = %v", dp.GetExplicitBounds())
								}
								durations += dp.GetCount()
							}
						}
					}
				}
			}
		}
	}
	if !sawTraces || !sawMetrics {
		t.Fatalf("collector saw traces=%v metrics=%v in %d requests", sawTraces, sawMetrics, len(reqs))
	}
	if calls64 != uint64(len(calls)) || durations != uint64(len(calls)) {
		t.Errorf("metrics counted %d calls and %d durations, want %d", calls64, durations, len(calls))
	}

	// One server span per call, each a child of the caller's span.
	if len(spans) != len(calls) {
		t.Fatalf("collector got %d spans for %d calls", len(spans), len(calls))
	}
	byID := map[string]*tracepb.Span{}
	for _, s := range spans {
		byID[hex.EncodeToString(s.GetSpanId())] = s
		if hex.EncodeToString(s.GetTraceId()) != callerTraceID || hex.EncodeToString(s.GetParentSpanId()) != callerSpanID {
			t.Errorf("span %q is not in the caller's trace under the caller's span", s.GetName())
		}
		if s.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("span %q kind = %v", s.GetName(), s.GetKind())
		}
		for k, v := range attrMap(s.GetAttributes()) {
			if strings.Contains(k+v, "CANARY") {
				t.Errorf("span %q attribute %s carries the canary", s.GetName(), k)
			}
		}
	}

	// Each audit line names the exported span of its call.
	auditLines := lines(t, audit.Bytes())
	if len(auditLines) != len(calls) {
		t.Fatalf("%d audit lines for %d calls", len(auditLines), len(calls))
	}
	for i, c := range calls {
		l := auditLines[i]
		if l[FieldTraceID] != callerTraceID {
			t.Errorf("%s: audit trace_id = %v", c.name, l[FieldTraceID])
		}
		id, _ := l[FieldSpanID].(string)
		s := byID[id]
		if s == nil {
			t.Errorf("%s: audit span_id %q matches no exported span", c.name, id)
			continue
		}
		if want := string(c.kind) + " " + c.comp; s.GetName() != want {
			t.Errorf("%s: span name = %q, want %q", c.name, s.GetName(), want)
		}
		attrs := attrMap(s.GetAttributes())
		if attrs[AttrComponent] != string(c.kind) || attrs[AttrName] != c.comp || attrs[AttrStatus] != c.status || attrs[AttrRefusal] != c.refusal {
			t.Errorf("%s: span attributes = %v", c.name, attrs)
		}
		wantCode := tracepb.Status_STATUS_CODE_UNSET
		switch c.status {
		case "ok":
			wantCode = tracepb.Status_STATUS_CODE_OK
		case "error":
			wantCode = tracepb.Status_STATUS_CODE_ERROR
		}
		if s.GetStatus().GetCode() != wantCode {
			t.Errorf("%s: span status = %v, want %v", c.name, s.GetStatus().GetCode(), wantCode)
		}
	}
}

func checkMetricAttrs(t *testing.T, metric string, attrs map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{AttrComponent, AttrName, AttrStatus}) {
		t.Errorf("%s attributes = %v, want component, name, status", metric, attrs)
	}
}
