package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Metric instrument names. MetricDuration is OpenTelemetry's MCP server
// histogram (semantic conventions 1.41), made by its mcpconv helper;
// the two counters are Arrowhead's own.
const (
	// MetricCalls counts guarded calls by component, name and status.
	MetricCalls = "arrowhead.calls"
	// MetricRefusals counts refused and failed calls by component, name
	// and refusal kind: the guard stage that refused (disabled for the
	// kill switch, rate_limited, unauthenticated, unknown for a missing
	// scope), authorization, validation, or the component's own kind
	// (failed, internal, not_found, ...).
	MetricRefusals = "arrowhead.refusals"
	// MetricDuration is mcp.server.operation.duration, in seconds, by
	// mcp.method.name, gen_ai.tool.name or gen_ai.prompt.name,
	// mcp.protocol.version and error.type.
	MetricDuration = "mcp.server.operation.duration"
	// MetricCanaryTrips counts canary trips by the component whose
	// arguments or egress carried the canary.
	MetricCanaryTrips = "arrowhead.canary.trips"
)

// DurationBuckets are the histogram boundaries in seconds, those the MCP
// semantic conventions advise for mcp.server.operation.duration.
var DurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// otelMetrics counts calls and refusals and records their duration. It is
// safe for concurrent use.
type otelMetrics struct {
	calls    metric.Int64Counter
	refusals metric.Int64Counter
	trips    metric.Int64Counter
	duration mcpconv.ServerOperationDuration
}

var (
	_ ports.Metrics     = (*otelMetrics)(nil)
	_ ports.TripMetrics = (*otelMetrics)(nil)
)

func newOTelMetrics(m metric.Meter) (*otelMetrics, error) {
	calls, err := m.Int64Counter(MetricCalls,
		metric.WithDescription("Guarded calls by component, name and status."),
		metric.WithUnit("{call}"),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: creating %s: %w", MetricCalls, err)
	}
	refusals, err := m.Int64Counter(MetricRefusals,
		metric.WithDescription("Refused or failed guarded calls by component, name and refusal kind."),
		metric.WithUnit("{call}"),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: creating %s: %w", MetricRefusals, err)
	}
	trips, err := m.Int64Counter(MetricCanaryTrips,
		metric.WithDescription("Canary trips by the component whose arguments or egress carried the canary."),
		metric.WithUnit("{trip}"),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: creating %s: %w", MetricCanaryTrips, err)
	}
	duration, err := mcpconv.NewServerOperationDuration(m, metric.WithExplicitBucketBoundaries(DurationBuckets...))
	if err != nil {
		return nil, fmt.Errorf("telemetry: creating %s: %w", MetricDuration, err)
	}
	return &otelMetrics{calls: calls, refusals: refusals, trips: trips, duration: duration}, nil
}

// RecordCanaryTrip adds one canary trip.
func (m *otelMetrics) RecordCanaryTrip(ctx context.Context, component string) {
	m.trips.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String(AttrName, component))))
}

// RecordCall adds one call, its refusal if any, and its duration.
func (m *otelMetrics) RecordCall(ctx context.Context, kind ports.ComponentKind, name, status, refusal string, elapsed time.Duration) {
	m.calls.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
		attribute.String(AttrComponent, string(kind)),
		attribute.String(AttrName, name),
		attribute.String(AttrStatus, statusValue(status)),
	)))
	if status != ports.StatusOK {
		m.refusals.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
			attribute.String(AttrComponent, string(kind)),
			attribute.String(AttrName, name),
			attribute.String(AttrRefusal, refusalValue(refusal)),
		)))
	}
	op := operationOf(kind, name)
	attrs := make([]attribute.KeyValue, 0, 3)
	if op.target.Key != "" {
		attrs = append(attrs, op.target)
	}
	if meta := ports.CallMetaFrom(ctx); meta != nil && meta.ProtocolVersion != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(meta.ProtocolVersion))
	}
	if et := errorType(kind, status); et != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(et))
	}
	m.duration.Record(ctx, elapsed.Seconds(), mcpconv.MethodNameAttr(op.method), attrs...)
}

// newPrometheus returns a metric reader backed by the OpenTelemetry
// Prometheus exporter and the handler serving what it holds in the
// Prometheus text format. The registry is private: it serves the call
// metrics (and target_info, the resource), not the process-wide default
// registry's collectors.
func newPrometheus() (sdkmetric.Reader, http.Handler, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, nil, fmt.Errorf("telemetry: creating the Prometheus exporter: %w", err)
	}
	return exp, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil
}
