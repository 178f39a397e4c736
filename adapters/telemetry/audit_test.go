package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/log/embedded"
	"go.opentelemetry.io/otel/log/global"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/arrowhead-go/arrowhead/ports"
)

func TestAuditLineShape(t *testing.T) {
	// A non-UTC zone, so the test sees the conversion.
	start := time.Date(2026, 11, 30, 9, 15, 4, 123456789, time.FixedZone("CET", 3600))
	cases := []struct {
		name string
		rec  ports.AuditRecord
		want map[string]any
	}{
		{
			name: "ok",
			rec: ports.AuditRecord{
				Time: start, Subject: "alice", Kind: ports.ComponentTool, Name: "calculate",
				ArgShapes: map[string]string{"expression": "string(12)", "precision": "number"},
				Status:    ports.StatusOK, Latency: 1500 * time.Microsecond, TraceID: callerTraceID,
			},
			want: map[string]any{
				FieldTime: "2026-11-30T08:15:04.123456789Z", FieldLevel: "info", FieldMsg: AuditMessage,
				FieldSubject: "alice", FieldComponent: "tool", FieldName: "calculate",
				FieldArgs:   map[string]any{"expression": "string(12)", "precision": "number"},
				FieldStatus: "ok", FieldLatencyMS: json.Number("1.5"), FieldTraceID: callerTraceID,
			},
		},
		{
			name: "refused",
			rec: ports.AuditRecord{
				Time: start, Subject: "anonymous", Kind: ports.ComponentResource, Name: "unknown",
				ArgShapes: map[string]string{"scheme": "doc", "uri": "string(40)"},
				Status:    ports.StatusRefused, Refusal: "unauthenticated", Latency: 250 * time.Microsecond,
			},
			want: map[string]any{
				FieldTime: "2026-11-30T08:15:04.123456789Z", FieldLevel: "info", FieldMsg: AuditMessage,
				FieldSubject: "anonymous", FieldComponent: "resource", FieldName: "unknown",
				FieldArgs:   map[string]any{"scheme": "doc", "uri": "string(40)"},
				FieldStatus: "refused", FieldRefusal: "unauthenticated", FieldLatencyMS: json.Number("0.25"),
				FieldTraceID: "",
			},
		},
		{
			name: "error",
			rec: ports.AuditRecord{
				Time: start, Subject: "bob", Kind: ports.ComponentPrompt, Name: "summarize",
				Status: ports.StatusError, Refusal: "internal", Latency: 2 * time.Second, Cause: "*pgconn.PgError",
			},
			want: map[string]any{
				FieldTime: "2026-11-30T08:15:04.123456789Z", FieldLevel: "error", FieldMsg: AuditMessage,
				FieldSubject: "bob", FieldComponent: "prompt", FieldName: "summarize",
				FieldArgs:   map[string]any{},
				FieldStatus: "error", FieldRefusal: "internal", FieldLatencyMS: json.Number("2000"),
				FieldTraceID: "", FieldCause: "*pgconn.PgError",
			},
		},
		{
			name: "kill-switch throw with detail",
			rec: ports.AuditRecord{
				Time: start, Subject: "ops", Kind: ports.ComponentKillSwitch, Name: "throw", Status: ports.StatusOK,
				Detail: map[string]string{"rule": "9f2c", "target": "tool:safe_fetch", "caller": "alice@example.com",
					"reason": "line\nbreak\x00", "bad key!": "dropped", "long": strings.Repeat("x", 300)},
			},
			want: map[string]any{
				FieldTime: "2026-11-30T08:15:04.123456789Z", FieldLevel: "info", FieldMsg: AuditMessage,
				FieldSubject: "ops", FieldComponent: "killswitch", FieldName: "throw",
				FieldArgs: map[string]any{}, FieldStatus: "ok", FieldLatencyMS: json.Number("0"), FieldTraceID: "",
				FieldDetail: map[string]any{"rule": "9f2c", "target": "tool:safe_fetch", "caller": "alice@example.com",
					"reason": ShapeRedacted, "long": ShapeRedacted},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			NewAuditSink(&buf).Record(context.Background(), tc.rec)
			got := lines(t, buf.Bytes())
			if len(got) != 1 {
				t.Fatalf("got %d lines, want 1", len(got))
			}
			line := got[0]
			gotKeys, wantKeys := keysOf(line), keysOf(tc.want)
			slices.Sort(gotKeys)
			slices.Sort(wantKeys)
			if !slices.Equal(gotKeys, wantKeys) {
				t.Fatalf("fields = %v, want %v", gotKeys, wantKeys)
			}
			for k, want := range tc.want {
				if !equalJSON(line[k], want) {
					t.Errorf("%s = %#v, want %#v", k, line[k], want)
				}
			}
			if first := firstKeys(t, buf.Bytes(), 3); !slices.Equal(first, []string{FieldTime, FieldLevel, FieldMsg}) {
				t.Errorf("line starts with %v, want time, level, msg", first)
			}
		})
	}
}

