package portstest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

// OpenWorkingSets opens an empty backend under limits for one subtest.
type OpenWorkingSets func(t *testing.T, limits ports.WorkingSetLimits) ports.WorkingSets

// RunWorkingSetsContract runs the behaviour every ports.WorkingSets backend
// must have (the embedded store's, a shared database's): owner isolation,
// the three bounds, pin/unpin/delete semantics and atomic refusals.
func RunWorkingSetsContract(t *testing.T, open OpenWorkingSets) {
	ctx := context.Background()
	limits := ports.WorkingSetLimits{MaxSetsPerOwner: 3, MaxItemsPerSet: 4, MaxSetsTotal: 5}
	doc := func(id, note string) ports.WorkingSetItem {
		return ports.WorkingSetItem{Kind: ports.PinDoc, Identifier: id, Note: note}
	}
	file := func(id string) ports.WorkingSetItem {
		return ports.WorkingSetItem{Kind: ports.PinRepoFile, Identifier: id}
	}

	t.Run("missing set is not found", func(t *testing.T) {
		w := open(t, limits)
		if _, err := w.Get(ctx, "alice", "bug"); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("Get: %v, want ErrNotFound", err)
		}
		if _, err := w.Unpin(ctx, "alice", "bug", []ports.WorkingSetItem{doc("a.md", "")}); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("Unpin: %v, want ErrNotFound", err)
		}
		if err := w.Delete(ctx, "alice", "bug"); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("Delete: %v, want ErrNotFound", err)
		}
	})

	t.Run("pin keeps order and replaces notes in place", func(t *testing.T) {
		w := open(t, limits)
		if _, err := w.Pin(ctx, "alice", "bug", []ports.WorkingSetItem{doc("a.md", "one"), file("main.go")}); err != nil {
			t.Fatal(err)
		}
		got, err := w.Pin(ctx, "alice", "bug", []ports.WorkingSetItem{doc("b.md", ""), doc("a.md", "two")})
		if err != nil {
			t.Fatal(err)
		}
		want := []ports.WorkingSetItem{doc("a.md", "two"), file("main.go"), doc("b.md", "")}
		if got.Name != "bug" || !slices.Equal(got.Items, want) {
			t.Fatalf("Pin = %+v, want %+v", got, want)
		}
		read, err := w.Get(ctx, "alice", "bug")
		if err != nil || !slices.Equal(read.Items, want) {
			t.Fatalf("Get = %+v, %v; want %+v", read, err, want)
		}
		// The same identifier under the other kind is another item.
		if got, err := w.Pin(ctx, "alice", "bug", []ports.WorkingSetItem{file("a.md")}); err != nil || len(got.Items) != 4 {
			t.Fatalf("pin across kinds: %+v, %v", got, err)
		}
	})

	t.Run("owners are isolated", func(t *testing.T) {
		w := open(t, limits)
		if _, err := w.Pin(ctx, "alice", "bug", []ports.WorkingSetItem{doc("secret.md", "mine")}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Get(ctx, "bob", "bug"); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("bob reads alice's set: %v", err)
		}
		if _, err := w.Unpin(ctx, "bob", "bug", []ports.WorkingSetItem{doc("secret.md", "")}); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("bob unpins from alice's set: %v", err)
		}
		if err := w.Delete(ctx, "bob", "bug"); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("bob deletes alice's set: %v", err)
		}
		got, err := w.Pin(ctx, "bob", "bug", []ports.WorkingSetItem{doc("b.md", "")})
		if err != nil || len(got.Items) != 1 {
			t.Fatalf("bob's own set: %+v, %v", got, err)
		}
		mine, err := w.Get(ctx, "alice", "bug")
		if err != nil || !slices.Equal(mine.Items, []ports.WorkingSetItem{doc("secret.md", "mine")}) {
			t.Fatalf("alice's set changed: %+v, %v", mine, err)
		}
		// Owner and name are not concatenated into one key.
		if _, err := w.Pin(ctx, "al", "icebug", []ports.WorkingSetItem{doc("x.md", "")}); err != nil {
			t.Fatal(err)
		}
		if mine, _ := w.Get(ctx, "alice", "bug"); len(mine.Items) != 1 {
			t.Fatalf("keys collide: %+v", mine)
		}
	})

	t.Run("unpin and delete", func(t *testing.T) {
		w := open(t, limits)
		if _, err := w.Pin(ctx, "alice", "bug", []ports.WorkingSetItem{doc("a.md", "n"), file("a.md"), doc("c.md", "")}); err != nil {
			t.Fatal(err)
		}
		got, err := w.Unpin(ctx, "alice", "bug", []ports.WorkingSetItem{doc("a.md", "any note"), doc("never.md", "")})
		if err != nil || !slices.Equal(got.Items, []ports.WorkingSetItem{file("a.md"), doc("c.md", "")}) {
			t.Fatalf("Unpin = %+v, %v", got, err)
		}
		got, err = w.Unpin(ctx, "alice", "bug", []ports.WorkingSetItem{file("a.md"), doc("c.md", "")})
		if err != nil || len(got.Items) != 0 {
			t.Fatalf("Unpin all = %+v, %v", got, err)
		}
		if got, err := w.Get(ctx, "alice", "bug"); err != nil || len(got.Items) != 0 {
			t.Fatalf("an emptied set stays: %+v, %v", got, err)
		}
		if err := w.Delete(ctx, "alice", "bug"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Get(ctx, "alice", "bug"); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("deleted set: %v", err)
		}
	})

	t.Run("item bound is atomic", func(t *testing.T) {
		w := open(t, limits)
		if _, err := w.Pin(ctx, "alice", "bug", []ports.WorkingSetItem{doc("1.md", ""), doc("2.md", ""), doc("3.md", "")}); err != nil {
			t.Fatal(err)
		}
		_, err := w.Pin(ctx, "alice", "bug", []ports.WorkingSetItem{doc("1.md", "renoted"), doc("4.md", ""), doc("5.md", "")})
		if !errors.Is(err, ports.ErrSetFull) {
			t.Fatalf("overfull pin: %v, want ErrSetFull", err)
		}
		got, _ := w.Get(ctx, "alice", "bug")
		if len(got.Items) != 3 || got.Items[0].Note != "" {
			t.Fatalf("a refused pin changed the set: %+v", got)
		}
		// Re-pinning existing items never counts against the bound.
		if _, err := w.Pin(ctx, "alice", "bug", []ports.WorkingSetItem{doc("4.md", ""), doc("1.md", "x"), doc("2.md", "y")}); err != nil {
			t.Fatalf("pin up to the bound: %v", err)
		}
		// A new set larger than the bound is refused and not created.
		if _, err := w.Pin(ctx, "alice", "big", []ports.WorkingSetItem{doc("1.md", ""), doc("2.md", ""), doc("3.md", ""), doc("4.md", ""), doc("5.md", "")}); !errors.Is(err, ports.ErrSetFull) {
			t.Fatalf("oversized new set: %v", err)
		}
		if _, err := w.Get(ctx, "alice", "big"); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("a refused new set exists: %v", err)
		}
	})

	t.Run("per-owner and store-wide set bounds", func(t *testing.T) {
		w := open(t, limits)
		for i := range limits.MaxSetsPerOwner {
			if _, err := w.Pin(ctx, "alice", fmt.Sprintf("s%d", i), []ports.WorkingSetItem{doc("a.md", "")}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Pin(ctx, "alice", "one-more", []ports.WorkingSetItem{doc("a.md", "")}); !errors.Is(err, ports.ErrTooManySets) {
			t.Fatalf("set over the owner bound: %v", err)
		}
		// An existing set still takes pins at the bound.
		if _, err := w.Pin(ctx, "alice", "s0", []ports.WorkingSetItem{doc("b.md", "")}); err != nil {
			t.Fatalf("pin into an existing set at the bound: %v", err)
		}
		for i := range limits.MaxSetsTotal - limits.MaxSetsPerOwner {
			if _, err := w.Pin(ctx, fmt.Sprintf("owner%d", i), "s", []ports.WorkingSetItem{doc("a.md", "")}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Pin(ctx, "carol", "s", []ports.WorkingSetItem{doc("a.md", "")}); !errors.Is(err, ports.ErrSetsExhausted) {
			t.Fatalf("set over the store bound: %v", err)
		}
		// Deleting frees room, for the owner and for the store.
		if err := w.Delete(ctx, "alice", "s1"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Pin(ctx, "carol", "s", []ports.WorkingSetItem{doc("a.md", "")}); err != nil {
			t.Fatalf("after a delete: %v", err)
		}
	})

	t.Run("concurrent pins are all kept", func(t *testing.T) {
		w := open(t, ports.WorkingSetLimits{MaxSetsPerOwner: 8, MaxItemsPerSet: 64, MaxSetsTotal: 64})
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 8 {
					if _, err := w.Pin(ctx, "alice", "shared", []ports.WorkingSetItem{doc(fmt.Sprintf("%d-%d.md", g, i), "")}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		got, err := w.Get(ctx, "alice", "shared")
		if err != nil || len(got.Items) != 64 {
			t.Fatalf("after concurrent pins: %d items, %v", len(got.Items), err)
		}
	})

	t.Run("returned sets are copies", func(t *testing.T) {
		w := open(t, limits)
		got, err := w.Pin(ctx, "alice", "bug", []ports.WorkingSetItem{doc("a.md", "n")})
		if err != nil {
			t.Fatal(err)
		}
		got.Items[0].Identifier = "changed.md"
		read, _ := w.Get(ctx, "alice", "bug")
		if read.Items[0].Identifier != "a.md" {
			t.Fatalf("the store shares its slice: %+v", read)
		}
	})
}
