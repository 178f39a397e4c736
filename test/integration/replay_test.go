package integration_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/redis"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// TestRedisReplayGuardContract runs the replay-guard contract against a
// real redis-server (time is the server's, so advancing sleeps).
func TestRedisReplayGuardContract(t *testing.T) {
	url, _ := startRedis(t)
	var n atomic.Int32
	portstest.RunReplayGuardContract(t, func(t *testing.T) (ports.ReplayGuard, func(time.Duration)) {
		prefix := "arrowhead:replay" + strconv.Itoa(int(n.Add(1))) + ":"
		s, err := redis.NewRateStore(redisClient(t, url), localStore(), redis.WithKeyPrefix(prefix),
			redis.WithCallTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return s, time.Sleep
	})
}

// TestRedisReplayGuardAcrossReplicasAndOutage: a key one replica records is
// seen by another; with Redis gone every replica refuses (fails closed)
// rather than answering from memory another replica cannot see.
func TestRedisReplayGuardAcrossReplicasAndOutage(t *testing.T) {
	srv := startRedisServer(t)
	ctx := context.Background()
	newStore := func() *redis.RateStore {
		s, err := redis.NewRateStore(redisClient(t, srv.URL()), localStore(), redis.WithCallTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := newStore(), newStore()
	if first, err := a.FirstSeen(ctx, "jkt\x00jti-1", time.Minute); err != nil || !first {
		t.Fatalf("replica a: FirstSeen = %v, %v; want first", first, err)
	}
	if first, err := b.FirstSeen(ctx, "jkt\x00jti-1", time.Minute); err != nil || first {
		t.Fatalf("replica b: FirstSeen = %v, %v; want seen (a recorded it)", first, err)
	}
	srv.Stop()
	for name, s := range map[string]*redis.RateStore{"a": a, "b": b} {
		if first, err := s.FirstSeen(ctx, "jkt\x00jti-2", time.Minute); first || !errors.Is(err, redis.ErrReplayUnavailable) {
			t.Fatalf("replica %s during an outage: FirstSeen = %v, %v; want ErrReplayUnavailable", name, first, err)
		}
	}
}