// firstKeys returns the first n keys of the JSON object in line, in order.
func firstKeys(t *testing.T, line []byte, n int) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(line))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %v", err)
	}
	var keys []string
	for len(keys) < n && d.More() {
		tok, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func TestAuditOneLinePerRecord(t *testing.T) {
	// Identical records in a burst: a sampling logger would drop most of
	// them. Every one must be written, whole, on its own line.
	const n = 400
	var buf syncBuffer
	sink := NewAuditSink(&buf)
	rec := ports.AuditRecord{
		Time: time.Now(), Subject: "alice", Kind: ports.ComponentTool, Name: "calculate",
		ArgShapes: map[string]string{"expression": "string(3)"}, Status: ports.StatusOK,
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { sink.Record(context.Background(), rec) })
	}
	wg.Wait()
	got := lines(t, buf.Bytes())
	if len(got) != n {
		t.Fatalf("got %d lines for %d records", len(got), n)
	}
	for i, l := range got {
		if l[FieldMsg] != AuditMessage || l[FieldName] != "calculate" {
			t.Fatalf("line %d = %v", i, l)
		}
	}
}

func TestAuditArgsBounds(t *testing.T) {
	// The core computes shapes; these records break that contract and must
	// still not write the values.
	cases := []struct {
		name   string
		shapes map[string]string
		want   map[string]any
	}{
		{"value in place of a shape", map[string]string{"query": canary, "limit": "number"},
			map[string]any{"query": ShapeRedacted, "limit": "number"}},
		{"long lower-case value", map[string]string{"q": strings.Repeat("a", maxArgShapeLen+1)},
			map[string]any{"q": ShapeRedacted}},
		{"value with separators", map[string]string{"path": "etc/passwd"},
			map[string]any{"path": ShapeRedacted}},
		{"value as a key", map[string]string{canary + " =x": "string(3)", "text": "string(3)"},
			map[string]any{"text": "string(3)", ArgsDroppedKey: "1"}},
		{"every core shape passes", map[string]string{
			"a": "string(12)", "b": "array(3)", "c": "object(2)", "d": "number", "e": "boolean", "f": "null",
			"g": "empty", "h": "string(?)", "_arguments": "invalid(40)", "_undeclared": "2", "scheme": "svn+ssh",
		}, map[string]any{
			"a": "string(12)", "b": "array(3)", "c": "object(2)", "d": "number", "e": "boolean", "f": "null",
			"g": "empty", "h": "string(?)", "_arguments": "invalid(40)", "_undeclared": "2", "scheme": "svn+ssh",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			NewAuditSink(&buf).Record(context.Background(), ports.AuditRecord{
				Kind: ports.ComponentTool, Name: "t", ArgShapes: tc.shapes, Status: ports.StatusOK,
			})
			if bytes.Contains(buf.Bytes(), []byte("CANARY")) {
				t.Fatalf("canary written: %s", buf.Bytes())
			}
			got := lines(t, buf.Bytes())
			if len(got) != 1 || !equalJSON(got[0][FieldArgs], tc.want) {
				t.Fatalf("args = %v, want %v", got[0][FieldArgs], tc.want)
			}
		})
	}
}

