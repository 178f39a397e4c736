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

	"github.com/arrowhead-go/arrowhead/ports"
)

// Metric instrument names.
const (
	MetricCalls    = "arrowhead.calls"
	MetricDuration = "arrowhead.call.duration"
)

// DurationBuckets are the histogram boundaries in seconds: the SDK's default
// boundaries are sized for milliseconds, which would put every call in the
// first bucket. These are OpenTelemetry's recommended request-duration
// boundaries.
var DurationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// noopMetrics is the metrics sink when export is off.
type noopMetrics struct{}

var _ ports.Metrics = noopMetrics{}

func (noopMetrics) RecordCall(context.Context, ports.ComponentKind, string, string, time.Duration) {}

// otelMetrics counts calls and records their duration by component, name
// and status. It is safe for concurrent use.
type otelMetrics struct {
	calls    metric.Int64Counter
	duration metric.Float64Histogram
}

var _ ports.Metrics = (*otelMetrics)(nil)

func newOTelMetrics(m metric.Meter) (*otelMetrics, error) {
	calls, err := m.Int64Counter(MetricCalls,
		metric.WithDescription("Guarded calls by component, name and status."),
		metric.WithUnit("{call}"),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: creating %s: %w", MetricCalls, err)
	}
	duration, err := m.Float64Histogram(MetricDuration,
		metric.WithDescription("Duration of guarded calls, admission through the audit line."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(DurationBuckets...),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: creating %s: %w", MetricDuration, err)
	}
	return &otelMetrics{calls: calls, duration: duration}, nil
}

// RecordCall adds one call and its duration.
func (m *otelMetrics) RecordCall(ctx context.Context, kind ports.ComponentKind, name, status string, elapsed time.Duration) {
	attrs := metric.WithAttributeSet(attribute.NewSet(
		attribute.String(AttrComponent, string(kind)),
		attribute.String(AttrName, name),
		attribute.String(AttrStatus, statusValue(status)),
	))
	m.calls.Add(ctx, 1, attrs)
	m.duration.Record(ctx, elapsed.Seconds(), attrs)
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
