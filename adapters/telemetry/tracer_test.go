package telemetry

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
)

func TestNoopTracerJoinsCallerTrace(t *testing.T) {
	tel, err := Setup(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Enabled() {
		t.Fatal("telemetry enabled without an endpoint")
	}
	tracer := tel.Tracer()
	inCaller := trace.ContextWithRemoteSpanContext(context.Background(), remoteCaller(t))

	cases := []struct {
		name    string
		ctx     context.Context
		carrier ports.TraceCarrier
		want    string
	}{
		{"no carrier", context.Background(), nil, ""},
		{"empty carrier", context.Background(), ports.TraceCarrier{}, ""},
		{"traceparent", context.Background(), ports.TraceCarrier{TraceparentKey: callerTraceparent}, callerTraceID},
		{"traceparent with tracestate", context.Background(), ports.TraceCarrier{TraceparentKey: callerTraceparent, TracestateKey: "vendor=opaque"}, callerTraceID},
		{"header-cased key", context.Background(), ports.TraceCarrier{"Traceparent": callerTraceparent}, callerTraceID},
		{"not sampled", context.Background(), ports.TraceCarrier{TraceparentKey: "00-" + callerTraceID + "-" + callerSpanID + "-00"}, callerTraceID},
		{"malformed traceparent", context.Background(), ports.TraceCarrier{TraceparentKey: "00-" + canary + "-01"}, ""},
		{"all-zero trace id", context.Background(), ports.TraceCarrier{TraceparentKey: "00-00000000000000000000000000000000-" + callerSpanID + "-01"}, ""},
		{"span already in context", inCaller, nil, callerTraceID},
		{"carrier wins over context", inCaller, ports.TraceCarrier{TraceparentKey: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, "0af7651916cd43dd8448eb211c80319c"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, span := tracer.Start(tc.ctx, ports.ComponentTool, "calculate", tc.carrier)
			if got := span.TraceID(); got != tc.want {
				t.Errorf("TraceID = %q, want %q", got, tc.want)
			}
			sc := trace.SpanContextFromContext(ctx)
			if tc.want == "" {
				if sc.IsValid() {
					t.Errorf("context carries a span context %v for an untraced call", sc)
				}
			} else if sc.TraceID().String() != tc.want || !sc.IsRemote() {
				t.Errorf("context span = %v, want the caller's remote span in trace %s", sc, tc.want)
			}
			span.End(ports.StatusOK, "")
		})
	}
}

func TestNoopTracerAuditCarriesCallerTrace(t *testing.T) {
	tel, err := Setup(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	app := newProbeApp(t, NewAuditSink(&buf), tel.Tracer(), tel.Metrics())
	probeCalls()[0].run(context.Background(), app, traceOpt())
	l := lines(t, buf.Bytes())[0]
	if l[FieldTraceID] != callerTraceID {
		t.Errorf("trace_id = %v, want the caller's %s", l[FieldTraceID], callerTraceID)
	}
	// With export off Arrowhead records no span of its own; the caller's
	// span id is not ours to report.
	if _, has := l[FieldSpanID]; has {
		t.Errorf("span_id = %v with tracing off", l[FieldSpanID])
	}
}

func TestSDKTracerSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tracer := otelTracer{tracer: tp.Tracer(InstrumentationName)}

	cases := []struct {
		name       string
		kind       ports.ComponentKind
		comp       string
		carrier    ports.TraceCarrier
		status     string
		refusal    string
		wantCode   codes.Code
		wantDesc   string
		wantRefuse string
	}{
		{"ok joins caller", ports.ComponentTool, "calculate", ports.TraceCarrier{TraceparentKey: callerTraceparent}, ports.StatusOK, "", codes.Ok, "", ""},
		{"refused", ports.ComponentResource, "doc", nil, ports.StatusRefused, "authorization", codes.Error, "authorization", "authorization"},
		{"refused completion", ports.ComponentCompletion, "prompt:summarize", nil, ports.StatusRefused, "rate_limited", codes.Unset, "", "rate_limited"},
		{"error", ports.ComponentPrompt, "summarize", nil, ports.StatusError, "internal", codes.Error, "internal", "internal"},
		{"odd refusal text is not recorded", ports.ComponentTool, "calculate", nil, ports.StatusError, "open /etc/" + canary + ": denied", codes.Error, RefusalOther, RefusalOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			ctx, span := tracer.Start(context.Background(), tc.kind, tc.comp, tc.carrier)
			own := trace.SpanContextFromContext(ctx)
			if !own.IsValid() || own.IsRemote() {
				t.Fatalf("context does not carry the new span: %v", own)
			}
			if span.TraceID() != own.TraceID().String() {
				t.Errorf("TraceID = %s, context trace = %s", span.TraceID(), own.TraceID())
			}
			span.End(tc.status, tc.refusal)

			ended := rec.Ended()
			if len(ended) != 1 {
				t.Fatalf("%d spans ended, want 1", len(ended))
			}
			s := ended[0]
			if want := wantSpanName(tc.kind, tc.comp); s.Name() != want {
				t.Errorf("name = %q, want %q", s.Name(), want)
			}
			if s.SpanKind() != trace.SpanKindServer {
				t.Errorf("kind = %v, want server", s.SpanKind())
			}
			if tc.carrier != nil {
				if s.SpanContext().TraceID().String() != callerTraceID || s.Parent().SpanID().String() != callerSpanID || !s.Parent().IsRemote() {
					t.Errorf("span %v is not a child of the caller's span", s.Parent())
				}
			} else if s.Parent().IsValid() {
				t.Errorf("root call has parent %v", s.Parent())
			}
			if s.Status().Code != tc.wantCode || s.Status().Description != tc.wantDesc {
				t.Errorf("status = %+v, want %v %q", s.Status(), tc.wantCode, tc.wantDesc)
			}
			want := map[attribute.Key]string{AttrComponent: string(tc.kind), AttrName: tc.comp, AttrStatus: tc.status,
				"mcp.method.name": strings.Fields(wantSpanName(tc.kind, tc.comp))[0]}
			if tc.wantRefuse != "" {
				want[AttrRefusal] = tc.wantRefuse
			}
			if et := wantErrorType(tc.kind, tc.status); et != "" {
				want["error.type"] = et
			}
			switch tc.kind {
			case ports.ComponentTool:
				want["gen_ai.tool.name"] = tc.comp
			case ports.ComponentPrompt:
				want["gen_ai.prompt.name"] = tc.comp
			}
			got := map[attribute.Key]string{}
			for _, kv := range s.Attributes() {
				got[kv.Key] = kv.Value.Emit()
			}
			if len(got) != len(want) {
				t.Errorf("attributes = %v, want %v", got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("attribute %s = %q, want %q", k, got[k], v)
				}
			}
			if len(s.Events()) != 0 {
				t.Errorf("span has events %v", s.Events())
			}
		})
	}
}

