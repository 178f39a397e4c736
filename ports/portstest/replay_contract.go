package portstest

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// OpenReplayGuard opens an empty replay guard for one subtest. advance moves
// the store's notion of time forward by d (a fake clock's step, or a real
// sleep for a store that reads a server's clock).
type OpenReplayGuard func(t *testing.T) (store ports.ReplayGuard, advance func(d time.Duration))

// RunReplayGuardContract runs the behaviour every ports.ReplayGuard backend
// must have (the in-process rate store's, Redis's): a key is new exactly
// once, keys are distinct byte for byte, a key is forgotten only after its
// time to live, and concurrent first uses admit exactly one.
func RunReplayGuardContract(t *testing.T, open OpenReplayGuard) {
	ctx := context.Background()

	t.Run("a key is new once and seen after", func(t *testing.T) {
		s, _ := open(t)
		for i, want := range []bool{true, false, false} {
			got, err := s.FirstSeen(ctx, "jkt\x00jti-1", time.Minute)
			if err != nil || got != want {
				t.Fatalf("use %d: FirstSeen = %v, %v; want %v", i+1, got, err, want)
			}
		}
	})

	t.Run("keys are distinct byte for byte", func(t *testing.T) {
		s, _ := open(t)
		for _, k := range []string{"a", "a\x00", "A", "b", "a ", string(make([]byte, 4096))} {
			got, err := s.FirstSeen(ctx, k, time.Minute)
			if err != nil || !got {
				t.Fatalf("FirstSeen(%q) = %v, %v; want a first use", k, got, err)
			}
		}
	})

	t.Run("a key is forgotten only after its time to live", func(t *testing.T) {
		s, advance := open(t)
		if got, err := s.FirstSeen(ctx, "short", 1500*time.Millisecond); err != nil || !got {
			t.Fatalf("first use = %v, %v", got, err)
		}
		if got, err := s.FirstSeen(ctx, "long", time.Hour); err != nil || !got {
			t.Fatalf("first use = %v, %v", got, err)
		}
		advance(500 * time.Millisecond)
		if got, err := s.FirstSeen(ctx, "short", 1500*time.Millisecond); err != nil || got {
			t.Fatalf("within its ttl FirstSeen = %v, %v; want seen", got, err)
		}
		advance(1500 * time.Millisecond)
		if got, err := s.FirstSeen(ctx, "short", time.Minute); err != nil || !got {
			t.Fatalf("after its ttl FirstSeen = %v, %v; want new again", got, err)
		}
		if got, err := s.FirstSeen(ctx, "long", time.Hour); err != nil || got {
			t.Fatalf("long-lived key FirstSeen = %v, %v; want still seen", got, err)
		}
	})

	t.Run("a seen key keeps its first expiry", func(t *testing.T) {
		// A replay must not extend the key's life: the window is the
		// first use's, whatever later uses ask for.
		s, advance := open(t)
		if got, err := s.FirstSeen(ctx, "k", 1500*time.Millisecond); err != nil || !got {
			t.Fatalf("first use = %v, %v", got, err)
		}
		if got, err := s.FirstSeen(ctx, "k", time.Hour); err != nil || got {
			t.Fatalf("second use = %v, %v; want seen", got, err)
		}
		advance(2 * time.Second)
		if got, err := s.FirstSeen(ctx, "k", time.Minute); err != nil || !got {
			t.Fatalf("after the first ttl FirstSeen = %v, %v; want new", got, err)
		}
	})

	t.Run("concurrent first uses admit exactly one", func(t *testing.T) {
		s, _ := open(t)
		const n = 16
		for round := range 4 {
			key := "race-" + strconv.Itoa(round)
			var wins atomic.Int32
			var wg sync.WaitGroup
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got, err := s.FirstSeen(ctx, key, time.Minute)
					if err != nil {
						t.Error(err)
					}
					if got {
						wins.Add(1)
					}
				}()
			}
			wg.Wait()
			if wins.Load() != 1 {
				t.Fatalf("round %d: %d first uses admitted; want exactly 1", round, wins.Load())
			}
		}
	})
}