// TestAuditCanaryThroughTheChain runs realistic calls through the real
// guard chain (shapes computed by the core from arguments holding the
// canary) and checks every byte the sink wrote.
func TestAuditCanaryThroughTheChain(t *testing.T) {
	var buf syncBuffer
	tel, err := Setup(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	app := newProbeApp(t, NewAuditSink(&buf), tel.Tracer(), tel.Metrics())
	calls := probeCalls()
	for _, c := range calls {
		c.run(context.Background(), app)
	}
	out := buf.Bytes()
	if bytes.Contains(out, []byte(canary)) || bytes.Contains(out, []byte("CANARY")) {
		t.Fatalf("the canary reached the audit log:\n%s", out)
	}
	got := lines(t, out)
	if len(got) != len(calls) {
		t.Fatalf("got %d lines for %d calls:\n%s", len(got), len(calls), out)
	}
	for i, c := range calls {
		l := got[i]
		if l[FieldComponent] != string(c.kind) || l[FieldName] != c.comp || l[FieldStatus] != c.status {
			t.Errorf("%s: line = %v", c.name, l)
		}
		if r, _ := l[FieldRefusal].(string); r != c.refusal {
			t.Errorf("%s: refusal = %q, want %q", c.name, r, c.refusal)
		}
		if l[FieldSubject] != "alice" {
			t.Errorf("%s: subject = %v", c.name, l[FieldSubject])
		}
	}
	// The error and panic lines name the cause's type, not its text.
	if got[1][FieldCause] == nil || got[2][FieldCause] == nil {
		t.Errorf("internal errors carry no cause: %v / %v", got[1], got[2])
	}
	// A tool line shows argument shapes.
	if !equalJSON(got[0][FieldArgs], map[string]any{
		"text": "string(" + strconv.Itoa(len(canary)) + ")",
		"note": "string(" + strconv.Itoa(len("token "+canary)) + ")",
	}) {
		t.Errorf("args = %v", got[0][FieldArgs])
	}
}

func TestAuditTraceFromContext(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tracer := otelTracer{tracer: tp.Tracer("test")}

	ctx, span := tracer.Start(context.Background(), ports.ComponentTool, "calculate",
		ports.TraceCarrier{TraceparentKey: callerTraceparent})
	ownSpanID := trace.SpanContextFromContext(ctx).SpanID().String()
	if ownSpanID == callerSpanID {
		t.Fatal("the server span reused the caller's span id")
	}

	cases := []struct {
		name        string
		ctx         context.Context
		recTraceID  string
		wantTraceID string
		wantSpanID  string
	}{
		{"record and context agree", ctx, span.TraceID(), callerTraceID, ownSpanID},
		{"record without trace id", ctx, "", callerTraceID, ownSpanID},
		{"malformed record trace id", ctx, "not-hex", callerTraceID, ownSpanID},
		{"no span in context", context.Background(), "", "", ""},
		{"caller's remote span only", trace.ContextWithRemoteSpanContext(context.Background(), remoteCaller(t)), "", callerTraceID, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			NewAuditSink(&buf).Record(tc.ctx, ports.AuditRecord{Kind: ports.ComponentTool, Name: "calculate", Status: ports.StatusOK, TraceID: tc.recTraceID})
			l := lines(t, buf.Bytes())[0]
			if l[FieldTraceID] != tc.wantTraceID {
				t.Errorf("trace_id = %v, want %q", l[FieldTraceID], tc.wantTraceID)
			}
			gotSpan, has := l[FieldSpanID]
			if (tc.wantSpanID == "") == has || (has && gotSpan != tc.wantSpanID) {
				t.Errorf("span_id = %v (present %v), want %q", gotSpan, has, tc.wantSpanID)
			}
		})
	}
	span.End(ports.StatusOK, "")
}

func remoteCaller(t *testing.T) trace.SpanContext {
	t.Helper()
	tid, err := trace.TraceIDFromHex(callerTraceID)
	if err != nil {
		t.Fatal(err)
	}
	sid, err := trace.SpanIDFromHex(callerSpanID)
	if err != nil {
		t.Fatal(err)
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
}

// recordingLogs is an OpenTelemetry LoggerProvider that keeps what otelzap
// bridges to it.
type recordingLogs struct {
	embedded.LoggerProvider
	mu      sync.Mutex
	records []emitted
}

type emitted struct {
	ctx    context.Context
	record log.Record
}

func (p *recordingLogs) Logger(string, ...log.LoggerOption) log.Logger { return recordingLogger{p: p} }

func (p *recordingLogs) all() []emitted {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.records)
}

type recordingLogger struct {
	embedded.Logger
	p *recordingLogs
}

func (l recordingLogger) Emit(ctx context.Context, r log.Record) {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	l.p.records = append(l.p.records, emitted{ctx: ctx, record: r.Clone()})
}

func (recordingLogger) Enabled(context.Context, log.EnabledParameters) bool { return true }

