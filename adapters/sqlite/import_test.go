package sqlite_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The previous release's bbolt store moves into the shared store once:
// memories (with their dedup hashes and usage), kv entries with their
// expiry, and working sets, each under the same owner; the bounds count
// what was imported.
func TestImportBoltMovesMemoriesKVAndWorkingSetsOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old, err := bolt.Open(bolt.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	memNS, err := old.Namespace(boltstores.MemoryNamespace)
	if err != nil {
		t.Fatal(err)
	}
	wsNS, err := old.Namespace(boltstores.WorkingSetsNamespace)
	if err != nil {
		t.Fatal(err)
	}
	oldMem := boltstores.NewMemoryStore(memNS)
	oldWS, err := boltstores.NewWorkingSets(wsNS, wsLimits)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)
	first, _, err := oldMem.Store(ctx, "alice", memorytest.Write("notes", "first memory", at), ports.MemoryLimits{})
	if err != nil {
		t.Fatal(err)
	}
	w := memorytest.Write("other", "with metadata", at.Add(time.Second))
	w.Metadata = []byte(`{"a":1}`)
	if _, _, err := oldMem.Store(ctx, "bob", w, ports.MemoryLimits{}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, e := range []ports.KVEntry{
		{Key: "forever", Value: "v1", UpdatedAt: at},
		{Key: "soon", Value: "v2", UpdatedAt: at, ExpiresAt: now.Add(time.Hour)},
		{Key: "gone", Value: "v3", UpdatedAt: at, ExpiresAt: now.Add(-time.Hour)},
	} {
		if err := oldMem.KVSet(ctx, "alice", e, ports.MemoryLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	item := ports.WorkingSetItem{Kind: "doc", Identifier: "a.md", Note: "n"}
	if _, err := oldWS.Pin(ctx, "alice", "task", []ports.WorkingSetItem{item}); err != nil {
		t.Fatal(err)
	}

	s := openStore(t, dir)
	src := sqlite.BoltSource{Memory: oldMem, WorkingSets: oldWS}
	if done, err := s.Imported(ctx); err != nil || done {
		t.Fatalf("Imported before = %v %v", done, err)
	}
	if imported, err := s.ImportBolt(ctx, src); err != nil || !imported {
		t.Fatalf("ImportBolt = %v %v", imported, err)
	}
	// A later write to the old store is not imported again: it runs once.
	if _, _, err := oldMem.Store(ctx, "alice", memorytest.Write("notes", "after the import", at), ports.MemoryLimits{}); err != nil {
		t.Fatal(err)
	}
	if imported, err := s.ImportBolt(ctx, src); err != nil || imported {
		t.Fatalf("second ImportBolt = %v %v", imported, err)
	}

	mem := sqlite.NewMemoryStore(s)
	list, _, err := mem.List(ctx, "alice", "notes", 0)
	if err != nil || len(list) != 1 || list[0].ID != first.ID || !list[0].CreatedAt.Equal(at) || list[0].Provenance != first.Provenance {
		t.Fatalf("imported memories = %+v %v, want %+v", list, err, first)
	}
	if list, _, _ := mem.List(ctx, "bob", "other", 0); len(list) != 1 || string(list[0].Metadata) != `{"a":1}` {
		t.Fatalf("bob's memories = %+v", list)
	}
	// Dedup finds the imported record.
	if r, created, err := mem.Store(ctx, "alice", memorytest.Write("notes", "first memory", now), ports.MemoryLimits{}); err != nil || created || r.ID != first.ID {
		t.Fatalf("dedup after import: %+v %v %v", r, created, err)
	}
	// The quota counts the imported bytes: 12 used, 5 more do not fit in 16.
	if _, _, err := mem.Store(ctx, "alice", memorytest.Write("notes", "12345", now), ports.MemoryLimits{QuotaBytes: 16}); !isLimit(err, "ARROWHEAD_MEMORY_QUOTA_BYTES") {
		t.Fatalf("quota after import: %v", err)
	}
	// Three keys were imported (the expired one included, as it was
	// stored); a fourth does not fit in three until the expired one is
	// purged, which makes room for exactly one.
	if e, err := mem.KVGet(ctx, "alice", "soon", now); err != nil || e.Value != "v2" || e.ExpiresAt.IsZero() {
		t.Fatalf("kv soon = %+v %v", e, err)
	}
	if _, err := mem.KVGet(ctx, "alice", "gone", now); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("expired kv = %v", err)
	}
	lim := ports.MemoryLimits{MaxKeys: 3}
	if err := mem.KVSet(ctx, "alice", ports.KVEntry{Key: "new1", Value: "x", UpdatedAt: now}, lim); err != nil {
		t.Fatalf("kv after purge: %v", err)
	}
	if err := mem.KVSet(ctx, "alice", ports.KVEntry{Key: "new2", Value: "x", UpdatedAt: now}, lim); !isLimit(err, "ARROWHEAD_KV_MAX_KEYS") {
		t.Fatalf("kv bound after import: %v", err)
	}
	set, err := openWorkingSets(t, s, wsLimits).Get(ctx, "alice", "task")
	if err != nil || !slices.Equal(set.Items, []ports.WorkingSetItem{item}) {
		t.Fatalf("imported set = %+v %v", set, err)
	}
	if _, err := openWorkingSets(t, s, ports.WorkingSetLimits{MaxSetsPerOwner: 8, MaxItemsPerSet: 8, MaxSetsTotal: 1}).Pin(ctx, "bob", "x", []ports.WorkingSetItem{item}); !errors.Is(err, ports.ErrSetsExhausted) {
		t.Fatalf("total sets bound after import: %v", err)
	}
}

func isLimit(err error, v string) bool {
	var le *ports.MemoryLimitError
	return errors.As(err, &le) && le.Var == v
}
