package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/inproc"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

func newFakeClock() *portstest.Clock { return &portstest.Clock{T: time.Unix(1_700_000_000, 0)} }

func take(t *testing.T, s *inproc.RateStore, key string, perMinute int) ports.RateDecision {
	t.Helper()
	d, err := s.Take(context.Background(), key, perMinute)
	if err != nil {
		t.Fatalf("Take(%q, %d): %v", key, perMinute, err)
	}
	return d
}

// drain takes until refused and returns how many were allowed (bounded so a
// broken limiter fails instead of looping).
func drain(t *testing.T, s *inproc.RateStore, key string, perMinute int) (int, ports.RateDecision) {
	t.Helper()
	for n := 0; n <= 10*perMinute+10; n++ {
		if d := take(t, s, key, perMinute); !d.Allowed {
			return n, d
		}
	}
	t.Fatalf("key %q was never refused at %d/min", key, perMinute)
	return 0, ports.RateDecision{}
}

func TestRateStoreBurstEqualsPerMinute(t *testing.T) {
	for _, perMinute := range []int{1, 2, 5, 7, 60, 120, 1000} {
		t.Run(fmt.Sprint(perMinute), func(t *testing.T) {
			s := inproc.NewRateStore(newFakeClock())
			n, d := drain(t, s, "alice\x00tool\x00calculate", perMinute)
			if n != perMinute {
				t.Fatalf("allowed %d calls in a burst, want %d", n, perMinute)
			}
			// Exactly one refill interval until the next token.
			want := time.Minute / time.Duration(perMinute)
			if d.RetryAfter != want {
				t.Fatalf("RetryAfter = %v, want %v", d.RetryAfter, want)
			}
		})
	}
}

func TestRateStoreRetryAfterShrinksAsTimePasses(t *testing.T) {
	c := newFakeClock()
	s := inproc.NewRateStore(c)
	drain(t, s, "k", 6) // one token per 10s
	c.Advance(3 * time.Second)
	if d := take(t, s, "k", 6); d.Allowed || d.RetryAfter != 7*time.Second {
		t.Fatalf("after 3s got %+v, want refused with RetryAfter 7s", d)
	}
	c.Advance(7*time.Second - 1)
	if d := take(t, s, "k", 6); d.Allowed || d.RetryAfter != 1 {
		t.Fatalf("1ns before the token got %+v, want refused with RetryAfter 1ns", d)
	}
	c.Advance(1)
	if d := take(t, s, "k", 6); !d.Allowed {
		t.Fatalf("at the refill instant got %+v, want allowed", d)
	}
	if d := take(t, s, "k", 6); d.Allowed || d.RetryAfter != 10*time.Second {
		t.Fatalf("after spending the refilled token got %+v, want refused for 10s", d)
	}
}

func TestRateStoreRefill(t *testing.T) {
	tests := []struct {
		name      string
		perMinute int
		idle      time.Duration
		want      int // tokens available after idle, starting empty
	}{
		{"nothing", 10, 0, 0},
		{"half a minute is half the bucket", 10, 30 * time.Second, 5},
		{"just short of two tokens", 10, 12*time.Second - 1, 1},
		{"full minute refills completely", 10, time.Minute, 10},
		{"long idle never exceeds capacity", 10, 24 * time.Hour, 10},
		{"one a minute", 1, 59 * time.Second, 0},
		{"one a minute, refilled", 1, time.Minute, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeClock()
			s := inproc.NewRateStore(c)
			drain(t, s, "k", tc.perMinute)
			c.Advance(tc.idle)
			if got, _ := drain(t, s, "k", tc.perMinute); got != tc.want {
				t.Fatalf("after %v idle: %d tokens, want %d", tc.idle, got, tc.want)
			}
		})
	}
}

func TestRateStoreSustainedRate(t *testing.T) {
	// Over ten simulated minutes at one attempt a second against 30/min, the
	// caller gets the initial burst plus exactly the refill.
	c := newFakeClock()
	s := inproc.NewRateStore(c)
	allowed := 0
	for i := 0; i < 600; i++ {
		if take(t, s, "k", 30).Allowed {
			allowed++
		}
		c.Advance(time.Second)
	}
	// Burst of 30, then one token every 2s for the remaining 599s.
	if want := 30 + 599/2; allowed != want {
		t.Fatalf("allowed %d over ten minutes, want %d", allowed, want)
	}
}

func TestRateStoreKeysAreIndependent(t *testing.T) {
	s := inproc.NewRateStore(newFakeClock())
	drain(t, s, "alice\x00tool\x00calculate", 3)
	for _, k := range []string{
		"bob\x00tool\x00calculate",     // another caller
		"alice\x00tool\x00safe_fetch",  // another component
		"alice\x00prompt\x00calculate", // another kind
	} {
		if d := take(t, s, k, 3); !d.Allowed {
			t.Errorf("%q was limited by another key's bucket", k)
		}
	}
}

