package telemetry

import (
	"context"
	"io"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
)

func BenchmarkNoopStartEnd(b *testing.B) {
	tracer := noopTracer{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, span := tracer.Start(ctx, ports.ComponentTool, "calculate", nil)
		_ = span.TraceID()
		span.End(ports.StatusOK, "")
	}
}

func BenchmarkNoopStartEndTraceparent(b *testing.B) {
	tracer := noopTracer{}
	ctx := context.Background()
	carrier := ports.TraceCarrier{TraceparentKey: callerTraceparent}
	b.ReportAllocs()
	for b.Loop() {
		_, span := tracer.Start(ctx, ports.ComponentTool, "calculate", carrier)
		_ = span.TraceID()
		span.End(ports.StatusOK, "")
	}
}

func BenchmarkNoopRecordCall(b *testing.B) {
	m := nop.Metrics{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		m.RecordCall(ctx, ports.ComponentTool, "calculate", ports.StatusOK, "", time.Millisecond)
	}
}

func BenchmarkAuditRecord(b *testing.B) {
	sink := NewAuditSink(io.Discard)
	ctx := context.Background()
	rec := ports.AuditRecord{
		Time: time.Now(), Subject: "alice", Kind: ports.ComponentTool, Name: "calculate",
		ArgShapes: map[string]string{"expression": "string(12)", "precision": "number"},
		Status:    ports.StatusOK, Latency: 1500 * time.Microsecond, TraceID: callerTraceID,
	}
	b.ReportAllocs()
	for b.Loop() {
		sink.Record(ctx, rec)
	}
}

// BenchmarkSDKStartEnd is the cost of a recorded span (no exporter), for
// comparison with the no-op path.
func BenchmarkSDKStartEnd(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tracer := otelTracer{tracer: tp.Tracer(InstrumentationName)}
	ctx := context.Background()
	carrier := ports.TraceCarrier{TraceparentKey: callerTraceparent}
	b.ReportAllocs()
	for b.Loop() {
		_, span := tracer.Start(ctx, ports.ComponentTool, "calculate", carrier)
		_ = span.TraceID()
		span.End(ports.StatusOK, "")
	}
}

// BenchmarkGuardedCallNoopTelemetry is one tool call through the whole
// guard chain with telemetry off and the audit line discarded.
func BenchmarkGuardedCallNoopTelemetry(b *testing.B) {
	tel, err := Setup(context.Background(), Config{})
	if err != nil {
		b.Fatal(err)
	}
	app := newProbeApp(b, NewAuditSink(io.Discard), tel.Tracer(), tel.Metrics())
	call := probeCalls()[0]
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		call.run(ctx, app)
	}
}