func TestAuditLogBridge(t *testing.T) {
	tel, err := Setup(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	calls := probeCalls()

	t.Run("with a provider", func(t *testing.T) {
		logs := &recordingLogs{}
		var buf syncBuffer
		app := newProbeApp(t, NewAuditSink(&buf, WithLoggerProvider(logs)), tel.Tracer(), tel.Metrics())
		for _, c := range calls {
			c.run(context.Background(), app, traceOpt())
		}
		got := logs.all()
		if len(got) != len(calls) {
			t.Fatalf("bridged %d records for %d calls", len(got), len(calls))
		}
		for i, e := range got {
			if e.record.Body().AsString() != AuditMessage {
				t.Errorf("record %d body = %v", i, e.record.Body())
			}
			// The log SDK correlates by the context it is given.
			if id := trace.SpanContextFromContext(e.ctx).TraceID().String(); id != callerTraceID {
				t.Errorf("record %d context trace id = %s", i, id)
			}
			attrs := map[string]string{}
			e.record.WalkAttributes(func(kv log.KeyValue) bool {
				attrs[kv.Key] = kv.Value.String()
				if strings.Contains(kv.Value.String(), "CANARY") || strings.Contains(kv.Key, "CANARY") {
					t.Errorf("record %d attribute %s carries the canary", i, kv.Key)
				}
				return true
			})
			if attrs[FieldTraceID] != callerTraceID || attrs[FieldName] != calls[i].comp {
				t.Errorf("record %d attributes = %v", i, attrs)
			}
			var args map[string]string
			if err := json.Unmarshal([]byte(attrs[FieldArgs]), &args); err != nil {
				t.Errorf("record %d args %q is not the shapes' JSON: %v", i, attrs[FieldArgs], err)
			}
		}
	})

	t.Run("without a provider nothing is bridged", func(t *testing.T) {
		// Even a global provider is not used unless asked for.
		logs := &recordingLogs{}
		prev := global.GetLoggerProvider()
		global.SetLoggerProvider(logs)
		t.Cleanup(func() { global.SetLoggerProvider(prev) })
		var buf syncBuffer
		app := newProbeApp(t, NewAuditSink(&buf), tel.Tracer(), tel.Metrics())
		for _, c := range calls {
			c.run(context.Background(), app, traceOpt())
		}
		if n := len(logs.all()); n != 0 {
			t.Fatalf("bridged %d records without WithLoggerProvider", n)
		}
		if n := len(lines(t, buf.Bytes())); n != len(calls) {
			t.Fatalf("wrote %d lines for %d calls", n, len(calls))
		}
	})
}

// syncRecorder is a writer whose Sync returns err.
type syncRecorder struct {
	bytes.Buffer
	err   error
	syncs int
}

func (s *syncRecorder) Sync() error { s.syncs++; return s.err }

func TestSync(t *testing.T) {
	broken := errors.New("disk gone")
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"synced", nil, nil},
		{"terminal (EINVAL)", &fs.PathError{Op: "sync", Path: "/dev/stdout", Err: syscall.EINVAL}, nil},
		{"terminal (ENOTTY)", &fs.PathError{Op: "sync", Path: "/dev/stdout", Err: syscall.ENOTTY}, nil},
		{"real failure", broken, broken},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &syncRecorder{err: tc.err}
			sink := NewAuditSink(w)
			if err := sink.Sync(); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("audit Sync = %v, want %v", err, tc.want)
			}
			logger, err := NewLogger(w, "info")
			if err != nil {
				t.Fatal(err)
			}
			if err := logger.Sync(); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("logger Sync = %v, want %v", err, tc.want)
			}
			if w.syncs != 2 {
				t.Errorf("writer synced %d times, want 2", w.syncs)
			}
		})
	}
	// A writer that cannot sync is fine.
	if err := NewAuditSink(&bytes.Buffer{}).Sync(); err != nil {
		t.Errorf("Sync on a buffer = %v", err)
	}
}

// TestShapesEncoderMatchesJSON: the audit line's args are written without
// reflection, byte for byte what encoding/json writes, and anything that
// is not a plain shapeMap still goes through encoding/json.
func TestShapesEncoderMatchesJSON(t *testing.T) {
	for _, m := range []shapeMap{
		{},
		{"expression": "string(12)"},
		{"z": "number", "a": "bool", "m.x-y_z": "array(3)", ArgsDroppedKey: "2", "q": ShapeRedacted},
		{"k": `quo"te`, "b": "back\\slash", "u": "é", "c": "\x01"},
	} {
		var got bytes.Buffer
		if err := newShapesEncoder(&got).Encode(m); err != nil {
			t.Fatal(err)
		}
		want, err := json.Marshal(map[string]string(m))
		if err != nil {
			t.Fatal(err)
		}
		if g := strings.TrimSuffix(got.String(), "\n"); g != string(want) {
			t.Errorf("Encode(%v) = %s, want %s", m, g, want)
		}
	}
	var got bytes.Buffer
	if err := newShapesEncoder(&got).Encode([]int{1, 2}); err != nil || got.String() != "[1,2]\n" {
		t.Errorf("Encode([]int) = %q, %v", got.String(), err)
	}
}
