package portstest

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// KillPropagation is the longest a contract test waits for a change made
// on one board to reach a watcher of another: the budget.
const KillPropagation = time.Second

// KillBoardContract runs the ports.KillBoard contract. open returns two
// boards on one backing store, as two replicas would hold them.
func KillBoardContract(t *testing.T, open func(t *testing.T) (a, b ports.KillBoard)) {
	t.Run("a rule thrown on one is listed and announced on the other", func(t *testing.T) {
		a, b := open(t)
		var heard atomic.Int32
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); b.Watch(ctx, func() { heard.Add(1) }) }()
		t.Cleanup(func() { cancel(); <-done })
		waitUntil(t, 5*time.Second, "the watcher's first call", func() bool { return heard.Load() > 0 })

		r := ports.KillRule{ID: "r1", Tool: "safe_fetch", Caller: "alice", Until: time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond),
			Reason: "incident", By: "ops", Created: time.Now().UTC().Truncate(time.Millisecond)}
		before := heard.Load()
		start := time.Now()
		if err := a.Throw(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, KillPropagation, "the throw's announcement", func() bool { return heard.Load() > before })
		t.Logf("announced after %v", time.Since(start))
		got, err := b.List(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != r.ID || got[0].Tool != r.Tool || got[0].Caller != r.Caller || !got[0].Until.Equal(r.Until) ||
			got[0].Reason != r.Reason || got[0].By != r.By || !got[0].Created.Equal(r.Created) {
			t.Fatalf("listed %+v, want %+v", got, r)
		}

		before = heard.Load()
		found, err := a.Lift(t.Context(), r.ID)
		if err != nil || !found {
			t.Fatalf("lift: %v %v", found, err)
		}
		waitUntil(t, KillPropagation, "the lift's announcement", func() bool { return heard.Load() > before })
		if got, _ := b.List(t.Context()); len(got) != 0 {
			t.Fatalf("after the lift: %+v", got)
		}
		if found, err := b.Lift(t.Context(), r.ID); err != nil || found {
			t.Fatalf("lifting twice: %v %v", found, err)
		}
	})

	t.Run("a rule that ended is not listed; a rethrow replaces", func(t *testing.T) {
		a, b := open(t)
		now := time.Now().UTC()
		for _, r := range []ports.KillRule{
			{ID: "old", Family: "docs", Until: now.Add(-time.Second), Created: now.Add(-time.Hour)},
			{ID: "forever", Caller: "mallory", Created: now.Add(-time.Minute)},
			{ID: "trip", Family: ports.EgressFamily, Caller: "eve", Until: now.Add(time.Minute), Created: now},
		} {
			if err := a.Throw(t.Context(), r); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Throw(t.Context(), ports.KillRule{ID: "trip", Family: ports.EgressFamily, Caller: "eve", Until: now.Add(time.Hour), Created: now}); err != nil {
			t.Fatal(err)
		}
		got, err := b.List(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, 0, len(got))
		for _, r := range got {
			ids = append(ids, r.ID)
		}
		if !slices.Equal(ids, []string{"forever", "trip"}) || !got[1].Until.Equal(now.Add(time.Hour)) {
			t.Fatalf("listed %+v", got)
		}
	})
}

func waitUntil(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
