package wire

import (
	"context"
	"errors"
	"fmt"

	"github.com/arrowhead-go/arrowhead/adapters/telemetry"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// openTelemetry starts the exporters the settings configure, for a server
// and for a command (`arrowhead kill`) alike, so an audit record goes
// wherever the deployment collects them. It returns the log options that
// make audit and operator lines OpenTelemetry log records too (none
// without export). The exporters flush when rt closes.
func (rt *Runtime) openTelemetry(ctx context.Context, s *settings.Settings, prometheus bool) (*telemetry.Telemetry, []telemetry.LogOption, error) {
	tel, err := telemetry.Setup(ctx, telemetry.Config{
		ServiceName:  s.OTelServiceName,
		OTLPEndpoint: s.OTelExporterOTLPEndpoint,
		OTLPHeaders:  s.OTelExporterOTLPHeaders,
		Version:      Version,
		Prometheus:   prometheus,
	})
	if err != nil {
		if errors.Is(err, telemetry.ErrInvalidHeaders) {
			return nil, nil, fmt.Errorf("ARROWHEAD_OTEL_EXPORTER_OTLP_HEADERS: %w", err)
		}
		return nil, nil, fmt.Errorf("ARROWHEAD_OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	// Closers run last to first: the logs are synced before the exporters
	// flush and stop, so the last lines are exported too.
	rt.closers = append(rt.closers, tel.Shutdown)
	// With export on, audit and operator lines are also OpenTelemetry log
	// records, correlated with the call's span.
	var bridge []telemetry.LogOption
	if lp := tel.LoggerProvider(); lp != nil {
		bridge = append(bridge, telemetry.WithLoggerProvider(lp))
	}
	return tel, bridge, nil
}
