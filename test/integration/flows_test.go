package integration_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/redis"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// rateOnly hides a fallback's flow marks, so the store under test answers
// from Redis alone.
type rateOnly struct{ ports.RateStore }

// TestRedisFlowStoreContract runs the flow-store contract against a real
// redis-server, with a fallback that keeps no marks: every answer comes
// from Redis (time is the server's, so advancing sleeps).
func TestRedisFlowStoreContract(t *testing.T) {
	url, _ := startRedis(t)
	var n atomic.Int32
	openStore := func(t *testing.T) (ports.FlowStore, func(time.Duration)) {
		prefix := "arrowhead:contract" + strconv.Itoa(int(n.Add(1))) + ":"
		// A generous call timeout: this is about what Redis keeps, not about
		// a slow Redis, and the suite runs beside others on 2 cores.
		s, err := redis.NewRateStore(redisClient(t, url), rateOnly{localStore()}, redis.WithKeyPrefix(prefix),
			redis.WithCallTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		return s, time.Sleep
	}
	portstest.RunFlowStoreContract(t, openStore)
}

// TestRedisFlowMarksHoldAcrossReplicas: marks one replica records are
// recalled by another through Redis, each with its own per-process
// fallback; with Redis gone, each replica still has its own.
func TestRedisFlowMarksHoldAcrossReplicas(t *testing.T) {
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
	if err := a.Remember(ctx, "alice", []uint64{11, 12}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Recall(ctx, "alice", []uint64{11, 12, 13}); err != nil || n != 2 {
		t.Fatalf("replica b: Recall = %d, %v; want 2", n, err)
	}
	if n, err := b.Recall(ctx, "bob", []uint64{11, 12}); err != nil || n != 0 {
		t.Fatalf("another caller: Recall = %d, %v; want 0", n, err)
	}
	srv.Stop()
	if n, err := a.Recall(ctx, "alice", []uint64{11, 12}); err != nil || n != 2 {
		t.Fatalf("replica a during an outage: Recall = %d, %v; want its own 2", n, err)
	}
	if n, err := b.Recall(ctx, "alice", []uint64{11, 12}); err != nil || n != 0 {
		t.Fatalf("replica b during an outage: Recall = %d, %v; want 0 (it never saw them)", n, err)
	}
}
