package portstest

import (
	"context"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// OpenFlowStore opens an empty flow store for one subtest. advance moves
// the store's notion of time forward by d (a fake clock's step, or a real
// sleep for a store that reads a server's clock).
type OpenFlowStore func(t *testing.T) (store ports.FlowStore, advance func(d time.Duration))

// RunFlowStoreContract runs the behaviour every ports.FlowStore backend must
// have (the in-process rate store's, Redis's): marks are per caller, counted
// exactly, forgotten after their time to live, and renewed when recorded
// again.
func RunFlowStoreContract(t *testing.T, open OpenFlowStore) {
	ctx := context.Background()

	t.Run("recall counts exactly the recorded marks of that caller", func(t *testing.T) {
		s, _ := open(t)
		if err := s.Remember(ctx, "alice", []uint64{1, 2, 3, 1 << 63}, time.Hour); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			caller string
			marks  []uint64
			want   int
		}{
			{"alice", []uint64{1, 2, 3, 1 << 63}, 4},
			{"alice", []uint64{2, 9, 10}, 1},
			{"alice", []uint64{9, 10}, 0},
			{"alice", nil, 0},
			{"bob", []uint64{1, 2, 3}, 0},
			{"alice\x00", []uint64{1}, 0},
		} {
			n, err := s.Recall(ctx, tc.caller, tc.marks)
			if err != nil || n != tc.want {
				t.Errorf("Recall(%q, %v) = %d, %v; want %d", tc.caller, tc.marks, n, err, tc.want)
			}
		}
	})

	t.Run("marks expire after their time to live", func(t *testing.T) {
		s, advance := open(t)
		if err := s.Remember(ctx, "alice", []uint64{7}, 1500*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := s.Remember(ctx, "alice", []uint64{8}, time.Hour); err != nil {
			t.Fatal(err)
		}
		advance(2 * time.Second)
		if n, err := s.Recall(ctx, "alice", []uint64{7, 8}); err != nil || n != 1 {
			t.Fatalf("after expiry Recall = %d, %v; want 1 (the long-lived mark only)", n, err)
		}
	})

	t.Run("recording again renews a mark", func(t *testing.T) {
		s, advance := open(t)
		if err := s.Remember(ctx, "alice", []uint64{5}, 1500*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		advance(time.Second)
		if err := s.Remember(ctx, "alice", []uint64{5}, 1500*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		advance(time.Second)
		if n, err := s.Recall(ctx, "alice", []uint64{5}); err != nil || n != 1 {
			t.Fatalf("renewed mark: Recall = %d, %v; want 1", n, err)
		}
	})

	t.Run("a large batch is recorded whole", func(t *testing.T) {
		s, _ := open(t)
		marks := make([]uint64, 2500)
		for i := range marks {
			marks[i] = uint64(i)*0x9E3779B97F4A7C15 + 1
		}
		if err := s.Remember(ctx, "carol", marks, time.Hour); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Recall(ctx, "carol", marks); err != nil || n != len(marks) {
			t.Fatalf("Recall = %d, %v; want %d", n, err, len(marks))
		}
	})

	t.Run("a non-positive time to live is refused", func(t *testing.T) {
		s, _ := open(t)
		if err := s.Remember(ctx, "alice", []uint64{1}, 0); err == nil {
			t.Fatal("Remember with ttl 0 succeeded")
		}
		if n, _ := s.Recall(ctx, "alice", []uint64{1}); n != 0 {
			t.Fatal("a refused Remember recorded a mark")
		}
	})
}