func TestSignalURLs(t *testing.T) {
	cases := []struct {
		endpoint    string
		traces      string
		metrics     string
		wantInvalid bool
	}{
		{"http://collector:4318", "http://collector:4318/v1/traces", "http://collector:4318/v1/metrics", false},
		{"http://collector:4318/", "http://collector:4318/v1/traces", "http://collector:4318/v1/metrics", false},
		{"https://otlp.example.com/otlp", "https://otlp.example.com/otlp/v1/traces", "https://otlp.example.com/otlp/v1/metrics", false},
		{"https://otlp.example.com/otlp//", "https://otlp.example.com/otlp/v1/traces", "https://otlp.example.com/otlp/v1/metrics", false},
		{"http://[::1]:4318", "http://[::1]:4318/v1/traces", "http://[::1]:4318/v1/metrics", false},
		{"collector:4318", "", "", true},
		{"grpc://collector:4317", "", "", true},
		{"http://", "", "", true},
		{"http://:4318", "", "", true},
		{"http://user:hunter2@collector:4318", "", "", true},
		{"http://collector:4318?token=x", "", "", true},
		{"http://collector:4318#frag", "", "", true},
		{"http://collector:99999", "", "", true},
		{"http://collector:0", "", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.endpoint, func(t *testing.T) {
			urls, err := signalURLs(tc.endpoint)
			if tc.wantInvalid {
				if err != ErrInvalidEndpoint {
					t.Fatalf("err = %v, want ErrInvalidEndpoint", err)
				}
				return
			}
			logs := strings.TrimSuffix(tc.traces, TracesPath) + LogsPath
			if err != nil || urls.traces != tc.traces || urls.metrics != tc.metrics || urls.logs != logs {
				t.Fatalf("= %+v, %v; want %q, %q, %q", urls, err, tc.traces, tc.metrics, logs)
			}
		})
	}
}

