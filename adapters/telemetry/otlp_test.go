package telemetry

import (
	"bytes"
	"encoding/hex"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
	logpb "go.opentelemetry.io/proto/otlp/logs/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.uber.org/zap"

	"github.com/arrowhead-go/arrowhead/adapters/telemetry/telemetrytest"
)

var attrMap = telemetrytest.AttrMap

// TestOTLPExportEndToEnd runs the probe calls through the guard chain with
// export on, the audit sink and an operator logger bridged to the exported
// log provider, against an in-process collector mounted under a path
// prefix, and checks what arrives after Shutdown.
func TestOTLPExportEndToEnd(t *testing.T) {
	col := &telemetrytest.Collector{}
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
	var audit, operator syncBuffer
	app := newProbeApp(t, NewAuditSink(&audit, WithLoggerProvider(tel.LoggerProvider())), tel.Tracer(), tel.Metrics())
	logger, err := NewLogger(&operator, "info", WithLoggerProvider(tel.LoggerProvider()))
	if err != nil {
		t.Fatal(err)
	}
	calls := probeCalls()
	for _, c := range calls {
		c.run(ctx, app, traceOpt())
	}
	// An operator line inside a span, and one outside any.
	spanCtx, span := tel.tp.Tracer(InstrumentationName, trace.WithInstrumentationVersion("1.2.3")).Start(ctx, "operator")
	logger.InfoContext(spanCtx, "draining", zap.String("reason", "signal"))
	span.End()
	logger.Info("drained")
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatalf("second Shutdown = %v", err)
	}

	reqs := col.Requests()
	var spans []*tracepb.Span
	var sawTraces, sawMetrics, sawLogs bool
	var calls64, durations, refusals uint64
	for _, r := range reqs {
		if r.Path != "/otlp"+TracesPath && r.Path != "/otlp"+MetricsPath && r.Path != "/otlp"+LogsPath {
			t.Errorf("export posted to %q", r.Path)
		}
		if got := r.Header.Get("x-api-key"); got != "key one" {
			t.Errorf("x-api-key = %q", got)
		}
		if got := r.Header.Get("x-tenant"); got != "t1" {
			t.Errorf("x-tenant = %q", got)
		}
		if bytes.Contains(r.Body, []byte(canary)) || bytes.Contains(r.Body, []byte("CANARY")) {
			t.Errorf("the canary reached the collector on %s", r.Path)
		}
		if r.Logs != nil {
			sawLogs = true
			for _, rl := range r.Logs.GetResourceLogs() {
				if res := attrMap(rl.GetResource().GetAttributes()); res["service.name"] != "arrowhead-e2e" {
					t.Errorf("log resource = %v", res)
				}
			}
		}
		if r.Traces != nil {
			sawTraces = true
			for _, rs := range r.Traces.GetResourceSpans() {
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
		if r.Metrics != nil {
			sawMetrics = true
			for _, rm := range r.Metrics.GetResourceMetrics() {
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
								checkDurationAttrs(t, attrMap(dp.GetAttributes()))
								if !slices.Equal(dp.GetExplicitBounds(), DurationBuckets) {
									t.Errorf("bounds = %v", dp.GetExplicitBounds())
								}
								durations += dp.GetCount()
							}
						case MetricRefusals:
							for _, dp := range m.GetSum().GetDataPoints() {
								refusals += uint64(dp.GetAsInt())
							}
						}
					}
				}
			}
		}
	}
	if !sawTraces || !sawMetrics || !sawLogs {
		t.Fatalf("collector saw traces=%v metrics=%v logs=%v in %d requests", sawTraces, sawMetrics, sawLogs, len(reqs))
	}
	if calls64 != uint64(len(calls)) || durations != uint64(len(calls)) || refusals != uint64(len(calls)-1) {
		t.Errorf("metrics counted %d calls, %d durations and %d refusals, want %d, %d and %d", calls64, durations, refusals, len(calls), len(calls), len(calls)-1)
	}

	// One server span per call, each a child of the caller's span, and the
	// operator's span.
	spans = slices.DeleteFunc(spans, func(s *tracepb.Span) bool { return s.GetName() == "operator" })
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
		if want := wantSpanName(c.kind, c.comp); s.GetName() != want {
			t.Errorf("%s: span name = %q, want %q", c.name, s.GetName(), want)
		}
		attrs := attrMap(s.GetAttributes())
		if attrs[AttrComponent] != string(c.kind) || attrs[AttrName] != c.comp || attrs[AttrStatus] != c.status || attrs[AttrRefusal] != c.refusal ||
			attrs["error.type"] != wantErrorType(c.kind, c.status) || attrs["mcp.method.name"] == "" {
			t.Errorf("%s: span attributes = %v", c.name, attrs)
		}
		wantCode := tracepb.Status_STATUS_CODE_UNSET
		switch {
		case c.status == "ok":
			wantCode = tracepb.Status_STATUS_CODE_OK
		case wantErrorType(c.kind, c.status) != "":
			wantCode = tracepb.Status_STATUS_CODE_ERROR
		}
		if s.GetStatus().GetCode() != wantCode {
			t.Errorf("%s: span status = %v, want %v", c.name, s.GetStatus().GetCode(), wantCode)
		}
	}

	checkExportedLogs(t, col.LogRecords(), calls, byID, span.SpanContext())
}

