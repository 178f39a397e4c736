// Package nop holds implementations of the ports core.New requires that
// do nothing: no traces, no metrics, no audit trail, no rate limit. An
// embedder that wants none of these passes them instead of writing its
// own; each is a zero-size value, safe for concurrent use.
//
// What is left for the embedder to choose is what this package cannot
// choose safely: the authorizer (core/authz's Policy, or its AllowAll when
// the caller owns the process), the clock (ports.SystemClock) and, unless
// ARROWHEAD_EGRESS_GUARD is off, a rate store that also keeps flow marks
// (ports.FlowStore). Unlimited deliberately keeps none: a flow store that
// forgot every mark would switch the exfiltration guard off without
// saying so, where core.New refusing to start says it.
package nop

import (
	"context"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Tracer starts spans that record nothing and report no trace id.
type Tracer struct{}

var _ ports.Tracer = Tracer{}

// Start implements ports.Tracer: ctx unchanged and a span that does nothing.
func (Tracer) Start(ctx context.Context, _ ports.ComponentKind, _ string, _ ports.TraceCarrier) (context.Context, ports.Span) {
	return ctx, span{}
}

type span struct{}

func (span) TraceID() string    { return "" }
func (span) End(string, string) {}

// Metrics discards every measurement.
type Metrics struct{}

var _ ports.Metrics = Metrics{}

// RecordCall implements ports.Metrics.
func (Metrics) RecordCall(context.Context, ports.ComponentKind, string, string, string, time.Duration) {
}

// AuditSink discards every audit record.
type AuditSink struct{}

var _ ports.AuditSink = AuditSink{}

// Record implements ports.AuditSink.
func (AuditSink) Record(context.Context, ports.AuditRecord) {}

// Unlimited is a rate store that admits every call: the per-minute
// ceilings are not enforced at all.
type Unlimited struct{}

var _ ports.RateStore = Unlimited{}

// Take implements ports.RateStore: always allowed.
func (Unlimited) Take(context.Context, string, int) (ports.RateDecision, error) {
	return ports.RateDecision{Allowed: true}, nil
}
