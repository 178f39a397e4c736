package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// outcome is what one caller was told about one write.
type outcome struct {
	ns, content, key string
	err              error
}

// writeBurst has 8 callers each store n memories (4 statements and more
// each) and set n kv entries, and returns what each was told.
func writeBurst(t *testing.T, mem *MemoryStore, n, size int, stopOn func(error) bool) []outcome {
	t.Helper()
	var mu sync.Mutex
	var out []outcome
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range n {
				o := outcome{ns: fmt.Sprintf("ns%d", g%3), content: fmt.Sprintf("w%d-%d ", g, i) + strings.Repeat("x", size), key: fmt.Sprintf("k%d-%d", g, i)}
				_, _, o.err = mem.Store(context.Background(), "alice", memorytest.Write(o.ns, o.content, time.Now()), ports.MemoryLimits{})
				kerr := mem.KVSet(context.Background(), "alice", ports.KVEntry{Key: o.key, Value: o.content, UpdatedAt: time.Now()}, ports.MemoryLimits{})
				mu.Lock()
				out = append(out, o, outcome{key: o.key, content: o.content, err: kerr})
				mu.Unlock()
				if stopOn(o.err) || stopOn(kerr) {
					return
				}
			}
		})
	}
	wg.Wait()
	return out
}

// checkAllOrNothing fails the test unless every acknowledged write is
// stored whole, no refused one is stored at all, and the counters the
// bounds are checked against agree with the rows.
func checkAllOrNothing(t *testing.T, s *Store, mem *MemoryStore, outs []outcome) (acked, refused int) {
	t.Helper()
	ctx := context.Background()
	listed := map[string]bool{}
	for _, ns := range []string{"ns0", "ns1", "ns2"} {
		recs, _, err := mem.List(ctx, "alice", ns, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			listed[ns+"/"+r.Content] = true
		}
	}
	for _, o := range outs {
		var present bool
		if o.ns != "" {
			present = listed[o.ns+"/"+o.content]
		} else {
			e, err := mem.KVGet(ctx, "alice", o.key, time.Now())
			present = err == nil && e.Value == o.content
			if err == nil && e.Value != o.content {
				t.Errorf("kv entry %s holds another value", o.key)
			}
		}
		switch {
		case o.err == nil && !present:
			t.Errorf("acknowledged write %s%s is missing", o.ns, o.key)
		case o.err != nil && present:
			t.Errorf("refused write %s%s (%v) was applied", o.ns, o.key, o.err)
		}
		if o.err == nil {
			acked++
		} else {
			refused++
		}
	}
	err := s.Read(ctx, func(tx *Tx) error {
		var bad int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM mem_ns n WHERE n.count != (SELECT count(*) FROM mem_record r WHERE r.owner = n.owner AND r.ns = n.ns)`).Scan(&bad); err != nil {
			return err
		}
		if bad != 0 {
			t.Errorf("%d namespaces count other than the records they hold", bad)
		}
		var used, sum, kvCount, keys int64
		if err := tx.QueryRowContext(ctx, `SELECT used, kv_count FROM mem_owner WHERE owner = ?`, OwnerKey("alice")).Scan(&used, &kvCount); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(length(content) + coalesce(length(metadata), 0)), 0) FROM mem_record WHERE owner = ?`, OwnerKey("alice")).Scan(&sum); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM kv WHERE owner = ?`, OwnerKey("alice")).Scan(&keys); err != nil {
			return err
		}
		if used != sum || kvCount != keys {
			t.Errorf("the owner's counters say %d bytes and %d keys; the rows hold %d and %d", used, kvCount, sum, keys)
		}
		var orphans int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM mem_hash h WHERE NOT EXISTS (SELECT 1 FROM mem_record r WHERE r.owner = h.owner AND r.ns = h.ns AND r.id = h.id)`).Scan(&orphans); err != nil {
			return err
		}
		if orphans != 0 {
			t.Errorf("%d dedup entries point at no record", orphans)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return acked, refused
}

// A commit that fails (injected: every third batch) refuses every call
// of its batch and applies none of them; the batches around it commit.
func TestFailedCommitAppliesNoneOfItsBatch(t *testing.T) {
	s, err := Open(Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	injected := errors.New("injected commit failure")
	var batches, failedCalls atomic.Int64
	testHookBeforeCommit = func() error {
		if batches.Add(1)%3 == 0 {
			return injected
		}
		return nil
	}
	defer func() { testHookBeforeCommit = nil }()
	mem := NewMemoryStore(s)
	outs := writeBurst(t, mem, 30, 200, func(error) bool { return false })
	for _, o := range outs {
		if o.err != nil {
			if !errors.Is(o.err, injected) {
				t.Fatalf("a write failed with %v, want the injected failure", o.err)
			}
			failedCalls.Add(1)
		}
	}
	testHookBeforeCommit = nil
	acked, refused := checkAllOrNothing(t, s, mem, outs)
	if acked == 0 || refused == 0 || batches.Load() >= int64(len(outs)) {
		t.Fatalf("%d acknowledged, %d refused in %d batches for %d writes: the test did not exercise failed group commits", acked, refused, batches.Load(), len(outs))
	}
}

// A full disk met inside a call (SQLite's own SQLITE_FULL, raised here by
// a page limit) rolls its whole batch back: no call of the batch is half
// applied, every one is refused with ErrFull.
func TestDiskFullInsideACallRollsBackTheWholeBatch(t *testing.T) {
	s, err := Open(Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var pages int
	if err := s.w.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count=%d", pages+150)); err != nil {
		t.Fatal(err)
	}
	mem := NewMemoryStore(s)
	outs := writeBurst(t, mem, 1000, 3000, func(err error) bool { return err != nil })
	for _, o := range outs {
		if o.err != nil && !errors.Is(o.err, ports.ErrStoreFull) {
			t.Fatalf("a write failed with %v, want ErrFull", o.err)
		}
	}
	acked, refused := checkAllOrNothing(t, s, mem, outs)
	if acked == 0 || refused == 0 {
		t.Fatalf("%d acknowledged, %d refused: the page limit was never reached", acked, refused)
	}
}
