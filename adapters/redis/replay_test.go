package redis_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/inproc"
	"github.com/arrowhead-go/arrowhead/adapters/redis"
)

// TestFirstSeenFailsClosedWhenRedisIsDown: with Redis unreachable a
// single-use key cannot be checked across replicas, so FirstSeen refuses
// (never "first" from the per-process store, whose answer another replica
// cannot see), and the degraded store stops waiting on Redis.
func TestFirstSeenFailsClosedWhenRedisIsDown(t *testing.T) {
	client, _ := deadClient(t)
	clock := newFakeClock()
	s := newStore(t, client, inproc.NewRateStore(clock), redis.WithClock(clock))
	for i := range 3 {
		first, err := s.FirstSeen(context.Background(), "jkt\x00jti", time.Minute)
		if first || !errors.Is(err, redis.ErrReplayUnavailable) {
			t.Fatalf("attempt %d: FirstSeen = %v, %v; want ErrReplayUnavailable", i+1, first, err)
		}
	}
	if !s.Degraded() {
		t.Fatal("store not degraded after Redis failed")
	}
	if _, err := s.FirstSeen(context.Background(), "k", 0); !errors.Is(err, redis.ErrInvalidReplayTTL) {
		t.Fatalf("zero ttl: err = %v; want ErrInvalidReplayTTL", err)
	}
}

// TestReplayKeyIsPrefixedAndHashed: the caller's key never shapes a Redis
// key verbatim, and never collides with a rate bucket's.
func TestReplayKeyIsPrefixedAndHashed(t *testing.T) {
	client, _ := deadClient(t)
	s := newStore(t, client, inproc.NewRateStore(nil))
	k := s.ReplayKey("jkt\x00secret-jti")
	if !regexp.MustCompile(`^arrowhead:rl:replay:[0-9a-f]{64}$`).MatchString(k) || strings.Contains(k, "secret") {
		t.Fatalf("replay key = %q", k)
	}
	if k == s.RedisKey("jkt\x00secret-jti") {
		t.Fatal("replay key equals the rate bucket key")
	}
}
