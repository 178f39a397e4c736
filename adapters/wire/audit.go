package wire

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/signing"
	"github.com/arrowhead-go/arrowhead/adapters/telemetry"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// auditSink builds the audit sink: JSON lines to w, hash-chained, with
// checkpoints signed by key every ARROWHEAD_AUDIT_CHECKPOINT_LINES lines
// or _SECONDS seconds. The returned closer writes the final checkpoint;
// it runs after the transports stopped, as the runtime's closers run in
// reverse.
func (rt *Runtime) auditSink(s *settings.Settings, key *signing.Key, w io.Writer, bridge []telemetry.LogOption) (*telemetry.AuditSink, error) {
	sink, err := telemetry.NewChainedAuditSink(w, telemetry.Chain{
		Signer:             key,
		CheckpointLines:    s.AuditCheckpointLines,
		CheckpointInterval: time.Duration(s.AuditCheckpointSeconds * float64(time.Second)),
	}, bridge...)
	if err != nil {
		return nil, fmt.Errorf("starting the audit log: %w", err)
	}
	rt.closers = append(rt.closers, func(context.Context) error { return sink.Close() })
	return sink, nil
}
