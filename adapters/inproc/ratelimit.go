package inproc

import (
	"context"
	"crypto/sha256"
	"errors"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Limits of the in-memory rate store.
const (
	// DefaultMaxKeys bounds how many buckets a RateStore tracks. A bucket
	// costs about 75 bytes of map plus its key (at most MaxRawKeyBytes), so
	// the default stays near 20 MiB at worst, however many callers and
	// components there are.
	DefaultMaxKeys = 100_000

	// MaxRawKeyBytes is the longest key stored verbatim; longer keys are
	// stored as their SHA-256 digest so a long subject cannot inflate the
	// memory a bucket costs.
	MaxRawKeyBytes = 128

	// sweepInterval is how often a shard drops its full buckets even when it
	// is below its cap, so idle state does not linger until the cap is hit.
	// A full bucket needs at most a minute of idleness, hence the period.
	sweepInterval = time.Minute

	// keysPerShard is the shard size the store aims for: large enough that
	// the shards of a small store are not starved, small enough that a
	// sweep of one shard is cheap.
	keysPerShard = 1024
	// maxShards bounds lock striping; beyond this, contention is no longer
	// the bottleneck.
	maxShards = 64

	// hashedKeyMarker prefixes keys stored as a digest. A verbatim key that
	// starts with it is hashed too, so no verbatim key can collide with a
	// digest key.
	hashedKeyMarker = "\xffsha256:"
)

// ErrInvalidLimit is returned by Take for a ceiling that is not positive.
// The guard chain never asks for one (a zero ceiling disables limiting
// before the store is consulted), so it signals a wiring bug.
var ErrInvalidLimit = errors.New("rate limit must be a positive number of calls per minute")

// RateOption adjusts a RateStore.
type RateOption func(*rateConfig)

type rateConfig struct {
	maxKeys       int
	maxReplayKeys int
}

// WithMaxKeys bounds how many buckets the store tracks (DefaultMaxKeys if
// n <= 0).
func WithMaxKeys(n int) RateOption {
	return func(c *rateConfig) {
		if n > 0 {
			c.maxKeys = n
		}
	}
}

// RateStore is an in-process ports.RateStore: one token bucket per key with a
// capacity of perMinute tokens, refilling at perMinute tokens per minute.
//
// Each bucket is kept in its GCRA form, as the single instant at which it
// will be full again (its "theoretical arrival time", tat). With
// interval = 1 minute / perMinute, the bucket holds
// perMinute - (tat-now)/interval tokens, so taking a token is tat += interval
// and the call is allowed while at least one token remains. This is exactly
// the token bucket described above, stored in one integer, and a bucket whose
// tat has passed is full: forgetting it loses nothing.
//
// Memory is bounded: at most MaxKeys buckets are tracked. When a shard is at
// its share of the cap, full buckets are dropped first; if that does not free
// an eighth of the shard, the buckets closest to full are dropped too (their
// callers get a fresh burst early, the smallest possible leak). Each sweep
// frees at least an eighth of a shard, so its cost is amortised over the
// inserts that follow. Shards also drop full buckets once a minute, on insert.
// No goroutine is started.
//
// Buckets are per process: replicas behind a load balancer each keep their
// own. Use the Redis store to share one budget across replicas.
//
// A RateStore is safe for concurrent use.
type RateStore struct {
	clock  ports.Clock
	origin time.Time
	seed   maphash.Seed
	shards []rateShard
	// shardMask selects a shard from a key hash (len(shards) is a power of
	// two).
	shardMask uint64
	maxKeys   int

	// flows holds the exfiltration guard's per-caller marks (flows.go).
	flows flowTable
	// replay holds single-use keys (replay.go).
	replay *replayTable
}

type rateShard struct {
	mu sync.Mutex
	// tat maps a stored key to the nanosecond offset (from the store's
	// origin) at which its bucket is full again.
	tat       map[string]int64
	cap       int
	nextSweep int64
}

var _ ports.RateStore = (*RateStore)(nil)

// NewRateStore returns an empty store reading time from clock (the system
// clock when clock is nil).
func NewRateStore(clock ports.Clock, opts ...RateOption) *RateStore {
	if clock == nil {
		clock = ports.SystemClock{}
	}
	cfg := rateConfig{maxKeys: DefaultMaxKeys, maxReplayKeys: DefaultMaxReplayKeys}
	for _, o := range opts {
		o(&cfg)
	}
	n := 1
	for n < maxShards && n*keysPerShard < cfg.maxKeys {
		n *= 2
	}
	s := &RateStore{
		clock:     clock,
		origin:    clock.Now(),
		seed:      maphash.MakeSeed(),
		shards:    make([]rateShard, n),
		shardMask: uint64(n - 1),
		maxKeys:   cfg.maxKeys,
		flows:     newFlowTable(),
		replay:    newReplayTable(cfg.maxReplayKeys),
	}
	// Split the cap so the shards' shares add up to exactly maxKeys.
	for i := range s.shards {
		s.shards[i].tat = make(map[string]int64)
		s.shards[i].cap = cfg.maxKeys / n
		if i < cfg.maxKeys%n {
			s.shards[i].cap++
		}
	}
	return s
}

// Take consumes one token from key's bucket if one is available. When none
// is, RetryAfter is the time until one will be. It never returns an error
// except ErrInvalidLimit for perMinute <= 0.
func (s *RateStore) Take(_ context.Context, key string, perMinute int) (ports.RateDecision, error) {
	if perMinute <= 0 {
		return ports.RateDecision{}, ErrInvalidLimit
	}
	interval := refillInterval(perMinute)
	// A take is allowed while the debt (tat-now) leaves room for one more
	// token: debt <= (capacity-1) * interval.
	tolerance := int64(perMinute-1) * interval

	key = storedKey(key)
	now := int64(s.clock.Now().Sub(s.origin))
	sh := &s.shards[maphash.String(s.seed, key)&s.shardMask]

	sh.mu.Lock()
	tat, tracked := sh.tat[key]
	if tat < now {
		tat = now
	}
	if debt := tat - now; debt > tolerance {
		sh.mu.Unlock()
		return ports.RateDecision{RetryAfter: time.Duration(debt - tolerance)}, nil
	}
	if !tracked {
		sh.beforeInsert(now)
	}
	sh.tat[key] = tat + interval
	sh.mu.Unlock()
	return ports.RateDecision{Allowed: true}, nil
}

// Refund gives back one token that Take granted for key at perMinute, for a
// caller that was refused by a second limiter after this one allowed it (the
// Redis store's shared bucket). A key no longer tracked is already full and
// is left alone.
func (s *RateStore) Refund(_ context.Context, key string, perMinute int) {
	if perMinute <= 0 {
		return
	}
	interval := refillInterval(perMinute)
	key = storedKey(key)
	sh := &s.shards[maphash.String(s.seed, key)&s.shardMask]
	sh.mu.Lock()
	if tat, tracked := sh.tat[key]; tracked {
		sh.tat[key] = tat - interval
	}
	sh.mu.Unlock()
}

// refillInterval is the nanoseconds one token takes to refill at perMinute.
func refillInterval(perMinute int) int64 {
	return max(int64(time.Minute)/int64(perMinute), 1)
}

// storedKey bounds the size of a key kept in memory.
func storedKey(key string) string {
	if len(key) <= MaxRawKeyBytes && !strings.HasPrefix(key, hashedKeyMarker) {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return hashedKeyMarker + string(sum[:])
}

// beforeInsert makes room for one more bucket. The caller holds sh.mu.
func (sh *rateShard) beforeInsert(now int64) {
	if now >= sh.nextSweep {
		sh.dropFull(now)
		sh.nextSweep = now + int64(sweepInterval)
	}
	if len(sh.tat) < sh.cap {
		return
	}
	sh.dropFull(now)
	// Free at least an eighth of the shard (at least one slot) so the next
	// sweep is that many inserts away.
	target := sh.cap - max(sh.cap/8, 1)
	if len(sh.tat) <= target {
		return
	}
	sh.dropClosestToFull(len(sh.tat) - target)
}

// dropFull forgets every full bucket: a full bucket behaves exactly like an
// untracked key.
func (sh *rateShard) dropFull(now int64) {
	for k, tat := range sh.tat {
		if tat <= now {
			delete(sh.tat, k)
		}
	}
}

// dropClosestToFull forgets the n buckets that will be full soonest.
func (sh *rateShard) dropClosestToFull(n int) {
	tats := make([]int64, 0, len(sh.tat))
	for _, tat := range sh.tat {
		tats = append(tats, tat)
	}
	slices.Sort(tats)
	cut := tats[n-1]
	// Buckets strictly below cut all go; of those equal to cut, only as many
	// as make up n.
	ties := n - countBelow(tats, cut)
	for k, tat := range sh.tat {
		switch {
		case tat < cut:
			delete(sh.tat, k)
		case tat == cut && ties > 0:
			delete(sh.tat, k)
			ties--
		}
	}
}

func countBelow(sorted []int64, v int64) int {
	i, _ := slices.BinarySearch(sorted, v)
	return i
}
