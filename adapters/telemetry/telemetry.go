// Package telemetry is Arrowhead's observability adapter: the audit sink
// (one JSON line per guarded call, on zap and otelzap), the operator logger,
// and the OpenTelemetry tracer, call metrics and log records exported over
// OTLP/HTTP.
//
// # Trace ids when export is off
//
// Without an OTLP endpoint, Setup builds no SDK, no exporter and no
// goroutine: the Tracer only reads the caller's W3C trace context. When the
// caller sent a valid traceparent (or the context already holds a span, as
// when a Go program embeds the core inside its own trace), the returned
// context carries that span context and Span.TraceID returns the caller's
// trace id, so the audit line can be joined with the caller's trace even
// though Arrowhead records no span of its own. With no trace context at all
// TraceID returns "".
//
// # What telemetry never carries
//
// Span and metric attributes are the component kind and name (a catalog
// name, or "unknown"), the call status and the refusal kind: values from
// fixed vocabularies. Argument values, URIs, subjects, tokens and error
// texts are never attributes, and the audit line carries argument shapes
// only. The caller's tracestate, when valid, is propagated as W3C Trace
// Context requires: it rides in the span context exported to the collector
// (bounded by the W3C grammar), never in an attribute or the audit line.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
)

// DefaultServiceName is the service.name used when Config.ServiceName is
// empty (the default of ARROWHEAD_OTEL_SERVICE_NAME).
const DefaultServiceName = "arrowhead"

// InstrumentationName is the instrumentation scope of Arrowhead's spans and
// metrics.
const InstrumentationName = "github.com/arrowhead-go/arrowhead/adapters/telemetry"

// Signal paths appended to the OTLP/HTTP base endpoint, as the OTLP
// exporter specification prescribes for OTEL_EXPORTER_OTLP_ENDPOINT.
const (
	TracesPath  = "/v1/traces"
	MetricsPath = "/v1/metrics"
	LogsPath    = "/v1/logs"
)

// Errors returned by Setup. Their text never repeats the configured
// endpoint or header values, which may carry credentials.
var (
	ErrInvalidEndpoint = errors.New("telemetry: the OTLP endpoint must be an http or https base URL without credentials, query or fragment")
	ErrInvalidHeaders  = errors.New("telemetry: the OTLP headers must be comma-separated key=value pairs")
)

// Config selects where telemetry goes. The zero value turns tracing, metrics
// and log export off.
type Config struct {
	// ServiceName is the resource's service.name; DefaultServiceName when
	// empty.
	ServiceName string
	// OTLPEndpoint is the collector's OTLP/HTTP base URL, for example
	// http://collector:4318. TracesPath, MetricsPath and LogsPath are
	// appended to its path. Empty means no export: tracing and metrics are
	// no-ops and LoggerProvider is nil.
	OTLPEndpoint string
	// OTLPHeaders are comma-separated key=value pairs sent with every
	// export (a collector API key, say). Keys and values are trimmed and
	// percent-decoded, as for OTEL_EXPORTER_OTLP_HEADERS.
	OTLPHeaders string
	// Version is the resource's service.version; omitted when empty.
	Version string
	// Prometheus keeps the call metrics for MetricsHandler, the Prometheus
	// text-format scrape endpoint, whether or not OTLP export is on.
	Prometheus bool
}

// Telemetry holds the tracer and metrics handed to the core, the log
// provider the audit and operator logs bridge to, the Prometheus scrape
// handler, and the providers behind them. It is safe for concurrent use.
type Telemetry struct {
	tracer  ports.Tracer
	metrics ports.Metrics

	// tp and lp are nil without an OTLP endpoint; mp is nil when neither
	// OTLP nor Prometheus is on; scrape is nil without Prometheus.
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	lp     *sdklog.LoggerProvider
	scrape http.Handler

	shutdownOnce sync.Once
	shutdownErr  error
}

