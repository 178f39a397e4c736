package sqlite_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/ports"
)

const carryIssuer = "https://issuer.example"

// writeLegacyOwners writes a data directory the way builds before issuer-keyed
// principals did: a token caller's memories, kv entries, working sets and
// timers under its bare subject, beside the operator's own.
func writeLegacyOwners(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(sqlite.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mem := sqlite.NewMemoryStore(s)
	now := time.Now().UTC()
	for _, owner := range []string{"alice", ports.OperatorSubject} {
		if _, _, err := mem.Store(ctx, owner, memorytest.Write("notes", owner+" remembers this", now), ports.MemoryLimits{}); err != nil {
			t.Fatal(err)
		}
		if err := mem.KVSet(ctx, owner, ports.KVEntry{Key: "k", Value: owner + "'s value", UpdatedAt: now}, ports.MemoryLimits{}); err != nil {
			t.Fatal(err)
		}
		if _, err := openWorkingSets(t, s, wsLimits).Pin(ctx, owner, "set", []ports.WorkingSetItem{{Kind: ports.PinDoc, Identifier: owner + ".md"}}); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := sqlite.OpenTaskRegistry(ctx, s, ports.TaskConfig{Limits: taskLimits})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close(ctx)
	// Before, a token caller's principal had no issuer: its key was its subject.
	if _, err := reg.Schedule(ctx, ports.NewTimer{Principal: ports.NewPrincipal("alice", "tasks:write"), DueAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
}

var taskLimits = ports.TaskLimits{MaxRunningPerOwner: 4, MaxTimersPerOwner: 4, MaxFinishedPerOwner: 4, FinishedTTL: time.Hour}

// carried is what a process opened on dir (with the token issuer, or
// without) serves.
type carried struct {
	s    *sqlite.Store
	mem  *sqlite.MemoryStore
	sets *sqlite.WorkingSets
	reg  *sqlite.TaskRegistry
}

func openCarried(t *testing.T, dir, issuer string) carried {
	t.Helper()
	s, err := sqlite.Open(sqlite.Config{Dir: dir, TokenIssuer: issuer})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := sqlite.OpenTaskRegistry(context.Background(), s, ports.TaskConfig{Limits: taskLimits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close(context.Background()); s.Close() })
	return carried{s: s, mem: sqlite.NewMemoryStore(s), sets: openWorkingSets(t, s, wsLimits), reg: reg}
}

// holds reports what owner finds: memories in "notes", the kv value, the
// working set's items, tasks.
func (c carried) holds(t *testing.T, owner string) (mems []string, kv string, items []string, tasks []ports.Task) {
	t.Helper()
	ctx := context.Background()
	recs, _, err := c.mem.List(ctx, owner, "notes", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		mems = append(mems, r.Content)
	}
	e, err := c.mem.KVGet(ctx, owner, "k", time.Now())
	switch {
	case err == nil:
		kv = e.Value
	case !errors.Is(err, ports.ErrNotFound):
		t.Fatal(err)
	}
	ws, err := c.sets.Get(ctx, owner, "set")
	switch {
	case err == nil:
		for _, it := range ws.Items {
			items = append(items, it.Identifier)
		}
	case !errors.Is(err, ports.ErrNotFound):
		t.Fatal(err)
	}
	tasks, _, err = c.reg.List(ctx, owner, 10)
	if err != nil {
		t.Fatal(err)
	}
	return mems, kv, items, tasks
}

// TestLegacyTokenDataCarriedOver: data a token caller stored under its
// bare subject is carried over to its issuer-qualified key on its first
// access, once, with its quota counters; the operator's data never moves,
// not even to a token whose sub is the operator's; a store opened without
// the token issuer (an embedding program) moves nothing.
func TestLegacyTokenDataCarriedOver(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeLegacyOwners(t, dir)
	alice := ports.Principal{Subject: "alice", Issuer: carryIssuer, Authenticated: true}.Key()
	op := ports.Principal{Subject: ports.OperatorSubject, Issuer: carryIssuer, Authenticated: true}.Key()

	// Without the issuer nothing moves, and the token key owns nothing.
	plain := openCarried(t, dir, "")
	if mems, kv, items, tasks := plain.holds(t, alice); len(mems)+len(items)+len(tasks) != 0 || kv != "" {
		t.Fatalf("carried without the issuer: %v %q %v %v", mems, kv, items, tasks)
	}
	if mems, _, _, _ := plain.holds(t, "alice"); len(mems) != 1 {
		t.Fatalf("the legacy data is gone: %v", mems)
	}

	c := openCarried(t, dir, carryIssuer)
	mems, kv, items, tasks := c.holds(t, alice)
	if len(mems) != 1 || mems[0] != "alice remembers this" || kv != "alice's value" || len(items) != 1 || items[0] != "alice.md" {
		t.Fatalf("not carried over: %v %q %v", mems, kv, items)
	}
	if len(tasks) != 1 || tasks[0].Owner != alice || tasks[0].Principal.Key() != alice {
		t.Fatalf("tasks: %+v", tasks)
	}
	if mems, kv, items, tasks := c.holds(t, "alice"); len(mems)+len(items)+len(tasks) != 0 || kv != "" {
		t.Errorf("left under the bare subject: %v %q %v %v", mems, kv, items, tasks)
	}
	// The counters came along: the quota and the key bound count what moved.
	size := len("alice remembers this")
	next := memorytest.Write("notes", "more", time.Now())
	if _, _, err := c.mem.Store(ctx, alice, next, ports.MemoryLimits{QuotaBytes: size + len("more") - 1}); !isLimit(err, "ARROWHEAD_MEMORY_QUOTA_BYTES") {
		t.Errorf("quota after the carry-over: %v", err)
	}
	if err := c.mem.KVSet(ctx, alice, ports.KVEntry{Key: "k2", Value: "v", UpdatedAt: time.Now()}, ports.MemoryLimits{MaxKeys: 1}); !isLimit(err, "ARROWHEAD_KV_MAX_KEYS") {
		t.Errorf("kv bound after the carry-over: %v", err)
	}

	// A token named like the operator owns nothing of the operator's,
	// and the operator keeps all of it.
	if mems, kv, items, tasks := c.holds(t, op); len(mems)+len(items)+len(tasks) != 0 || kv != "" {
		t.Errorf("sub=local-operator got the operator's data: %v %q %v %v", mems, kv, items, tasks)
	}
	if mems, kv, items, _ := c.holds(t, ports.OperatorSubject); len(mems) != 1 || kv != "local-operator's value" || len(items) != 1 {
		t.Errorf("the operator lost data: %v %q %v", mems, kv, items)
	}

	// Once: what a bare-subject caller writes afterwards stays its own,
	// in this process and in a new one.
	if _, _, err := c.mem.Store(ctx, "alice", memorytest.Write("notes", "written later", time.Now()), ports.MemoryLimits{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []carried{c, openCarried(t, dir, carryIssuer)} {
		if mems, _, _, _ := p.holds(t, alice); len(mems) != 1 {
			t.Errorf("carried twice: %v", mems)
		}
		if mems, _, _, _ := p.holds(t, "alice"); len(mems) != 1 || mems[0] != "written later" {
			t.Errorf("the bare subject's later data: %v", mems)
		}
	}
}
