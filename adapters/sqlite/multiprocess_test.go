package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Memories and kv entries written through one process are read through
// the other, both ways, with calls interleaved; dedup holds across them.
func TestMemoriesAndKVAreSharedBetweenProcesses(t *testing.T) {
	dir := t.TempDir()
	other := startHelper(t, dir)
	mem := sqlite.NewMemoryStore(openStore(t, dir))
	ctx := context.Background()

	r := other.do(command{Op: "mem_store", Owner: "alice", NS: "notes", Content: "written by the helper"})
	if r.Err != "" || !r.Created {
		t.Fatalf("helper store: %+v", r)
	}
	list, _, err := mem.List(ctx, "alice", "notes", 0)
	if err != nil || len(list) != 1 || list[0].Content != "written by the helper" || list[0].ID != r.ID {
		t.Fatalf("this process lists %+v, %v", list, err)
	}
	// The same content from this process dedups onto the helper's record.
	rec, created, err := mem.Store(ctx, "alice", memorytest.Write("notes", "written by the helper", time.Now()), ports.MemoryLimits{})
	if err != nil || created || rec.ID != r.ID {
		t.Fatalf("dedup across processes: %+v created=%v %v", rec, created, err)
	}
	if _, _, err := mem.Store(ctx, "alice", memorytest.Write("notes", "written here", time.Now()), ports.MemoryLimits{}); err != nil {
		t.Fatal(err)
	}
	if r := other.do(command{Op: "mem_list", Owner: "alice", NS: "notes"}); r.Err != "" ||
		!slices.Equal(r.Contents, []string{"written by the helper", "written here"}) {
		t.Fatalf("helper lists %+v", r)
	}
	if r := other.do(command{Op: "mem_list", Owner: "bob", NS: "notes"}); len(r.Contents) != 0 {
		t.Fatalf("another owner sees %+v", r)
	}

	if r := other.do(command{Op: "kv_set", Owner: "alice", Key: "k", Value: "from helper"}); r.Err != "" {
		t.Fatal(r.Err)
	}
	if e, err := mem.KVGet(ctx, "alice", "k", time.Now()); err != nil || e.Value != "from helper" {
		t.Fatalf("kv_get here: %+v %v", e, err)
	}
	if err := mem.KVDelete(ctx, "alice", "k"); err != nil {
		t.Fatal(err)
	}
	if r := other.do(command{Op: "kv_get", Owner: "alice", Key: "k"}); r.Err != "not found" {
		t.Fatalf("helper reads a deleted key: %+v", r)
	}
}

// Working sets pinned through two processes merge into one set.
func TestWorkingSetsAreSharedBetweenProcesses(t *testing.T) {
	dir := t.TempDir()
	other := startHelper(t, dir)
	ws := openWorkingSets(t, openStore(t, dir), wsLimits)
	ctx := context.Background()
	a := ports.WorkingSetItem{Kind: "doc", Identifier: "a.md"}
	b := ports.WorkingSetItem{Kind: "doc", Identifier: "b.md", Note: "second"}
	if r := other.do(command{Op: "ws_pin", Owner: "alice", Key: "task", Items: []ports.WorkingSetItem{a}}); r.Err != "" {
		t.Fatal(r.Err)
	}
	set, err := ws.Pin(ctx, "alice", "task", []ports.WorkingSetItem{b})
	if err != nil || !slices.Equal(set.Items, []ports.WorkingSetItem{a, b}) {
		t.Fatalf("pin here: %+v %v", set, err)
	}
	if r := other.do(command{Op: "ws_get", Owner: "alice", Key: "task"}); r.Err != "" || !slices.Equal(r.Items, []ports.WorkingSetItem{a, b}) {
		t.Fatalf("helper reads %+v", r)
	}
	if err := ws.Delete(ctx, "alice", "task"); err != nil {
		t.Fatal(err)
	}
	if r := other.do(command{Op: "ws_get", Owner: "alice", Key: "task"}); r.Err != "not found" {
		t.Fatalf("helper reads a deleted set: %+v", r)
	}
}

// Two processes writing into one namespace at once cannot overshoot its
// bound between them: the check and the write share one transaction.
func TestBoundsHoldAcrossConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	helpers := []*helper{startHelper(t, dir), startHelper(t, dir)}
	lim := ports.MemoryLimits{MaxEntriesPerNamespace: 150}
	var wg sync.WaitGroup
	stored := make([]int, len(helpers))
	for i, h := range helpers {
		wg.Go(func() {
			for j := range 100 {
				r := h.do(command{Op: "mem_store", Owner: "alice", NS: "full", Content: fmt.Sprintf("p%d-%d", i, j), Limits: lim})
				switch {
				case r.Err == "":
					stored[i]++
				case r.Err != "limit ARROWHEAD_MEMORY_MAX_ENTRIES_PER_NAMESPACE":
					t.Errorf("helper %d: %s", i, r.Err)
					return
				}
			}
		})
	}
	wg.Wait()
	list, _, err := sqlite.NewMemoryStore(openStore(t, dir)).List(context.Background(), "alice", "full", 0)
	if err != nil || len(list) != 150 || stored[0]+stored[1] != 150 {
		t.Fatalf("stored %v, listed %d (%v); want 150 in all", stored, len(list), err)
	}
}

// SIGKILL of two processes in the middle of write bursts loses none of
// the writes they acknowledged.
func TestSIGKILLDuringWriteBurstsLosesNothingAcknowledged(t *testing.T) {
	dir := t.TempDir()
	helpers := []*helper{startHelper(t, dir), startHelper(t, dir)}
	var mu sync.Mutex
	var acked []string
	perProcess := make([]int, len(helpers))
	var wg sync.WaitGroup
	for i, h := range helpers {
		h.send(command{Op: "burst", Owner: "alice", Key: fmt.Sprintf("p%d", i)})
		wg.Go(func() {
			for {
				var r reply
				if err := h.out.Decode(&r); err != nil {
					return // killed
				}
				if r.Err != "" {
					t.Errorf("helper %d refused a write: %s", i, r.Err)
					return
				}
				mu.Lock()
				acked = append(acked, r.Acked)
				perProcess[i]++
				mu.Unlock()
			}
		})
	}
	// Let both write for a while (each has its turn at the write lock),
	// then kill them mid-burst.
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		done := min(perProcess[0], perProcess[1]) >= 100
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, h := range helpers {
		_ = h.cmd.Process.Signal(syscall.SIGKILL)
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if min(perProcess[0], perProcess[1]) < 100 {
		t.Fatalf("acknowledged writes per process before the kill: %v; one process did not get its turn", perProcess)
	}
	mem := sqlite.NewMemoryStore(openStore(t, dir))
	for _, k := range acked {
		e, err := mem.KVGet(context.Background(), "alice", k, time.Now())
		if err != nil || e.Value != "v"+k {
			t.Fatalf("acknowledged write %s lost after SIGKILL: %+v %v", k, e, err)
		}
	}
}