// Setup builds the tracer, metrics and log provider for cfg. With no
// endpoint and no Prometheus it returns no-op implementations and starts
// nothing. With an endpoint it starts OTLP/HTTP trace, metric and log
// exporters, a batch span processor, a periodic metric reader and a batch
// log processor; with Prometheus the call metrics are also kept for
// MetricsHandler. Call Shutdown to flush and stop them.
//
// Settings not covered by Config (timeouts, compression, TLS roots) follow
// the standard OTEL_EXPORTER_OTLP_* variables; the endpoint and headers are
// always Config's.
func Setup(ctx context.Context, cfg Config) (*Telemetry, error) {
	t := &Telemetry{tracer: noopTracer{}, metrics: nop.Metrics{}}
	endpoint := strings.TrimSpace(cfg.OTLPEndpoint)
	if endpoint == "" && !cfg.Prometheus {
		return t, nil
	}
	res, err := newResource(cfg)
	if err != nil {
		return nil, err
	}
	readers := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if endpoint != "" {
		reader, err := t.startOTLP(ctx, cfg, endpoint, res)
		if err != nil {
			return nil, err
		}
		readers = append(readers, sdkmetric.WithReader(reader))
	}
	if cfg.Prometheus {
		reader, scrape, err := newPrometheus()
		if err != nil {
			return nil, errors.Join(err, t.Shutdown(ctx))
		}
		readers = append(readers, sdkmetric.WithReader(reader))
		t.scrape = scrape
	}
	t.mp = sdkmetric.NewMeterProvider(readers...)
	m, err := newOTelMetrics(t.mp.Meter(InstrumentationName, metric.WithInstrumentationVersion(cfg.Version)))
	if err != nil {
		return nil, errors.Join(err, t.Shutdown(ctx))
	}
	t.metrics = m
	return t, nil
}

// startOTLP starts the OTLP/HTTP trace and log pipelines on t and returns
// the periodic reader exporting metrics to the same collector.
func (t *Telemetry) startOTLP(ctx context.Context, cfg Config, endpoint string, res *resource.Resource) (sdkmetric.Reader, error) {
	urls, err := signalURLs(endpoint)
	if err != nil {
		return nil, err
	}
	headers, err := parseHeaders(cfg.OTLPHeaders)
	if err != nil {
		return nil, err
	}
	texp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL(urls.traces),
		otlptracehttp.WithHeaders(headers),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: creating the trace exporter: %w", err)
	}
	mexp, err := otlpmetrichttp.New(ctx,
		otlpmetrichttp.WithEndpointURL(urls.metrics),
		otlpmetrichttp.WithHeaders(headers),
	)
	if err != nil {
		// The trace exporter holds no goroutine until a provider uses it,
		// but shut it down so nothing lingers.
		return nil, errors.Join(fmt.Errorf("telemetry: creating the metric exporter: %w", err), texp.Shutdown(ctx))
	}
	lexp, err := otlploghttp.New(ctx,
		otlploghttp.WithEndpointURL(urls.logs),
		otlploghttp.WithHeaders(headers),
	)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("telemetry: creating the log exporter: %w", err), texp.Shutdown(ctx), mexp.Shutdown(ctx))
	}

	// The default sampler (parent-based, always sampling a root) honours the
	// caller's sampled flag, so a caller's unsampled trace stays unsampled
	// here too; calls without a trace context are always recorded.
	t.tp = sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(texp),
		sdktrace.WithResource(res),
	)
	t.tracer = otelTracer{tracer: t.tp.Tracer(InstrumentationName, trace.WithInstrumentationVersion(cfg.Version))}
	// Audit and operator lines are bridged by otelzap with the call's
	// context; the SDK copies the span's trace and span ids onto each record.
	t.lp = sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdklog.NewBatchProcessor(lexp)),
		sdklog.WithResource(res),
	)
	return sdkmetric.NewPeriodicReader(mexp), nil
}

// Tracer returns the tracer for core.Deps.
func (t *Telemetry) Tracer() ports.Tracer { return t.tracer }

// Metrics returns the call metrics for core.Deps.
func (t *Telemetry) Metrics() ports.Metrics { return t.metrics }

