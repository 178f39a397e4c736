package boltstores_test

import (
	"errors"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/bolt/boltstores"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

func openWorkingSets(t *testing.T, dir string, l ports.WorkingSetLimits) (*boltstores.WorkingSets, *bolt.Store) {
	t.Helper()
	store, err := bolt.Open(bolt.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := store.Namespace(boltstores.WorkingSetsNamespace)
	if err != nil {
		t.Fatal(err)
	}
	w, err := boltstores.NewWorkingSets(ns, l)
	if err != nil {
		t.Fatal(err)
	}
	return w, store
}

func TestWorkingSetsMeetTheContract(t *testing.T) {
	portstest.RunWorkingSetsContract(t, func(t *testing.T, l ports.WorkingSetLimits) ports.WorkingSets {
		w, store := openWorkingSets(t, t.TempDir(), l)
		t.Cleanup(func() { _ = store.Close() })
		return w
	})
}

func TestWorkingSetsSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	l := ports.WorkingSetLimits{MaxSetsPerOwner: 2, MaxItemsPerSet: 5, MaxSetsTotal: 2}
	w, store := openWorkingSets(t, dir, l)
	item := ports.WorkingSetItem{Kind: ports.PinDoc, Identifier: "a.md", Note: "n"}
	if _, err := w.Pin(t.Context(), "alice", "bug", []ports.WorkingSetItem{item}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Pin(t.Context(), "bob", "bug", []ports.WorkingSetItem{item}); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	w, store = openWorkingSets(t, dir, l)
	defer store.Close()
	got, err := w.Get(t.Context(), "alice", "bug")
	if err != nil || len(got.Items) != 1 || got.Items[0] != item {
		t.Fatalf("after reopen: %+v, %v", got, err)
	}
	// The store-wide count survived too.
	if _, err := w.Pin(t.Context(), "carol", "x", []ports.WorkingSetItem{item}); !errors.Is(err, ports.ErrSetsExhausted) {
		t.Fatalf("count after reopen: %v", err)
	}
}

func TestWorkingSetsRefuseDamagedValues(t *testing.T) {
	dir := t.TempDir()
	l := ports.WorkingSetLimits{MaxSetsPerOwner: 2, MaxItemsPerSet: 5, MaxSetsTotal: 10}
	w, store := openWorkingSets(t, dir, l)
	for _, owner := range []string{"alice", "bob"} {
		if _, err := w.Pin(t.Context(), owner, "bug", []ports.WorkingSetItem{{Kind: ports.PinDoc, Identifier: owner + ".md"}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	// Copy bob's sealed set over alice's: the seal binds a value to its
	// owner and name, so the swap is detected, not served.
	db, err := bbolt.Open(dir+"/"+bolt.FileName, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		owners := tx.Bucket([]byte(boltstores.WorkingSetsNamespace)).Bucket([]byte("owners"))
		var buckets [][]byte
		_ = owners.ForEach(func(k, _ []byte) error { buckets = append(buckets, append([]byte(nil), k...)); return nil })
		v := append([]byte(nil), owners.Bucket(buckets[0]).Get([]byte("bug"))...)
		return owners.Bucket(buckets[1]).Put([]byte("bug"), v)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	w, store = openWorkingSets(t, dir, l)
	defer store.Close()
	failed := 0
	for _, owner := range []string{"alice", "bob"} {
		if _, err := w.Get(t.Context(), owner, "bug"); err != nil && !errors.Is(err, ports.ErrNotFound) {
			failed++
		}
	}
	if failed != 1 {
		t.Fatalf("%d damaged reads refused, want 1", failed)
	}
}