func TestRateStoreLongKeysAreBoundedAndDistinct(t *testing.T) {
	s := inproc.NewRateStore(newFakeClock())
	long := strings.Repeat("x", 10_000)
	drain(t, s, long+"a", 2)
	if d := take(t, s, long+"b", 2); !d.Allowed {
		t.Fatal("two long keys differing only at the end share a bucket")
	}
	if d := take(t, s, long+"a", 2); d.Allowed {
		t.Fatal("a long key's bucket was not remembered")
	}
	// A verbatim key that looks like a digest key is hashed too, so it
	// cannot alias another key's bucket.
	if d := take(t, s, "\xffsha256:"+long[:32], 2); !d.Allowed {
		t.Fatal("a marker-prefixed key aliased an existing bucket")
	}
}

func TestRateStoreInvalidLimit(t *testing.T) {
	s := inproc.NewRateStore(newFakeClock())
	for _, n := range []int{0, -1} {
		if _, err := s.Take(context.Background(), "k", n); !errors.Is(err, inproc.ErrInvalidLimit) {
			t.Errorf("Take(perMinute=%d) error = %v, want ErrInvalidLimit", n, err)
		}
	}
	if s.Len() != 0 {
		t.Fatalf("an invalid call created state: Len = %d", s.Len())
	}
}

func TestRateStoreCapBoundsKeys(t *testing.T) {
	const maxKeys = 50
	c := newFakeClock()
	s := inproc.NewRateStore(c, inproc.WithMaxKeys(maxKeys))
	for i := 0; i < 10_000; i++ {
		take(t, s, fmt.Sprint("caller-", i), 5)
		if n := s.Len(); n > maxKeys {
			t.Fatalf("after %d keys the store tracks %d, cap %d", i+1, n, maxKeys)
		}
		c.Advance(time.Millisecond)
	}
}

func TestRateStoreDefaultCap(t *testing.T) {
	if got := inproc.NewRateStore(nil).MaxKeys(); got != inproc.DefaultMaxKeys {
		t.Fatalf("MaxKeys = %d, want %d", got, inproc.DefaultMaxKeys)
	}
	// Large caps are spread over shards; the bound still holds overall.
	c := newFakeClock()
	s := inproc.NewRateStore(c, inproc.WithMaxKeys(5000))
	for i := 0; i < 20_000; i++ {
		take(t, s, fmt.Sprint("caller-", i), 5)
	}
	if n := s.Len(); n > 5000 {
		t.Fatalf("tracks %d keys, cap 5000", n)
	}
}

func TestRateStoreEvictsFullBucketsFirst(t *testing.T) {
	const maxKeys = 16
	c := newFakeClock()
	s := inproc.NewRateStore(c, inproc.WithMaxKeys(maxKeys))
	// A drained bucket that must survive: its next token is 30s away.
	drain(t, s, "victim", 2)
	// Fill the rest with buckets that are full again almost at once (one
	// token of 1000/min refills in 60ms).
	for i := 0; i < maxKeys-1; i++ {
		take(t, s, fmt.Sprint("light-", i), 1000)
	}
	// New keys force sweeps; only full buckets should go.
	for i := 0; i < 3*maxKeys; i++ {
		c.Advance(100 * time.Millisecond)
		take(t, s, fmt.Sprint("new-", i), 1000)
		if n := s.Len(); n > maxKeys {
			t.Fatalf("Len = %d over cap %d", n, maxKeys)
		}
	}
	if d := take(t, s, "victim", 2); d.Allowed {
		t.Fatal("eviction forgot a drained bucket while full ones were available")
	}
}

func TestRateStoreEvictsClosestToFullUnderPressure(t *testing.T) {
	const maxKeys = 8
	c := newFakeClock()
	s := inproc.NewRateStore(c, inproc.WithMaxKeys(maxKeys))
	// Eight buckets of 10/min, none full: k0 spent one token (closest to
	// full), k7 spent eight (furthest).
	for i := 0; i < maxKeys; i++ {
		for j := 0; j <= i; j++ {
			take(t, s, fmt.Sprint("k", i), 10)
		}
	}
	take(t, s, "newcomer", 10)
	if n := s.Len(); n != maxKeys {
		t.Fatalf("Len = %d, want exactly the cap %d (one bucket evicted)", n, maxKeys)
	}
	if got, _ := drain(t, s, "k7", 10); got != 2 {
		t.Fatalf("k7 had %d tokens left, want 2: the most-spent bucket was forgotten", got)
	}
	if got, _ := drain(t, s, "k0", 10); got != 10 {
		t.Fatalf("k0 had %d tokens, want a fresh 10: it was not the bucket evicted", got)
	}
}

func TestRateStorePeriodicSweepDropsIdleBuckets(t *testing.T) {
	c := newFakeClock()
	s := inproc.NewRateStore(c, inproc.WithMaxKeys(1000)) // one shard
	for i := 0; i < 100; i++ {
		take(t, s, fmt.Sprint("k", i), 60)
	}
	c.Advance(2 * time.Minute) // every bucket is full again
	take(t, s, "fresh", 60)
	if n := s.Len(); n != 1 {
		t.Fatalf("after the idle sweep the store tracks %d buckets, want 1", n)
	}
}