// LoggerProvider returns the provider exporting log records over OTLP, for
// WithLoggerProvider; nil without an OTLP endpoint.
func (t *Telemetry) LoggerProvider() log.LoggerProvider {
	if t.lp == nil {
		return nil
	}
	return t.lp
}

// MetricsHandler returns the Prometheus scrape handler (text exposition of
// the call metrics); nil unless Config.Prometheus was set. Serve it on its
// own listener, never beside the public endpoint.
func (t *Telemetry) MetricsHandler() http.Handler { return t.scrape }

// Enabled reports whether spans, metrics and log records are exported over
// OTLP.
func (t *Telemetry) Enabled() bool { return t.tp != nil }

// ForceFlush exports every finished span and log record and the current
// metrics now. It is a no-op when export is off.
func (t *Telemetry) ForceFlush(ctx context.Context) error {
	if t.tp == nil {
		return nil
	}
	return errors.Join(t.tp.ForceFlush(ctx), t.mp.ForceFlush(ctx), t.lp.ForceFlush(ctx))
}

// Shutdown flushes and stops the exporters. It honours ctx's deadline (a
// collector that does not answer is abandoned when ctx ends) and is safe to
// call more than once; later calls return the first call's result.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	t.shutdownOnce.Do(func() {
		var errs []error
		if t.tp != nil {
			errs = append(errs, t.tp.Shutdown(ctx), t.lp.Shutdown(ctx))
		}
		if t.mp != nil {
			errs = append(errs, t.mp.Shutdown(ctx))
		}
		t.shutdownErr = errors.Join(errs...)
	})
	return t.shutdownErr
}

// newResource describes this process: the SDK's defaults (telemetry.sdk.*,
// OTEL_RESOURCE_ATTRIBUTES) overridden by service.name and service.version.
func newResource(cfg Config) (*resource.Resource, error) {
	name := strings.TrimSpace(cfg.ServiceName)
	if name == "" {
		name = DefaultServiceName
	}
	attrs := []attribute.KeyValue{semconv.ServiceName(name)}
	if v := strings.TrimSpace(cfg.Version); v != "" {
		attrs = append(attrs, semconv.ServiceVersion(v))
	}
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL, attrs...))
	if err != nil {
		return nil, fmt.Errorf("telemetry: building the resource: %w", err)
	}
	return res, nil
}

// otlpURLs are the full signal URLs under one OTLP/HTTP base endpoint.
type otlpURLs struct{ traces, metrics, logs string }

// signalURLs joins the signal paths onto the base endpoint. The exporters'
// WithEndpointURL takes a full signal URL and posts to "/" when given a bare
// base URL, so the join is done here.
func signalURLs(endpoint string) (otlpURLs, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return otlpURLs{}, ErrInvalidEndpoint
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
		return otlpURLs{}, ErrInvalidEndpoint
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return otlpURLs{}, ErrInvalidEndpoint
		}
	}
	base := u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/")
	return otlpURLs{traces: base + TracesPath, metrics: base + MetricsPath, logs: base + LogsPath}, nil
}

// parseHeaders reads comma-separated key=value pairs. Empty items are
// skipped; keys and values are trimmed and percent-decoded (an invalid
// escape is kept literally). A key that is not an HTTP token, or a value
// holding control characters, is refused, since the exporter would
// otherwise fail on every export.
func parseHeaders(raw string) (map[string]string, error) {
	headers := map[string]string{}
	for i, item := range strings.Split(raw, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		k, v = unescape(strings.TrimSpace(k)), unescape(strings.TrimSpace(v))
		if !ok || !isHTTPToken(k) {
			return nil, fmt.Errorf("%w (item %d)", ErrInvalidHeaders, i+1)
		}
		for _, c := range []byte(v) {
			if c < 0x20 && c != '\t' || c == 0x7f {
				return nil, fmt.Errorf("%w (item %d has a control character)", ErrInvalidHeaders, i+1)
			}
		}
		headers[k] = v
	}
	return headers, nil
}

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// isHTTPToken reports whether s is an RFC 9110 token (a valid field name).
func isHTTPToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
