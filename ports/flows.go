package ports

import (
	"context"
	"time"
)

// FlowStore remembers, per caller and for a while, marks of content the
// server returned to that caller (fingerprints of untrusted or secret-bearing
// text, frame markers, item hashes), so the exfiltration guard can tell when
// a later egress call sends that content back out. It lives beside the rate
// buckets (the rate-limit store implements it) so it holds across replicas
// exactly as far as the buckets do.
//
// A mark is an opaque 64-bit value; the caller key is the guard's caller
// identity and is never used verbatim as a storage key. Implementations must
// be safe for concurrent use, bound what one caller can make them keep, and
// forget a mark once ttl has passed since it was last recorded.
type FlowStore interface {
	// Remember records marks for caller for ttl. An error means they could
	// not be recorded (the guard then cannot vouch for them).
	Remember(ctx context.Context, caller string, marks []uint64, ttl time.Duration) error
	// Recall reports how many of marks are currently recorded for caller.
	// An error means the store could not answer.
	Recall(ctx context.Context, caller string, marks []uint64) (int, error)
}

// flowCutKey is the context key of the instant a call arrived.
type flowCutKey struct{}

// WithFlowCut returns ctx carrying the instant a call arrived (read from a
// clock with a monotonic reading, time.Now). A FlowStore that answers
// Recall from a local copy of marks other replicas record must answer as
// of no earlier than this instant: a mark recorded anywhere before the
// call arrived (content returned to the caller by another replica, which
// the caller then sent here) must be counted. The guard sets it before
// the chain's first store call; a store without a local copy ignores it.
func WithFlowCut(ctx context.Context, arrived time.Time) context.Context {
	return context.WithValue(ctx, flowCutKey{}, arrived)
}

// FlowCut returns the instant WithFlowCut recorded; ok is false when none
// was, and a store must then not answer from a copy it cannot prove fresh.
func FlowCut(ctx context.Context) (arrived time.Time, ok bool) {
	arrived, ok = ctx.Value(flowCutKey{}).(time.Time)
	return arrived, ok
}
