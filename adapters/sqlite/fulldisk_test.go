package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/internal/tmpfs"
	"github.com/arrowhead-go/arrowhead/ports"
)

// fullDiskConfig fits a 2 MiB tmpfs: a reserve of 256 KiB, and the
// degraded floor at 1 MiB.
func fullDiskConfig(dir string) sqlite.Config {
	return sqlite.Config{Dir: dir, ReserveBytes: 256 << 10, MinFreeBytes: 1 << 20}
}

func openFull(t *testing.T, dir string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(fullDiskConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func wantHealth(t *testing.T, s *sqlite.Store, want ports.HealthState, reason string) {
	t.Helper()
	st, why := s.HealthReason(context.Background())
	if st != want || !strings.Contains(why, reason) {
		t.Fatalf("health = %s (%q), want %s with %q", st, why, want, reason)
	}
}

// fill stores memories of size bytes from 8 callers until each is refused
// for a full disk, and returns what was acknowledged (content by id). Any
// refusal other than the full disk fails the test.
func fill(t *testing.T, mem *sqlite.MemoryStore, run string, size int) map[string]string {
	t.Helper()
	var mu sync.Mutex
	acked := map[string]string{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				content := fmt.Sprintf("%s-%d-%d ", run, g, i) + strings.Repeat("x", size)
				rec, _, err := mem.Store(context.Background(), "alice", memorytest.Write(fmt.Sprintf("ns%d", g%2), content, time.Now()), ports.MemoryLimits{})
				if err != nil {
					if !errors.Is(err, ports.ErrStoreFull) || !errors.Is(err, sqlite.ErrFull) {
						t.Errorf("writer %d: %v, want the full-disk refusal", g, err)
					}
					return
				}
				mu.Lock()
				acked[rec.ID] = content
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged before the disk filled")
	}
	return acked
}

// stored is every memory of alice, content by id.
func stored(t *testing.T, mem *sqlite.MemoryStore) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, ns := range []string{"ns0", "ns1"} {
		recs, _, err := mem.List(context.Background(), "alice", ns, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			out[r.ID] = r.Content
		}
	}
	return out
}

// On a real full disk (a 2 MiB tmpfs): writes are refused whole with the
// full-disk error and /ready says why; every acknowledged write is there
// and no refused one; deletes of memories, kv entries and working sets
// keep working; once they have freed enough, writes work again and
// /ready is ok. A restart on the full disk serves reads and deletes.
func TestFullDiskRefusesWritesWholeAndKeepsDeletesWorking(t *testing.T) {
	dir := tmpfs.Mount(t, "2m")
	s := openFull(t, dir)
	wantHealth(t, s, ports.HealthOK, "")
	mem := sqlite.NewMemoryStore(s)
	ws := openWorkingSets(t, s, wsLimits)
	ctx := context.Background()
	for i := range 3 {
		if err := mem.KVSet(ctx, "alice", ports.KVEntry{Key: fmt.Sprint("k", i), Value: "v", UpdatedAt: time.Now()}, ports.MemoryLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	pin := []ports.WorkingSetItem{{Kind: ports.PinDoc, Identifier: "a.md"}, {Kind: ports.PinDoc, Identifier: "b.md"}}
	if _, err := ws.Pin(ctx, "alice", "task", pin); err != nil {
		t.Fatal(err)
	}

	acked := fill(t, mem, "first", 6000)
	wantHealth(t, s, ports.HealthDown, "disk is full")
	if got := stored(t, mem); !maps.Equal(got, acked) {
		t.Fatalf("after the disk filled the store holds %d memories, %d were acknowledged (a refused write was applied, or an acknowledged one lost)", len(got), len(acked))
	}
	// Every other write is refused whole, before it runs.
	if err := mem.KVSet(ctx, "alice", ports.KVEntry{Key: "new", Value: "v", UpdatedAt: time.Now()}, ports.MemoryLimits{}); !errors.Is(err, ports.ErrStoreFull) {
		t.Fatalf("kv_set on a full disk = %v, want ErrStoreFull", err)
	}
	if _, err := ws.Pin(ctx, "alice", "task", []ports.WorkingSetItem{{Kind: ports.PinDoc, Identifier: "c.md"}}); !errors.Is(err, ports.ErrStoreFull) {
		t.Fatalf("pin on a full disk = %v, want ErrStoreFull", err)
	}
	// Deletes of every kind work.
	if err := mem.KVDelete(ctx, "alice", "k0"); err != nil {
		t.Fatalf("kv_delete on a full disk: %v", err)
	}
	if _, err := mem.KVGet(ctx, "alice", "k0", time.Now()); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("kv_get after the delete: %v", err)
	}
	if set, err := ws.Unpin(ctx, "alice", "task", pin[:1]); err != nil || len(set.Items) != 1 {
		t.Fatalf("unpin on a full disk: %+v %v", set, err)
	}

	// A restart on the full disk: it opens, reads and deletes.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wantHealth(t, s, ports.HealthDown, "closed")
	s = openFull(t, dir)
	mem = sqlite.NewMemoryStore(s)
	ws = openWorkingSets(t, s, wsLimits)
	wantHealth(t, s, ports.HealthDown, "disk is full")
	if got := stored(t, mem); !maps.Equal(got, acked) {
		t.Fatalf("after a restart the store holds %d memories, want the %d acknowledged", len(got), len(acked))
	}
	if err := ws.Delete(ctx, "alice", "task"); err != nil {
		t.Fatalf("working set delete on a full disk: %v", err)
	}
	if err := mem.KVDelete(ctx, "alice", "k1"); err != nil {
		t.Fatalf("kv_delete after a restart on a full disk: %v", err)
	}

	// Deleting the memories frees the space: the reserve comes back and
	// writes work again.
	ids := slices.Sorted(maps.Keys(acked))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(ids); i += 4 {
				ns := "ns0"
				if !strings.Contains(acked[ids[i]], "-0-") && !strings.Contains(acked[ids[i]], "-2-") &&
					!strings.Contains(acked[ids[i]], "-4-") && !strings.Contains(acked[ids[i]], "-6-") {
					ns = "ns1"
				}
				if err := mem.Delete(ctx, "alice", ns, ids[i]); err != nil {
					t.Errorf("memory delete on a full disk: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if got := stored(t, mem); len(got) != 0 {
		t.Fatalf("%d memories left after deleting them all", len(got))
	}
	wantHealth(t, s, ports.HealthOK, "")
	if err := mem.KVSet(ctx, "alice", ports.KVEntry{Key: "after", Value: "space returned", UpdatedAt: time.Now()}, ports.MemoryLimits{}); err != nil {
		t.Fatalf("kv_set once space is freed: %v", err)
	}
	// And the next fill is refused as cleanly.
	again := fill(t, mem, "second", 6000)
	if got := stored(t, mem); !maps.Equal(got, again) {
		t.Fatalf("after the second fill the store holds %d memories, %d were acknowledged", len(got), len(again))
	}
}

// A disk another program fills while the store holds its reserve, found
// full at a restart: opening takes the reserve (the store's index and log
// are created again at open), the store serves reads and deletes and
// refuses writes; once the other program's file is gone the reserve comes
// back and writes work again.
func TestDiskFilledByAnotherProgram(t *testing.T) {
	dir := tmpfs.Mount(t, "2m")
	s := openFull(t, dir)
	mem := sqlite.NewMemoryStore(s)
	ctx := context.Background()
	for i := range 3 {
		if err := mem.KVSet(ctx, "alice", ports.KVEntry{Key: fmt.Sprint("k", i), Value: "v", UpdatedAt: time.Now()}, ports.MemoryLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	f.Close()

	s = openFull(t, dir)
	mem = sqlite.NewMemoryStore(s)
	// Opening took the reserve: the shared-memory index and the log
	// needed room.
	wantHealth(t, s, ports.HealthDown, "disk is full")
	if err := mem.KVSet(ctx, "alice", ports.KVEntry{Key: "new", Value: strings.Repeat("v", 5000), UpdatedAt: time.Now()}, ports.MemoryLimits{}); !errors.Is(err, ports.ErrStoreFull) {
		t.Fatalf("kv_set on the full disk = %v, want ErrStoreFull", err)
	}
	if err := mem.KVDelete(ctx, "alice", "k0"); err != nil {
		t.Fatalf("kv_delete on the full disk: %v", err)
	}
	if _, err := mem.KVGet(ctx, "alice", "new", time.Now()); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("the refused kv_set was applied: %v", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	wantHealth(t, s, ports.HealthOK, "")
	if err := mem.KVSet(ctx, "alice", ports.KVEntry{Key: "new", Value: "v", UpdatedAt: time.Now()}, ports.MemoryLimits{}); err != nil {
		t.Fatalf("kv_set once the disk has room: %v", err)
	}
}