func TestRateStoreConcurrentTakesNeverOverspend(t *testing.T) {
	// Time stands still, so no token is refilled: across all workers exactly
	// perMinute takes may succeed, however they interleave.
	s := inproc.NewRateStore(newFakeClock())
	const perMinute, workers, attempts = 50_000, 4, 25_000
	var allowed atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			<-start
			for i := 0; i < attempts; i++ {
				d, err := s.Take(context.Background(), "shared", perMinute)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					allowed.Add(1)
				}
				if i%1000 == 0 { // unrelated keys churn alongside
					_, _ = s.Take(context.Background(), fmt.Sprint("w", w, "-", i), perMinute)
				}
			}
		}(w)
	}
	close(start)
	wg.Wait()
	if got := allowed.Load(); got != perMinute {
		t.Fatalf("%d concurrent takes allowed, want exactly %d", got, perMinute)
	}
}

func TestRateStoreNilClockUsesSystemClock(t *testing.T) {
	s := inproc.NewRateStore(nil)
	if d := take(t, s, "k", 1); !d.Allowed {
		t.Fatal("first take refused")
	}
	if d := take(t, s, "k", 1); d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > time.Minute {
		t.Fatalf("second take = %+v, want refused within a minute", d)
	}
}

func BenchmarkRateStoreTake(b *testing.B) {
	s := inproc.NewRateStore(ports.SystemClock{})
	ctx := context.Background()
	key := "user-1234\x00tool\x00calculate"
	b.ReportAllocs()
	for b.Loop() {
		_, _ = s.Take(ctx, key, 1<<30) // effectively unlimited: measures the allowed path
	}
}

func BenchmarkRateStoreTakeRefused(b *testing.B) {
	s := inproc.NewRateStore(ports.SystemClock{})
	ctx := context.Background()
	key := "user-1234\x00tool\x00calculate"
	_, _ = s.Take(ctx, key, 1)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = s.Take(ctx, key, 1)
	}
}

func BenchmarkRateStoreTakeManyKeys(b *testing.B) {
	s := inproc.NewRateStore(ports.SystemClock{})
	ctx := context.Background()
	keys := make([]string, 50_000)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%d\x00tool\x00calculate", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_, _ = s.Take(ctx, keys[i%len(keys)], 120)
		i++
	}
}

func BenchmarkRateStoreTakeAtCap(b *testing.B) {
	// Every take is a new key against a full store: the eviction path.
	s := inproc.NewRateStore(ports.SystemClock{}, inproc.WithMaxKeys(10_000))
	ctx := context.Background()
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = fmt.Sprintf("user-%d\x00tool\x00calculate", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_, _ = s.Take(ctx, keys[i%len(keys)], 1)
		i++
	}
}

func BenchmarkRateStoreTakeParallel(b *testing.B) {
	s := inproc.NewRateStore(ports.SystemClock{})
	ctx := context.Background()
	var id atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		key := fmt.Sprintf("user-%d\x00tool\x00calculate", id.Add(1))
		for pb.Next() {
			_, _ = s.Take(ctx, key, 1<<30)
		}
	})
}

// TestRateStoreRefundGivesBackOneToken: a refunded token can be taken
// again; a refund never makes a bucket fuller than full and never creates a
// bucket.
func TestRateStoreRefundGivesBackOneToken(t *testing.T) {
	clock := newFakeClock()
	s := inproc.NewRateStore(clock)
	ctx := context.Background()
	const key, perMinute = "alice\x00tool\x00calculate", 5
	if n, _ := drain(t, s, key, perMinute); n != perMinute {
		t.Fatalf("burst %d, want %d", n, perMinute)
	}
	s.Refund(ctx, key, perMinute)
	if d := take(t, s, key, perMinute); !d.Allowed {
		t.Fatalf("the refunded token was not available: %+v", d)
	}
	if d := take(t, s, key, perMinute); d.Allowed {
		t.Fatal("a refund gave back more than one token")
	}

	// Refunds on a full bucket add nothing beyond capacity.
	clock.Advance(time.Hour)
	for i := 0; i < 10; i++ {
		s.Refund(ctx, key, perMinute)
	}
	if n, _ := drain(t, s, key, perMinute); n != perMinute {
		t.Fatalf("after refunds on a full bucket the burst is %d, want %d", n, perMinute)
	}
	before := s.Len()
	s.Refund(ctx, "never-seen", perMinute)
	s.Refund(ctx, key, 0)
	if s.Len() != before {
		t.Fatal("a refund created a bucket")
	}
}

func TestFlowStoreContract(t *testing.T) {
	portstest.RunFlowStoreContract(t, func(t *testing.T) (ports.FlowStore, func(time.Duration)) {
		c := newFakeClock()
		return inproc.NewRateStore(c), func(d time.Duration) { c.Advance(d) }
	})
}
