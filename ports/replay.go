package ports

import (
	"context"
	"time"
)

// ReplayGuard remembers single-use values for a while so that a second use
// is seen: a DPoP proof's jti (RFC 9449 section 11.1) is the one it guards.
// It lives beside the rate buckets (the rate-limit stores implement it), so
// it holds across replicas exactly as far as the buckets do: per process in
// memory, across every replica through Redis.
//
// Keys are opaque to the store and never used verbatim as storage keys.
// Implementations must be safe for concurrent use, must bound what they keep,
// and must never forget a key before its ttl has passed: a store that cannot
// keep one more key refuses with an error instead, since forgetting would
// admit a replay.
type ReplayGuard interface {
	// FirstSeen records key for ttl and reports whether this is its first
	// use within ttl: true once, false for every later use until ttl has
	// passed. An error means the store could not answer; the caller must
	// treat the value as already used (fail closed).
	FirstSeen(ctx context.Context, key string, ttl time.Duration) (bool, error)
}
