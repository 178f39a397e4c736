package telemetry

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
)

func TestNewLogger(t *testing.T) {
	var buf bytes.Buffer
	logger, err := NewLogger(&buf, "warn")
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("starting")
	logger.Warn("listening on loopback only")
	got := lines(t, buf.Bytes())
	if len(got) != 1 {
		t.Fatalf("got %d lines, want only the warning: %s", len(got), buf.Bytes())
	}
	l := got[0]
	if l[FieldLevel] != "warn" || l[FieldMsg] != "listening on loopback only" {
		t.Errorf("line = %v", l)
	}
	ts, _ := l[FieldTime].(string)
	if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasSuffix(ts, "Z") {
		t.Errorf("time = %q (%v), want RFC 3339 UTC", ts, err)
	}
	for _, k := range []string{"caller", FieldTraceID, FieldSpanID} {
		if _, has := l[k]; has {
			t.Errorf("line carries %s: %v", k, l)
		}
	}

	if _, err := NewLogger(&buf, "loud"); err == nil {
		t.Error("NewLogger accepted level \"loud\"")
	}
	buf.Reset()
	lg, err := NewLogger(&buf, "")
	if err != nil {
		t.Fatal(err)
	}
	lg.Debug("hidden")
	lg.Info("shown")
	if got := lines(t, buf.Bytes()); len(got) != 1 || got[0][FieldMsg] != "shown" {
		t.Errorf("empty level should mean info: %s", buf.Bytes())
	}
}

// TestLoggerTraceContext logs inside a local span, inside a caller's remote
// span context and outside any: the line names the span it was logged in.
func TestLoggerTraceContext(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	local, span := tp.Tracer("test").Start(context.Background(), "op")
	defer span.End()
	remote := trace.ContextWithRemoteSpanContext(context.Background(), remoteCaller(t))

	var buf bytes.Buffer
	logger, err := NewLogger(&buf, "debug")
	if err != nil {
		t.Fatal(err)
	}
	logger.DebugContext(local, "one")
	logger.InfoContext(remote, "two")
	logger.WarnContext(context.Background(), "three")
	logger.ErrorContext(local, "four", zap.String("event", "x"))
	got := lines(t, buf.Bytes())
	if len(got) != 4 {
		t.Fatalf("got %d lines: %s", len(got), buf.Bytes())
	}
	sc := span.SpanContext()
	want := []struct{ trace, span string }{
		{sc.TraceID().String(), sc.SpanID().String()},
		{callerTraceID, callerSpanID},
		{"", ""},
		{sc.TraceID().String(), sc.SpanID().String()},
	}
	for i, w := range want {
		tid, _ := got[i][FieldTraceID].(string)
		sid, _ := got[i][FieldSpanID].(string)
		if tid != w.trace || sid != w.span {
			t.Errorf("line %d ids = %q/%q, want %q/%q", i, tid, sid, w.trace, w.span)
		}
	}
	if got[3][FieldLevel] != "error" || got[3]["event"] != "x" {
		t.Errorf("line 4 = %v", got[3])
	}
}

// TestLoggerBridge checks what the operator logger hands to a log provider:
// every line at or above its level, with the context it was logged with;
// nothing from LocalOnly, nothing without a provider.
func TestLoggerBridge(t *testing.T) {
	logs := &recordingLogs{}
	var buf bytes.Buffer
	logger, err := NewLogger(&buf, "info", WithLoggerProvider(logs))
	if err != nil {
		t.Fatal(err)
	}
	remote := trace.ContextWithRemoteSpanContext(context.Background(), remoteCaller(t))
	logger.Debug("below the level")
	logger.InfoContext(remote, "serving", zap.String("transport", "stdio"))
	logger.Error("stopped")
	logger.LocalOnly().Warn("telemetry export error")

	got := logs.all()
	if len(got) != 2 {
		t.Fatalf("bridged %d records, want 2", len(got))
	}
	if got[0].record.Body().AsString() != "serving" || trace.SpanContextFromContext(got[0].ctx).TraceID().String() != callerTraceID {
		t.Errorf("record 0 = %v in trace %s", got[0].record.Body(), trace.SpanContextFromContext(got[0].ctx).TraceID())
	}
	attrs := map[string]string{}
	got[0].record.WalkAttributes(func(kv log.KeyValue) bool { attrs[kv.Key] = kv.Value.String(); return true })
	if attrs["transport"] != "stdio" || attrs[FieldTraceID] != callerTraceID {
		t.Errorf("record 0 attributes = %v", attrs)
	}
	if got[1].record.Body().AsString() != "stopped" || got[1].record.Severity() != log.SeverityError {
		t.Errorf("record 1 = %v at %v", got[1].record.Body(), got[1].record.Severity())
	}
	// The local-only line is still written.
	if n := len(lines(t, buf.Bytes())); n != 3 {
		t.Errorf("wrote %d lines, want 3: %s", n, buf.Bytes())
	}
}