func TestParseHeaders(t *testing.T) {
	cases := []struct {
		name    string
		raw     string
		want    map[string]string
		wantErr bool
	}{
		{"empty", "", map[string]string{}, false},
		{"pairs", "api-key=abc123,x-tenant=t1", map[string]string{"api-key": "abc123", "x-tenant": "t1"}, false},
		{"spaces and empty items", " api-key = abc123 ,, x-tenant=t1,", map[string]string{"api-key": "abc123", "x-tenant": "t1"}, false},
		{"percent-decoded", "Authorization=Bearer%20tok%3Den", map[string]string{"Authorization": "Bearer tok=en"}, false},
		{"value keeps '='", "Authorization=Basic dXNlcjpwYXNz==", map[string]string{"Authorization": "Basic dXNlcjpwYXNz=="}, false},
		{"invalid escape kept", "k=100%", map[string]string{"k": "100%"}, false},
		{"empty value", "x-flag=", map[string]string{"x-flag": ""}, false},
		{"no '='", "api-key", nil, true},
		{"empty key", "=abc", nil, true},
		{"key with space", "api key=abc", nil, true},
		{"CRLF injection", "k=v%0d%0aX-Evil: 1", nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseHeaders(tc.raw)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("accepted %q as %v", tc.raw, got)
				}
				// The error never repeats a header value.
				if bytes.Contains([]byte(err.Error()), []byte("abc")) || bytes.Contains([]byte(err.Error()), []byte("Evil")) {
					t.Errorf("error echoes the input: %v", err)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("= %v, %v; want %v", got, err, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestSetupRefusesBadConfigWithoutEchoingIt(t *testing.T) {
	cases := []Config{
		{OTLPEndpoint: "http://user:" + canary + "@collector:4318"},
		{OTLPEndpoint: "http://collector:4318", OTLPHeaders: "api-key"},
		{OTLPEndpoint: "http://collector:4318", OTLPHeaders: "k=" + canary + "%0a"},
	}
	for _, cfg := range cases {
		tel, err := Setup(context.Background(), cfg)
		if err == nil {
			_ = tel.Shutdown(context.Background())
			t.Errorf("Setup accepted %+v", cfg)
			continue
		}
		if bytes.Contains([]byte(err.Error()), []byte("CANARY")) {
			t.Errorf("error echoes the configuration: %v", err)
		}
	}
}

func TestSetupDisabled(t *testing.T) {
	for _, endpoint := range []string{"", "   "} {
		tel, err := Setup(context.Background(), Config{OTLPEndpoint: endpoint, OTLPHeaders: "ignored"})
		if err != nil {
			t.Fatalf("Setup(%q) = %v", endpoint, err)
		}
		if tel.Enabled() {
			t.Errorf("Setup(%q) enabled export", endpoint)
		}
		if _, ok := tel.Tracer().(noopTracer); !ok {
			t.Errorf("Tracer = %T, want the no-op tracer", tel.Tracer())
		}
		if _, ok := tel.Metrics().(nop.Metrics); !ok {
			t.Errorf("Metrics = %T, want the no-op metrics", tel.Metrics())
		}
		if err := tel.ForceFlush(context.Background()); err != nil {
			t.Errorf("ForceFlush = %v", err)
		}
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown = %v", err)
		}
	}
}

func TestNoopPathAllocations(t *testing.T) {
	tel, err := Setup(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	tracer, metrics := tel.Tracer(), tel.Metrics()
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() {
		_, span := tracer.Start(ctx, ports.ComponentTool, "calculate", nil)
		_ = span.TraceID()
		span.End(ports.StatusOK, "")
	}); n != 0 {
		t.Errorf("untraced Start/TraceID/End allocates %v times per call, want 0", n)
	}
	if n := testing.AllocsPerRun(1000, func() {
		metrics.RecordCall(ctx, ports.ComponentTool, "calculate", ports.StatusOK, "", 1)
	}); n != 0 {
		t.Errorf("RecordCall allocates %v times per call, want 0", n)
	}
}
