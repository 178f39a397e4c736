package telemetry

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
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

// operation is a call in the MCP semantic conventions' terms: the method
// that reaches the component kind, the span name, and the attribute naming
// the target (gen_ai.tool.name or gen_ai.prompt.name), if any.
type operation struct {
	method string
	span   string
	target attribute.KeyValue
}

// unknownName is the name the core gives a component the catalog does not
// hold (the caller's own name for it is never recorded).
const unknownName = "unknown"

// operationOf maps a guarded component to its MCP operation. Span names
// are "{mcp.method.name} {target}" where the target is a tool or prompt
// name, and the bare method otherwise: a resource URI is not a
// low-cardinality name.
func operationOf(kind ports.ComponentKind, name string) operation {
	switch kind {
	case ports.ComponentTool:
		return operation{method: methodToolsCall, span: methodToolsCall + " " + name, target: semconv.GenAIToolName(name)}
	case ports.ComponentPrompt:
		return operation{method: methodPromptsGet, span: methodPromptsGet + " " + name, target: semconv.GenAIPromptName(name)}
	case ports.ComponentResource:
		return operation{method: methodResourcesRead, span: methodResourcesRead}
	case ports.ComponentCompletion:
		return operation{method: methodComplete, span: methodComplete}
	}
	return operation{method: string(kind), span: string(kind) + " " + name}
}

// MCP method names (mcp.method.name).
const (
	methodToolsCall     = "tools/call"
	methodPromptsGet    = "prompts/get"
	methodResourcesRead = "resources/read"
	methodComplete      = "completion/complete"
)

// Values of error.type. A tool's refusal or failure is a result with
// isError set; a resource's or prompt's is a JSON-RPC error, which mcp-go
// sends with the internal-error code; a completion's is an empty
// completion, no error at all.
const (
	ErrorTypeTool     = "tool_error"
	ErrorTypeJSONRPC  = "-32603"
	maxResourceURILen = 256
)

// errorType is the error.type of a call that ended with status, or "".
func errorType(kind ports.ComponentKind, status string) string {
	if status == ports.StatusOK {
		return ""
	}
	switch kind {
	case ports.ComponentTool:
		return ErrorTypeTool
	case ports.ComponentResource, ports.ComponentPrompt:
		return ErrorTypeJSONRPC
	case ports.ComponentCompletion:
		return ""
	}
	return RefusalOther
}

// Start opens a server span named after the MCP operation as a child of
// the caller's trace context (from the carrier, else from ctx), with the
// MCP semantic conventions' attributes and Arrowhead's component and name.
func (t otelTracer) Start(ctx context.Context, kind ports.ComponentKind, name string, c ports.TraceCarrier) (context.Context, ports.Span) {
	ctx = joinCaller(ctx, c)
	op := operationOf(kind, name)
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs,
		semconv.McpMethodNameKey.String(op.method),
		attribute.String(AttrComponent, string(kind)),
		attribute.String(AttrName, name),
	)
	if op.target.Key != "" {
		attrs = append(attrs, op.target)
	}
	if m := ports.CallMetaFrom(ctx); m != nil {
		if m.ProtocolVersion != "" {
			attrs = append(attrs, semconv.McpProtocolVersion(m.ProtocolVersion))
		}
		if m.RequestID != "" {
			attrs = append(attrs, semconv.JSONRPCRequestID(m.RequestID))
		}
		if m.SessionID != "" {
			attrs = append(attrs, semconv.McpSessionID(m.SessionID))
		}
		if kind == ports.ComponentResource && name != unknownName && m.ResourceURI != "" && len(m.ResourceURI) <= maxResourceURILen {
			// Only the URI of a resource the catalog holds: one no
			// template matches is the caller's invention.
			attrs = append(attrs, semconv.McpResourceURI(m.ResourceURI))
		}
	}
	ctx, s := t.tracer.Start(ctx, op.span, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return ctx, otelSpan{span: s, kind: kind}
}

// otelSpan adapts an SDK span to ports.Span.
type otelSpan struct {
	span trace.Span
	kind ports.ComponentKind
}

// TraceID returns the span's trace id (the caller's when it sent one).
func (s otelSpan) TraceID() string {
	if sc := s.span.SpanContext(); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}

// End records the status, the refusal kind and error.type and closes the
// span. A call the caller sees as an error (a tool result with isError, a
// JSON-RPC error) has status Error with the refusal kind as description,
// never an error text; a refused completion, which answers with no
// values, leaves the status unset.
func (s otelSpan) End(status, refusal string) {
	attrs := make([]attribute.KeyValue, 0, 3)
	attrs = append(attrs, attribute.String(AttrStatus, statusValue(status)))
	if refusal != "" {
		attrs = append(attrs, attribute.String(AttrRefusal, refusalValue(refusal)))
	}
	et := errorType(s.kind, status)
	if et != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(et))
	}
	s.span.SetAttributes(attrs...)
	switch {
	case status == ports.StatusOK:
		s.span.SetStatus(codes.Ok, "")
	case et != "":
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
