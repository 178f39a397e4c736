package inproc

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Bounds of the in-process replay guard (single-use values such as DPoP
// proof ids).
const (
	// DefaultMaxReplayKeys bounds how many unexpired keys the guard holds. A key
	// costs its 32-byte digest, an 8-byte expiry and map overhead, about
	// 100 bytes, so the table stays near 25 MiB at worst. DPoP keeps a key
	// at most twice its proof window (two minutes by default), so this
	// admits about 2,000 proofs a second per replica before it refuses.
	DefaultMaxReplayKeys = 1 << 18
	// replayShards stripes the table's lock.
	replayShards = 16
)

// Errors of the replay guard.
var (
	// ErrReplayFull is returned by FirstSeen when every slot holds a key
	// that has not expired: forgetting one early would admit its replay,
	// so the guard refuses (its caller fails closed) until keys expire.
	ErrReplayFull = errors.New("replay guard is full of unexpired keys")
	// ErrInvalidReplayTTL is returned by FirstSeen for a ttl that is not
	// positive.
	ErrInvalidReplayTTL = errors.New("replay keys need a positive time to live")
)

// replayTable is the in-process ports.ReplayGuard state: per shard, each
// key's digest with the instant (ns since the store's origin) it expires.
type replayTable struct {
	shards [replayShards]replayShard
	// perShard is each shard's share of the bound.
	perShard int
}

type replayShard struct {
	mu        sync.Mutex
	expiry    map[[sha256.Size]byte]int64
	nextSweep int64
}

// WithMaxReplayKeys bounds how many unexpired single-use keys the store
// holds (DefaultMaxReplayKeys if n <= 0; at least one per lock stripe).
func WithMaxReplayKeys(n int) RateOption {
	return func(c *rateConfig) {
		if n > 0 {
			c.maxReplayKeys = n
		}
	}
}

func newReplayTable(maxKeys int) *replayTable {
	t := &replayTable{perShard: max(1, maxKeys/replayShards)}
	for i := range t.shards {
		t.shards[i].expiry = make(map[[sha256.Size]byte]int64)
	}
	return t
}

var _ ports.ReplayGuard = (*RateStore)(nil)

// FirstSeen records key until ttl from now and reports whether it was new.
// A key seen again keeps its first expiry, so replays cannot prolong it.
// Keys are stored as their SHA-256 digest: any length costs the same.
func (s *RateStore) FirstSeen(_ context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, ErrInvalidReplayTTL
	}
	sum := sha256.Sum256([]byte(key))
	now := int64(s.clock.Now().Sub(s.origin))
	sh := &s.replay.shards[sum[0]%replayShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e, ok := sh.expiry[sum]; ok && e > now {
		return false, nil
	}
	if now >= sh.nextSweep || len(sh.expiry) >= s.replay.perShard {
		sh.sweep(now)
		sh.nextSweep = now + int64(sweepInterval)
	}
	if len(sh.expiry) >= s.replay.perShard {
		return false, ErrReplayFull
	}
	sh.expiry[sum] = now + int64(ttl)
	return true, nil
}

// sweep drops expired keys. The caller holds sh.mu.
func (sh *replayShard) sweep(now int64) {
	for k, e := range sh.expiry {
		if e <= now {
			delete(sh.expiry, k)
		}
	}
}
