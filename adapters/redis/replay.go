package redis

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/arrowhead-go/arrowhead/ports"
)

// replayKeyInfix follows the prefix in a single-use key (rate buckets are
// the prefix and hex alone, so the two never collide).
const replayKeyInfix = "replay:"

// Errors of the replay guard.
var (
	// ErrReplayUnavailable is returned by FirstSeen while Redis does not
	// answer. There is no per-process fallback for single-use keys: a key
	// another replica recorded would be unknown to it and its replay
	// admitted, so the caller refuses instead.
	ErrReplayUnavailable = errors.New("redis is unavailable: single-use keys cannot be checked")
	// ErrInvalidReplayTTL is returned by FirstSeen for a ttl shorter than a
	// millisecond.
	ErrInvalidReplayTTL = errors.New("replay keys need a time to live of at least a millisecond")
)

var _ ports.ReplayGuard = (*RateStore)(nil)

// FirstSeen records key in Redis for ttl with one SET NX PX, atomic on the
// server, so across every replica sharing the Redis exactly one use is
// first. A key seen again keeps its first expiry. While Redis is down or
// slow it fails closed (ErrReplayUnavailable) and, like a rate check,
// degrades the store so later calls do not wait on Redis.
func (s *RateStore) FirstSeen(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl < time.Millisecond {
		return false, ErrInvalidReplayTTL
	}
	if !s.shouldTryRedis() {
		return false, ErrReplayUnavailable
	}
	rctx, cancel := context.WithTimeout(ctx, s.cfg.callTimeout)
	defer cancel()
	err := s.client.SetArgs(rctx, s.ReplayKey(key), "1", goredis.SetArgs{Mode: "NX", TTL: ttl}).Err()
	switch {
	case err == nil:
		s.degraded.Store(false)
		return true, nil
	case errors.Is(err, goredis.Nil):
		// NX found the key: this is not its first use.
		s.degraded.Store(false)
		return false, nil
	}
	if ctx.Err() == nil {
		s.markDegraded()
	}
	return false, ErrReplayUnavailable
}

// ReplayKey returns the Redis key that records key, for operators.
func (s *RateStore) ReplayKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return s.cfg.prefix + replayKeyInfix + hex.EncodeToString(sum[:])
}
