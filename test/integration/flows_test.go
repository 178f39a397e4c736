package integration_test

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

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

// scriptCounter counts the scripts a client runs (rate checks, flow reads,
// flow recalls) and its GETs (reads of the flow version).
type scriptCounter struct{ n, gets atomic.Int64 }

func (c *scriptCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (c *scriptCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		switch cmd.Name() {
		case "evalsha", "eval":
			c.n.Add(1)
		case "get":
			c.gets.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (c *scriptCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// runningReplica is a Redis rate store with its loop running (presence
// and the copy of the flow marks), as the wiring runs it, and a count of
// the scripts it sends.
func runningReplica(t *testing.T, url string) (*redis.RateStore, *scriptCounter) {
	t.Helper()
	client := redisClient(t, url)
	counter := &scriptCounter{}
	client.AddHook(counter)
	s, err := redis.NewRateStore(client, localStore(), redis.WithCallTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	waitLive(t, s)
	return s, counter
}

func waitLive(t *testing.T, s *redis.RateStore) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !s.FlowCopyLive() {
		if time.Now().After(deadline) {
			t.Fatal("the flow-mark copy did not come up")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkOn is what the chain does for an egress call arriving now on
// replica s: the rate check (its round trip carries the flow version),
// then the guard's recall.
func checkOn(t *testing.T, s *redis.RateStore, caller string, marks []uint64) int {
	t.Helper()
	ctx := ports.WithFlowCut(context.Background(), time.Now())
	if d, err := s.Take(ctx, caller+"\x00tool\x00safe_fetch", redis.MaxPerMinute); err != nil || !d.Allowed {
		t.Fatalf("Take = %+v, %v", d, err)
	}
	n, err := s.Recall(ctx, caller, marks)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRedisFlowCopyRace: replica A records marks and replica B checks them
// at once, hundreds of times: B answers from its copy (no recall round trip
// of its own), yet never misses a mark A recorded before B's check began,
// whether or not the announcement had reached B by then.
func TestRedisFlowCopyRace(t *testing.T) {
	url, _ := startRedis(t)
	a, _ := runningReplica(t, url)
	b, scripts := runningReplica(t, url)
	ctx := context.Background()
	const rounds = 300
	before := scripts.n.Load()
	for i := range uint64(rounds) {
		marks := []uint64{1000 + 2*i, 1001 + 2*i}
		if err := a.Remember(ctx, "alice", marks, time.Hour); err != nil {
			t.Fatal(err)
		}
		if n := checkOn(t, b, "alice", append(marks, 1<<40+i)); n != 2 {
			t.Fatalf("round %d: replica B counted %d of the 2 marks A had just recorded", i, n)
		}
		if n := checkOn(t, b, "bob", marks); n != 0 {
			t.Fatalf("round %d: another caller counted %d", i, n)
		}
	}
	// Two rate checks a round; anything beyond is a read of Redis for the
	// guard: the first read of each caller's set, and a few waits that gave
	// up on a loaded machine.
	if extra := scripts.n.Load() - before - 2*rounds; extra > rounds/10 {
		t.Fatalf("%d guard round trips in %d checks: the copy was not used", extra, 2*rounds)
	}
}

// TestRedisFlowCopyNeedsAFreshVersion: without a version read after the
// call arrived, the guard reads one (no rate check: the tool's limit is
// off) or, with no arrival instant at all, asks Redis; either way it is
// right.
func TestRedisFlowCopyNeedsAFreshVersion(t *testing.T) {
	url, _ := startRedis(t)
	a, _ := runningReplica(t, url)
	b, scripts := runningReplica(t, url)
	ctx := context.Background()
	if n := checkOn(t, b, "alice", []uint64{1}); n != 0 { // copies alice
		t.Fatalf("nothing recorded, yet %d", n)
	}
	// A script's first run on a server is two commands (EVALSHA, EVAL).
	if _, err := b.Recall(ctx, "carol", []uint64{5}); err != nil {
		t.Fatal(err)
	}
	for i, c := range []context.Context{ctx, ports.WithFlowCut(ctx, time.Now())} {
		if err := a.Remember(ctx, "alice", []uint64{uint64(10 + i)}, time.Hour); err != nil {
			t.Fatal(err)
		}
		before, gets := scripts.n.Load(), scripts.gets.Load()
		if n, err := b.Recall(c, "alice", []uint64{uint64(10 + i)}); err != nil || n != 1 {
			t.Fatalf("Recall = %d, %v; want 1", n, err)
		}
		wantScripts, wantGets := int64(1), int64(0) // the recall script
		if i == 1 {
			wantScripts, wantGets = 0, 1 // the version, then the copy
		}
		if scripts.n.Load()-before != wantScripts || scripts.gets.Load()-gets != wantGets {
			t.Fatalf("case %d: %d scripts and %d GETs; want %d and %d", i, scripts.n.Load()-before,
				scripts.gets.Load()-gets, wantScripts, wantGets)
		}
	}
}

// TestRedisFlowCopyComesBackAfterALostSubscription: when the subscription
// is cut, marks recorded meanwhile are still counted (from Redis, then from
// the copy started afresh).
func TestRedisFlowCopyComesBackAfterALostSubscription(t *testing.T) {
	url, _ := startRedis(t)
	a, _ := runningReplica(t, url)
	b, scripts := runningReplica(t, url)
	ctx := context.Background()
	if n := checkOn(t, b, "alice", []uint64{1}); n != 0 {
		t.Fatalf("nothing recorded, yet %d", n)
	}
	admin := redisClient(t, url)
	if err := admin.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	for i := range uint64(20) {
		if err := a.Remember(ctx, "alice", []uint64{100 + i}, time.Hour); err != nil {
			t.Fatal(err)
		}
		if n := checkOn(t, b, "alice", []uint64{100 + i}); n != 1 {
			t.Fatalf("mark %d recorded while B resubscribed: counted %d", i, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	waitLive(t, b)
	checkOn(t, b, "alice", nil) // the copy starts again: alice is read once
	before := scripts.n.Load()
	for i := range uint64(20) {
		if n := checkOn(t, b, "alice", []uint64{100 + i}); n != 1 {
			t.Fatalf("after resubscribing: mark %d counted %d", i, n)
		}
	}
	if extra := scripts.n.Load() - before - 20; extra > 2 {
		t.Fatalf("%d guard round trips after the copy came back", extra)
	}
}

// BenchmarkRedisFlowCheck isolates the guard's check of a benign call on a
// replica sharing Redis: the rate check alone (the round trip every call
// makes with the rate limit on), then with the guard's recall answered
// from the copy, then with the recall asked of Redis (as before the copy,
// and still when no fresh version is at hand). The marks are as many as a
// benign argument of a few hundred characters yields, none recorded.
func BenchmarkRedisFlowCheck(b *testing.B) {
	url, _ := startRedis(b)
	client := redisClient(b, url)
	s, err := redis.NewRateStore(client, localStore(), redis.WithCallTimeout(5*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	b.Cleanup(func() { stop(); <-done })
	for deadline := time.Now().Add(10 * time.Second); !s.FlowCopyLive(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the flow-mark copy did not come up")
		}
	}
	if err := s.Remember(ctx, "alice", []uint64{1, 2, 3}, time.Hour); err != nil {
		b.Fatal(err)
	}
	marks := make([]uint64, 80)
	for i := range marks {
		marks[i] = uint64(1<<32 + i)
	}
	for _, variant := range []string{"take-only", "take+copy", "take+redis"} {
		b.Run(variant, func(b *testing.B) {
			lat := make([]time.Duration, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				cctx := context.Background()
				if variant == "take+copy" {
					cctx = ports.WithFlowCut(cctx, start)
				}
				if _, err := s.Take(cctx, "alice\x00tool\x00run_snippet", redis.MaxPerMinute); err != nil {
					b.Fatal(err)
				}
				if variant != "take-only" {
					if n, err := s.Recall(cctx, "alice", marks); err != nil || n != 0 {
						b.Fatalf("Recall = %d, %v", n, err)
					}
				}
				lat[i] = time.Since(start)
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
		})
	}
}