// checkExportedLogs checks the exported log records: one audit record per
// call, in the caller's trace and naming the call's span, then the operator
// lines, the one logged inside a span carrying its ids.
func checkExportedLogs(t *testing.T, records []*logpb.LogRecord, calls []probeCall, spans map[string]*tracepb.Span, operatorSpan trace.SpanContext) {
	t.Helper()
	var audits, operator []*logpb.LogRecord
	for _, r := range records {
		if r.GetBody().GetStringValue() == AuditMessage {
			audits = append(audits, r)
		} else {
			operator = append(operator, r)
		}
	}
	if len(audits) != len(calls) {
		t.Fatalf("exported %d audit records for %d calls", len(audits), len(calls))
	}
	for i, r := range audits {
		attrs := attrMap(r.GetAttributes())
		if hex.EncodeToString(r.GetTraceId()) != callerTraceID || attrs[FieldTraceID] != callerTraceID {
			t.Errorf("%s: audit record trace id = %x, attribute %q", calls[i].name, r.GetTraceId(), attrs[FieldTraceID])
		}
		if s := spans[hex.EncodeToString(r.GetSpanId())]; s == nil || s.GetName() != wantSpanName(calls[i].kind, calls[i].comp) {
			t.Errorf("%s: audit record span id %x names no span of the call", calls[i].name, r.GetSpanId())
		}
		if attrs[FieldName] != calls[i].comp || attrs[FieldStatus] != calls[i].status {
			t.Errorf("%s: audit record attributes = %v", calls[i].name, attrs)
		}
		wantSeverity := logpb.SeverityNumber_SEVERITY_NUMBER_INFO
		if calls[i].status == "error" {
			wantSeverity = logpb.SeverityNumber_SEVERITY_NUMBER_ERROR
		}
		if r.GetSeverityNumber() != wantSeverity {
			t.Errorf("%s: audit record severity = %v", calls[i].name, r.GetSeverityNumber())
		}
	}
	if len(operator) != 2 {
		t.Fatalf("exported %d operator records, want 2", len(operator))
	}
	in, out := operator[0], operator[1]
	if in.GetBody().GetStringValue() != "draining" || attrMap(in.GetAttributes())["reason"] != "signal" {
		t.Errorf("operator record = %v", in)
	}
	if hex.EncodeToString(in.GetTraceId()) != operatorSpan.TraceID().String() || hex.EncodeToString(in.GetSpanId()) != operatorSpan.SpanID().String() {
		t.Errorf("operator record ids = %x/%x, want the span's %s/%s", in.GetTraceId(), in.GetSpanId(), operatorSpan.TraceID(), operatorSpan.SpanID())
	}
	if out.GetBody().GetStringValue() != "drained" || len(out.GetTraceId()) != 0 || len(out.GetSpanId()) != 0 {
		t.Errorf("operator record outside a span = %v", out)
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

// checkDurationAttrs checks a data point of mcp.server.operation.duration:
// the method always, and only the conventions' low-cardinality attributes.
func checkDurationAttrs(t *testing.T, attrs map[string]string) {
	t.Helper()
	if attrs["mcp.method.name"] == "" {
		t.Errorf("%s data point without mcp.method.name: %v", MetricDuration, attrs)
	}
	for k := range attrs {
		switch k {
		case "mcp.method.name", "gen_ai.tool.name", "gen_ai.prompt.name", "error.type", "mcp.protocol.version":
		default:
			t.Errorf("%s attribute %s = %q", MetricDuration, k, attrs[k])
		}
	}
}
