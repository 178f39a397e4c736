// Package memorytest is the contract suite every ports.MemoryBackend
// passes: the embedded store and PostgreSQL run the same tests.
package memorytest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Factory opens an empty backend for one test.
type Factory func(t *testing.T) ports.MemoryBackend

var base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Write builds a validated write as the core would.
func Write(namespace, content string, at time.Time) ports.MemoryWrite {
	h := sha256.Sum256([]byte(content))
	return ports.MemoryWrite{Namespace: namespace, Content: content, Hash: hex.EncodeToString(h[:]), NewID: NewID(),
		Provenance: ports.Provenance{Tool: "memory_store", Caller: "alice", At: at}}
}

// NewID is a random 128-bit hex id.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

var noLimits = ports.MemoryLimits{}

// Run runs the contract suite.
func Run(t *testing.T, open Factory) {
	ctx := context.Background()
	t.Run("store dedups identical content and keeps provenance", func(t *testing.T) {
		m := open(t)
		w := Write("prefs", "prefers metric units", base)
		w.Metadata = []byte(`{"source":"chat"}`)
		r1, created, err := m.Store(ctx, "alice", w, noLimits)
		if err != nil || !created || r1.ID != w.NewID {
			t.Fatalf("store: %v created=%v id=%q", err, created, r1.ID)
		}
		w2 := Write("prefs", "prefers metric units", base.Add(time.Minute))
		r2, created, err := m.Store(ctx, "alice", w2, noLimits)
		if err != nil || created || r2.ID != r1.ID || !r2.UpdatedAt.Equal(base) {
			t.Fatalf("dedup: %v created=%v id=%q want %q updated %v", err, created, r2.ID, r1.ID, r2.UpdatedAt)
		}
		if r2.Provenance.Tool != "memory_store" || r2.Provenance.Caller != "alice" || !r2.Provenance.At.Equal(base) {
			t.Fatalf("provenance = %+v", r2.Provenance)
		}
		list, trunc, err := m.List(ctx, "alice", "prefs", 10)
		if err != nil || trunc || len(list) != 1 || string(list[0].Metadata) != `{"source":"chat"}` || list[0].Size() != len("prefers metric units")+len(`{"source":"chat"}`) {
			t.Fatalf("list = %+v %v %v", list, trunc, err)
		}
	})
	t.Run("records round trip byte for byte with their provenance", func(t *testing.T) {
		m := open(t)
		at := base.Add(123456 * time.Microsecond)
		w := Write("raw", "nul \x00 byte, ünïcode and \"quotes\"", at)
		w.Metadata = []byte(`{"k":"v\u0000"}`)
		w.Provenance = ports.Provenance{Tool: "memory_store", Caller: "alice@example.com", At: at}
		stored, _, err := m.Store(ctx, "alice", w, noLimits)
		if err != nil {
			t.Fatal(err)
		}
		list, _, _ := m.List(ctx, "alice", "raw", 10)
		hits, _, _ := m.Search(ctx, "alice", "raw", "unicode ünïcode", nil, 5)
		if len(list) != 1 || len(hits) != 1 {
			t.Fatalf("list %d, search %d", len(list), len(hits))
		}
		for what, r := range map[string]ports.MemoryRecord{"store": stored, "list": list[0], "search": hits[0].Record} {
			if r.Content != w.Content || string(r.Metadata) != string(w.Metadata) || r.Hash != w.Hash || r.Namespace != "raw" ||
				r.Provenance != w.Provenance || !r.CreatedAt.Equal(at) || !r.UpdatedAt.Equal(at) {
				t.Errorf("%s returned %+v", what, r)
			}
		}
		e := ports.KVEntry{Key: "raw", Value: "v\x00w", UpdatedAt: at, Provenance: ports.Provenance{Tool: "kv_set", Caller: "alice@example.com", At: at}}
		if err := m.KVSet(ctx, "alice", e, noLimits); err != nil {
			t.Fatal(err)
		}
		got, err := m.KVGet(ctx, "alice", "raw", at)
		if err != nil || got.Value != e.Value || got.Provenance != e.Provenance || !got.UpdatedAt.Equal(at) || !got.ExpiresAt.IsZero() {
			t.Fatalf("kv = %+v %v", got, err)
		}
	})
	t.Run("update in place by id", func(t *testing.T) {
		m := open(t)
		r1, _, _ := m.Store(ctx, "alice", Write("n", "first", base), noLimits)
		u := Write("n", "second", base.Add(time.Hour))
		u.ID = r1.ID
		r2, created, err := m.Store(ctx, "alice", u, noLimits)
		if err != nil || created || r2.ID != r1.ID || r2.Content != "second" || !r2.CreatedAt.Equal(base) || !r2.UpdatedAt.Equal(base.Add(time.Hour)) {
			t.Fatalf("update: %+v %v %v", r2, created, err)
		}
		list, _, _ := m.List(ctx, "alice", "n", 10)
		if len(list) != 1 || list[0].Content != "second" {
			t.Fatalf("after update: %+v", list)
		}
		// The old content no longer dedups onto the record.
		r3, created, _ := m.Store(ctx, "alice", Write("n", "first", base), noLimits)
		if !created || r3.ID == r1.ID {
			t.Fatalf("old content still deduped to %q", r3.ID)
		}
		missing := Write("n", "x", base)
		missing.ID = NewID()
		if _, _, err := m.Store(ctx, "alice", missing, noLimits); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("update of a missing id: %v", err)
		}
	})
	t.Run("owners are isolated and a foreign id is missing", func(t *testing.T) {
		m := open(t)
		r, _, _ := m.Store(ctx, "alice", Write("n", "secret plan", base), noLimits)
		if err := m.Delete(ctx, "bob", "n", r.ID); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("foreign delete: %v", err)
		}
		if err := m.Delete(ctx, "bob", "n", NewID()); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("missing delete: %v", err)
		}
		u := Write("n", "hijack", base)
		u.ID = r.ID
		if _, _, err := m.Store(ctx, "bob", u, noLimits); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("foreign update: %v", err)
		}
		if l, _, _ := m.List(ctx, "bob", "n", 10); len(l) != 0 {
			t.Fatalf("bob lists %d", len(l))
		}
		if h, _, _ := m.Search(ctx, "bob", "n", "secret plan", nil, 5); len(h) != 0 {
			t.Fatalf("bob finds %d", len(h))
		}
		// Same content for another owner is another record.
		rb, created, _ := m.Store(ctx, "bob", Write("n", "secret plan", base), noLimits)
		if !created || rb.ID == r.ID {
			t.Fatal("dedup crossed owners")
		}
		if err := m.Delete(ctx, "alice", "n", r.ID); err != nil {
			t.Fatal(err)
		}
		if err := m.Delete(ctx, "alice", "n", r.ID); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
	})
	t.Run("keyword search ranks and says keyword", func(t *testing.T) {
		m := open(t)
		for i, c := range []string{"the user prefers metric units", "coffee black, no sugar", "units of work are tracked in Jira"} {
			if _, _, err := m.Store(ctx, "alice", Write("p", c, base.Add(time.Duration(i)*time.Second)), noLimits); err != nil {
				t.Fatal(err)
			}
		}
		hits, recall, err := m.Search(ctx, "alice", "p", "metric UNITS", nil, 5)
		if err != nil || recall != ports.RecallKeyword || len(hits) != 2 || hits[0].Record.Content != "the user prefers metric units" {
			t.Fatalf("search = %+v %q %v", hits, recall, err)
		}
		if hits, _, _ := m.Search(ctx, "alice", "p", "units", nil, 1); len(hits) != 1 {
			t.Fatalf("k not applied: %d", len(hits))
		}
		if hits, _, _ := m.Search(ctx, "alice", "p", "zebra", nil, 5); len(hits) != 0 {
			t.Fatalf("unrelated query found %d", len(hits))
		}
	})
	t.Run("entry bound follows deletes", func(t *testing.T) {
		m := open(t)
		lim := ports.MemoryLimits{MaxEntriesPerNamespace: 2, MaxNamespaces: 2, QuotaBytes: 1000, MaxKeys: 2}
		first, _, err := m.Store(ctx, "alice", Write("a", "one", base), lim)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.Store(ctx, "alice", Write("a", "two", base), lim); err != nil {
			t.Fatal(err)
		}
		// Deleting one of the two entries frees exactly one place.
		if err := m.Delete(ctx, "alice", "a", first.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.Store(ctx, "alice", Write("a", "four", base), lim); err != nil {
			t.Fatalf("after a delete: %v", err)
		}
		var le *ports.MemoryLimitError
		if _, _, err := m.Store(ctx, "alice", Write("a", "five", base), lim); !errors.As(err, &le) || le.Var != "ARROWHEAD_MEMORY_MAX_ENTRIES_PER_NAMESPACE" {
			t.Fatalf("a third entry: %v", err)
		}
		// Emptying the namespace removes it: it no longer counts against
		// MaxNamespaces, and it starts again from no entries.
		list, _, err := m.List(ctx, "alice", "a", 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list {
			if err := m.Delete(ctx, "alice", "a", r.ID); err != nil {
				t.Fatal(err)
			}
		}
		for _, ns := range []string{"b", "c"} {
			if _, _, err := m.Store(ctx, "alice", Write(ns, "six", base), lim); err != nil {
				t.Fatalf("namespace %s after emptying a: %v", ns, err)
			}
		}
	})
	t.Run("bounds", func(t *testing.T) {
		m := open(t)
		lim := ports.MemoryLimits{MaxEntriesPerNamespace: 2, MaxNamespaces: 2, QuotaBytes: 30, MaxKeys: 2}
		must := func(_ ports.MemoryRecord, _ bool, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		limitVar := func(err error) string {
			var le *ports.MemoryLimitError
			if errors.As(err, &le) {
				return le.Var
			}
			return fmt.Sprint(err)
		}
		must(m.Store(ctx, "alice", Write("a", "one", base), lim))
		must(m.Store(ctx, "alice", Write("a", "two", base.Add(time.Second)), lim))
		if _, _, err := m.Store(ctx, "alice", Write("a", "three", base), lim); limitVar(err) != "ARROWHEAD_MEMORY_MAX_ENTRIES_PER_NAMESPACE" {
			t.Fatalf("entries: %v", err)
		}
		must(m.Store(ctx, "alice", Write("a", "one", base), lim)) // a dedup is no new entry
		must(m.Store(ctx, "alice", Write("b", "four", base), lim))
		if _, _, err := m.Store(ctx, "alice", Write("c", "five", base), lim); limitVar(err) != "ARROWHEAD_MEMORY_MAX_NAMESPACES" {
			t.Fatalf("namespaces: %v", err)
		}
		if _, _, err := m.Store(ctx, "alice", Write("b", "a long text past the quota", base), lim); limitVar(err) != "ARROWHEAD_MEMORY_QUOTA_BYTES" {
			t.Fatalf("quota: %v", err)
		}
		// Other owners have their own bounds.
		must(m.Store(ctx, "bob", Write("c", "five", base), lim))
		list, trunc, _ := m.List(ctx, "alice", "a", 1)
		if len(list) != 1 || !trunc || list[0].Content != "one" {
			t.Fatalf("limited list = %+v %v", list, trunc)
		}
		kv := func(key string) error {
			return m.KVSet(ctx, "alice", ports.KVEntry{Key: key, Value: "v", UpdatedAt: base}, lim)
		}
		if err := kv("k1"); err != nil {
			t.Fatal(err)
		}
		if err := kv("k2"); err != nil {
			t.Fatal(err)
		}
		if err := kv("k1"); err != nil {
			t.Fatalf("overwrite counted as a new key: %v", err)
		}
		if err := kv("k3"); limitVar(err) != "ARROWHEAD_KV_MAX_KEYS" {
			t.Fatalf("keys: %v", err)
		}
	})
	t.Run("kv set get delete and ttl", func(t *testing.T) {
		m := open(t)
		lim := ports.MemoryLimits{MaxKeys: 1}
		e := ports.KVEntry{Key: "draft", Value: "v1", ExpiresAt: base.Add(time.Minute), UpdatedAt: base,
			Provenance: ports.Provenance{Tool: "kv_set", Caller: "alice", At: base}}
		if err := m.KVSet(ctx, "alice", e, lim); err != nil {
			t.Fatal(err)
		}
		got, err := m.KVGet(ctx, "alice", "draft", base.Add(30*time.Second))
		if err != nil || got.Value != "v1" || got.Provenance.Tool != "kv_set" || !got.ExpiresAt.Equal(base.Add(time.Minute)) {
			t.Fatalf("get = %+v %v", got, err)
		}
		if _, err := m.KVGet(ctx, "bob", "draft", base); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("bob reads alice's key: %v", err)
		}
		if _, err := m.KVGet(ctx, "alice", "draft", base.Add(time.Minute)); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("expired key read: %v", err)
		}
		// An expired key does not hold a slot.
		later := ports.KVEntry{Key: "other", Value: "v2", UpdatedAt: base.Add(2 * time.Minute)}
		if err := m.KVSet(ctx, "alice", later, lim); err != nil {
			t.Fatalf("expired key kept its slot: %v", err)
		}
		if err := m.KVDelete(ctx, "alice", "other"); err != nil {
			t.Fatal(err)
		}
		if err := m.KVDelete(ctx, "alice", "other"); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
		// The deleted key freed its slot, exactly one.
		at := base.Add(3 * time.Minute)
		if err := m.KVSet(ctx, "alice", ports.KVEntry{Key: "third", Value: "v3", UpdatedAt: at}, lim); err != nil {
			t.Fatalf("a deleted key kept its slot: %v", err)
		}
		var le *ports.MemoryLimitError
		if err := m.KVSet(ctx, "alice", ports.KVEntry{Key: "fourth", Value: "v4", UpdatedAt: at}, lim); !errors.As(err, &le) || le.Var != "ARROWHEAD_KV_MAX_KEYS" {
			t.Fatalf("a second key under a bound of one: %v", err)
		}
	})
	t.Run("concurrent writers keep the bounds", func(t *testing.T) {
		m := open(t)
		lim := ports.MemoryLimits{MaxEntriesPerNamespace: 10}
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				for j := 0; j < 5; j++ {
					_, _, _ = m.Store(ctx, "alice", Write("c", fmt.Sprintf("w%d-%d", i, j), base), lim)
				}
			}(i)
		}
		wg.Wait()
		list, _, err := m.List(ctx, "alice", "c", 100)
		if err != nil || len(list) != 10 {
			t.Fatalf("stored %d entries under a bound of 10 (%v)", len(list), err)
		}
	})
}
