package telemetry

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Attribute keys on spans and metric data points. They match the audit
// line's field names so one vocabulary pivots between the three signals.
const (
	AttrComponent = "component"
	AttrName      = "name"
	AttrStatus    = "status"
	AttrRefusal   = "refusal"
)

// Refusal kinds longer than this, or holding anything but [a-z0-9_-], are
// recorded as RefusalOther: the attribute takes a fixed vocabulary only.
const (
	maxRefusalLen = 64
	RefusalOther  = "other"
)

// W3C trace-context field names read from a ports.TraceCarrier.
const (
	TraceparentKey = "traceparent"
	TracestateKey  = "tracestate"
)

// propagator joins the caller's trace: W3C traceparent and tracestate only
// (no baggage, which would import caller-chosen key/values).
var propagator = propagation.TraceContext{}

// joinCaller returns ctx carrying the caller's remote span context when the
// carrier holds a valid traceparent; otherwise ctx unchanged.
func joinCaller(ctx context.Context, c ports.TraceCarrier) context.Context {
	if len(c) == 0 {
		return ctx
	}
	return propagator.Extract(ctx, carrier(c))
}

// carrier adapts a ports.TraceCarrier to the propagator. Get matches the key
// exactly first, then case-insensitively, so a carrier filled from HTTP
// headers in canonical form ("Traceparent") works too.
type carrier ports.TraceCarrier

func (c carrier) Get(key string) string {
	if v, ok := c[key]; ok {
		return v
	}
	for k, v := range c {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return ""
}

func (c carrier) Set(key, value string) { c[key] = value }

func (c carrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// noopTracer is the tracer when export is off. It records nothing and
// allocates nothing unless there is a trace id to report.
type noopTracer struct{}

var _ ports.Tracer = noopTracer{}

// Start joins the caller's trace context (see the package comment) and
// returns a span that only knows its trace id.
func (noopTracer) Start(ctx context.Context, _ ports.ComponentKind, _ string, c ports.TraceCarrier) (context.Context, ports.Span) {
	ctx = joinCaller(ctx, c)
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return ctx, joinedSpan{id: sc.TraceID()}
	}
	return ctx, noSpan{}
}

// noSpan is the span of an untraced call.
type noSpan struct{}

func (noSpan) TraceID() string    { return "" }
func (noSpan) End(string, string) {}

// joinedSpan is the span of a call whose caller is traced while Arrowhead's
// own export is off: it reports the caller's trace id and records nothing.
type joinedSpan struct{ id trace.TraceID }

func (s joinedSpan) TraceID() string  { return s.id.String() }
func (joinedSpan) End(string, string) {}

// otelTracer opens one SDK span per call.
type otelTracer struct{ tracer trace.Tracer }

var _ ports.Tracer = otelTracer{}

// Start opens a server span named "<kind> <name>" as a child of the caller's
// trace context (from the carrier, else from ctx).
func (t otelTracer) Start(ctx context.Context, kind ports.ComponentKind, name string, c ports.TraceCarrier) (context.Context, ports.Span) {
	ctx = joinCaller(ctx, c)
	ctx, s := t.tracer.Start(ctx, string(kind)+" "+name,
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String(AttrComponent, string(kind)),
			attribute.String(AttrName, name),
		),
	)
	return ctx, otelSpan{span: s}
}

// otelSpan adapts an SDK span to ports.Span.
type otelSpan struct{ span trace.Span }

// TraceID returns the span's trace id (the caller's when it sent one).
func (s otelSpan) TraceID() string {
	if sc := s.span.SpanContext(); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}

// End records the status and refusal kind and closes the span. A refusal
// leaves the span status unset (the server did what it should); an error
// sets Error with the refusal kind as its description, never an error text.
func (s otelSpan) End(status, refusal string) {
	attrs := make([]attribute.KeyValue, 0, 2)
	attrs = append(attrs, attribute.String(AttrStatus, statusValue(status)))
	if refusal != "" {
		attrs = append(attrs, attribute.String(AttrRefusal, refusalValue(refusal)))
	}
	s.span.SetAttributes(attrs...)
	switch status {
	case ports.StatusOK:
		s.span.SetStatus(codes.Ok, "")
	case ports.StatusError:
		desc := ""
		if refusal != "" {
			desc = refusalValue(refusal)
		}
		s.span.SetStatus(codes.Error, desc)
	}
	s.span.End()
}

// statusValue keeps the status attribute to the three known statuses.
func statusValue(status string) string {
	switch status {
	case ports.StatusOK, ports.StatusRefused, ports.StatusError:
		return status
	}
	return RefusalOther
}

// refusalValue keeps the refusal attribute to short lower-case tokens.
func refusalValue(refusal string) string {
	if refusal == "" || len(refusal) > maxRefusalLen {
		return RefusalOther
	}
	for _, c := range []byte(refusal) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return RefusalOther
		}
	}
	return refusal
}
