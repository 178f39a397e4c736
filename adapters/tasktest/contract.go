// Package tasktest is the contract suite every ports.TaskRegistry passes:
// the embedded store's registry and the PostgreSQL one run the same tests,
// including a restart (close the registry, open it again over the same
// storage).
package tasktest

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Registry is an open backend: the port plus the Close that stops its
// workers and timers.
type Registry interface {
	ports.TaskRegistry
	Close(ctx context.Context) error
}

// Storage is one empty backing store (a bbolt file, a database schema).
// Each Open starts a registry over it; opening again after Close is a
// restart of the process.
type Storage interface {
	Open(t *testing.T, cfg ports.TaskConfig) Registry
}

// Factory makes a fresh, empty Storage for one subtest.
type Factory func(t *testing.T) Storage

// Timeout bounds every wait for something asynchronous (a worker, a
// timer): generous, because a backend may poll (River polls scheduled jobs
// about once a second) and CI machines are slow. Nothing is timed; the
// waits only fail a backend that never gets there.
const Timeout = 20 * time.Second

// Limits are the suite's default bounds.
var Limits = ports.TaskLimits{MaxRunningPerOwner: 3, MaxTimersPerOwner: 3, MaxFinishedPerOwner: 5, FinishedTTL: time.Hour}

// Alice and Bob are the two owners of the suite.
var (
	Alice = ports.NewPrincipal("alice", "docs:scan", "tasks:read", "tasks:write")
	Bob   = ports.NewPrincipal("bob", "tasks:read")
)

// gate is a worker the test steers: each run reports itself on started
// and then waits for a release, a cancellation seen through Check, or the
// registry's shutdown.
type gate struct {
	started  chan ports.TaskRun
	release  chan []byte
	fail     chan error
	running  atomic.Int32
	stopped  chan string // ids of runs that returned
	checkSaw chan error
}

func newGate() *gate {
	return &gate{started: make(chan ports.TaskRun, 64), release: make(chan []byte, 64), fail: make(chan error, 64),
		stopped: make(chan string, 64), checkSaw: make(chan error, 64)}
}

func (g *gate) work(ctx context.Context, run ports.TaskRun) ([]byte, error) {
	g.running.Add(1)
	defer g.running.Add(-1)
	defer func() { g.stopped <- run.Task.ID }()
	g.started <- run
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case r := <-g.release:
			return r, nil
		case err := <-g.fail:
			return nil, err
		case <-ctx.Done():
			// Winding down takes a moment, so a Close that does not wait
			// for its workers returns while this one still runs.
			time.Sleep(50 * time.Millisecond)
			return nil, ctx.Err()
		case <-tick.C:
			if err := run.Check(ctx); err != nil {
				g.checkSaw <- err
				return nil, err
			}
		}
	}
}

func (g *gate) next(t *testing.T) ports.TaskRun {
	t.Helper()
	select {
	case r := <-g.started:
		return r
	case <-time.After(Timeout):
		t.Fatal("the worker never ran the task")
		return ports.TaskRun{}
	}
}

func config(g *gate, limits ports.TaskLimits) ports.TaskConfig {
	return ports.TaskConfig{Limits: limits, Workers: map[string]ports.TaskWork{ports.TaskKindScan: g.work}}
}

func scan(p ports.Principal, prefix string) ports.NewTask {
	return ports.NewTask{Kind: ports.TaskKindScan, Principal: p, Input: []byte(`{"path_prefix":"` + prefix + `"}`)}
}

func timer(p ports.Principal, due time.Duration, repeat time.Duration, payload string) ports.NewTimer {
	return ports.NewTimer{Principal: p, Payload: []byte(payload), DueAt: time.Now().Add(due), Repeat: repeat}
}

// eventually polls get until cond holds or Timeout passes.
func eventually(t *testing.T, what string, get func() (ports.Task, error), cond func(ports.Task) bool) ports.Task {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for {
		task, err := get()
		if err == nil && cond(task) {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: last seen %+v, %v", what, task, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func open(t *testing.T, st Storage, cfg ports.TaskConfig) Registry {
	t.Helper()
	r := st.Open(t, cfg)
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	return r
}

func status(s ports.TaskStatus) func(ports.Task) bool {
	return func(t ports.Task) bool { return t.Status == s }
}

// Run runs the contract suite. Times are compared as the backend returned
// them (a database may round to microseconds), never with the caller's.
func Run(t *testing.T, factory Factory) {
	ctx := context.Background()

	t.Run("a started task runs as its principal and completes with its result", func(t *testing.T) {
		g := newGate()
		r := open(t, factory(t), config(g, Limits))
		task, err := r.Start(ctx, scan(Alice, "exports/"))
		if err != nil {
			t.Fatal(err)
		}
		if len(task.ID) != ports.TaskIDLength || task.Owner != "alice" || task.Kind != ports.TaskKindScan ||
			task.Status != ports.TaskWorking || task.CreatedAt.IsZero() || task.Result != nil {
			t.Fatalf("Start = %+v", task)
		}
		run := g.next(t)
		if run.Task.ID != task.ID || run.Task.Principal.Subject != "alice" || !run.Task.Principal.HasScope("docs:scan") ||
			string(run.Task.Input) != `{"path_prefix":"exports/"}` {
			t.Fatalf("the worker got %+v", run.Task)
		}
		if got, err := r.Get(ctx, "alice", task.ID); err != nil || got.Status != ports.TaskWorking {
			t.Fatalf("Get while working = %+v, %v", got, err)
		}
		g.release <- []byte(`{"files_scanned":3}`)
		done := eventually(t, "completion", func() (ports.Task, error) { return r.Get(ctx, "alice", task.ID) }, status(ports.TaskCompleted))
		if string(done.Result) != `{"files_scanned":3}` || done.Error != "" || done.UpdatedAt.Before(done.CreatedAt) ||
			!done.CreatedAt.Equal(task.CreatedAt) {
			t.Fatalf("completed = %+v", done)
		}
	})

	t.Run("a worker's error fails the task with its text", func(t *testing.T) {
		g := newGate()
		r := open(t, factory(t), config(g, Limits))
		task, err := r.Start(ctx, scan(Alice, ""))
		if err != nil {
			t.Fatal(err)
		}
		g.next(t)
		g.fail <- errors.New("the corpus cannot be listed")
		done := eventually(t, "failure", func() (ports.Task, error) { return r.Get(ctx, "alice", task.ID) }, status(ports.TaskFailed))
		if done.Error != "the corpus cannot be listed" || done.Result != nil {
			t.Fatalf("failed = %+v", done)
		}
	})

	t.Run("an unserved kind is refused", func(t *testing.T) {
		r := open(t, factory(t), config(newGate(), Limits))
		if _, err := r.Start(ctx, ports.NewTask{Kind: "reindex", Principal: Alice}); !errors.Is(err, ports.ErrNoWorker) {
			t.Fatalf("Start(reindex) = %v, want ErrNoWorker", err)
		}
		if l, _, _ := r.List(ctx, "alice", 10); len(l) != 0 {
			t.Fatalf("a refused start was recorded: %+v", l)
		}
	})

	t.Run("owners are isolated and a foreign id is missing", func(t *testing.T) {
		g := newGate()
		r := open(t, factory(t), config(g, Limits))
		task, _ := r.Start(ctx, scan(Alice, ""))
		g.next(t)
		for _, id := range []string{task.ID, ports.NewTaskID(), "", "../" + task.ID, task.ID[:16]} {
			if _, err := r.Get(ctx, "bob", id); !errors.Is(err, ports.ErrNotFound) {
				t.Fatalf("bob Get(%q) = %v", id, err)
			}
			if _, err := r.Cancel(ctx, "bob", id); !errors.Is(err, ports.ErrNotFound) {
				t.Fatalf("bob Cancel(%q) = %v", id, err)
			}
		}
		if _, err := r.Get(ctx, "alice", ports.NewTaskID()); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("alice Get(missing) = %v", err)
		}
		if l, more, err := r.List(ctx, "bob", 10); err != nil || len(l) != 0 || more {
			t.Fatalf("bob lists %+v %v %v", l, more, err)
		}
		if got, _ := r.Get(ctx, "alice", task.ID); got.Status != ports.TaskWorking {
			t.Fatalf("bob's cancel reached alice's task: %+v", got)
		}
		g.release <- []byte(`{}`)
	})

	t.Run("cancel is a recorded state the work observes, and idempotent", func(t *testing.T) {
		g := newGate()
		r := open(t, factory(t), config(g, Limits))
		task, _ := r.Start(ctx, scan(Alice, ""))
		run := g.next(t)
		if err := run.Check(ctx); err != nil {
			t.Fatalf("Check before cancel = %v", err)
		}
		got, err := r.Cancel(ctx, "alice", task.ID)
		if err != nil || got.Status != ports.TaskCancelled {
			t.Fatalf("Cancel = %+v, %v", got, err)
		}
		if read, _ := r.Get(ctx, "alice", task.ID); read.Status != ports.TaskCancelled {
			t.Fatalf("Get after cancel = %+v", read)
		}
		select {
		case err := <-g.checkSaw:
			if !errors.Is(err, ports.ErrTaskCancelled) {
				t.Fatalf("Check after cancel = %v", err)
			}
		case <-time.After(Timeout):
			t.Fatal("the work never saw the cancellation")
		}
		again, err := r.Cancel(ctx, "alice", task.ID)
		if err != nil || again.Status != ports.TaskCancelled {
			t.Fatalf("second Cancel = %+v, %v", again, err)
		}
		// The work's late return does not overwrite the cancellation.
		select {
		case <-g.stopped:
		case <-time.After(Timeout):
			t.Fatal("the cancelled work never returned")
		}
		if read, _ := r.Get(ctx, "alice", task.ID); read.Status != ports.TaskCancelled || read.Result != nil {
			t.Fatalf("after the work returned = %+v", read)
		}
	})

	t.Run("cancelling a finished task changes nothing", func(t *testing.T) {
		g := newGate()
		r := open(t, factory(t), config(g, Limits))
		task, _ := r.Start(ctx, scan(Alice, ""))
		g.next(t)
		g.release <- []byte(`{"ok":true}`)
		eventually(t, "completion", func() (ports.Task, error) { return r.Get(ctx, "alice", task.ID) }, status(ports.TaskCompleted))
		got, err := r.Cancel(ctx, "alice", task.ID)
		if err != nil || got.Status != ports.TaskCompleted || string(got.Result) != `{"ok":true}` {
			t.Fatalf("Cancel(completed) = %+v, %v", got, err)
		}
	})

	t.Run("running tasks are bounded per owner, atomically", func(t *testing.T) {
		g := newGate()
		r := open(t, factory(t), config(g, Limits))
		var ok, refused atomic.Int32
		var wg sync.WaitGroup
		for range 12 {
			wg.Go(func() {
				_, err := r.Start(ctx, scan(Alice, ""))
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, ports.ErrTooManyTasks):
					refused.Add(1)
				default:
					t.Errorf("Start: %v", err)
				}
			})
		}
		wg.Wait()
		if int(ok.Load()) != Limits.MaxRunningPerOwner || int(refused.Load()) != 12-Limits.MaxRunningPerOwner {
			t.Fatalf("%d started, %d refused; want %d started", ok.Load(), refused.Load(), Limits.MaxRunningPerOwner)
		}
		if _, err := r.Start(ctx, scan(Bob, "")); err != nil {
			t.Fatalf("bob has his own bound: %v", err)
		}
		var alices []ports.TaskRun
		for range Limits.MaxRunningPerOwner + 1 {
			if run := g.next(t); run.Task.Owner == "alice" {
				alices = append(alices, run)
			}
		}
		if _, err := r.Cancel(ctx, "alice", alices[0].Task.ID); err != nil {
			t.Fatal(err)
		}
		// A finished task frees its slot at once, even before its work returns.
		if _, err := r.Start(ctx, scan(Alice, "")); err != nil {
			t.Fatalf("Start after a cancel: %v", err)
		}
	})

	t.Run("finished tasks are evicted beyond the bound, oldest first", func(t *testing.T) {
		g := newGate()
		lim := Limits
		lim.MaxFinishedPerOwner = 2
		r := open(t, factory(t), config(g, lim))
		var ids []string
		for range 3 {
			task, err := r.Start(ctx, scan(Alice, ""))
			if err != nil {
				t.Fatal(err)
			}
			g.next(t)
			g.release <- []byte(`{}`)
			eventually(t, "completion", func() (ports.Task, error) { return r.Get(ctx, "alice", task.ID) }, status(ports.TaskCompleted))
			ids = append(ids, task.ID)
		}
		eventually(t, "eviction of the oldest", func() (ports.Task, error) {
			_, err := r.Get(ctx, "alice", ids[0])
			if errors.Is(err, ports.ErrNotFound) {
				return ports.Task{Status: "evicted"}, nil
			}
			return ports.Task{}, err
		}, func(t ports.Task) bool { return t.Status == "evicted" })
		for _, id := range ids[1:] {
			if _, err := r.Get(ctx, "alice", id); err != nil {
				t.Fatalf("a newer finished task was evicted: %v", err)
			}
		}
		list, more, err := r.List(ctx, "alice", 10)
		if err != nil || more || len(list) != 2 || list[0].ID != ids[1] || list[1].ID != ids[2] {
			t.Fatalf("List = %+v %v %v", list, more, err)
		}
		if l, more, _ := r.List(ctx, "alice", 1); len(l) != 1 || !more || l[0].ID != ids[1] {
			t.Fatalf("List(limit 1) = %+v %v", l, more)
		}
	})

	t.Run("finished tasks expire after the TTL", func(t *testing.T) {
		g := newGate()
		clock := &shiftClock{}
		cfg := config(g, Limits)
		cfg.Clock = clock
		r := open(t, factory(t), cfg)
		task, _ := r.Start(ctx, scan(Alice, ""))
		g.next(t)
		g.release <- []byte(`{}`)
		eventually(t, "completion", func() (ports.Task, error) { return r.Get(ctx, "alice", task.ID) }, status(ports.TaskCompleted))
		clock.shift(Limits.FinishedTTL + time.Minute)
		if _, err := r.Get(ctx, "alice", task.ID); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("Get after the TTL = %v", err)
		}
		if l, _, _ := r.List(ctx, "alice", 10); len(l) != 0 {
			t.Fatalf("List after the TTL = %+v", l)
		}
	})

	t.Run("a timer completes with its payload when due", func(t *testing.T) {
		r := open(t, factory(t), config(newGate(), Limits))
		task, err := r.Schedule(ctx, timer(Alice, 100*time.Millisecond, 0, `{"note":"check build"}`))
		if err != nil {
			t.Fatal(err)
		}
		if task.Kind != ports.TaskKindTimer || task.Status != ports.TaskWorking || task.DueAt.IsZero() || task.Owner != "alice" {
			t.Fatalf("Schedule = %+v", task)
		}
		if _, err := r.Get(ctx, "bob", task.ID); !errors.Is(err, ports.ErrNotFound) {
			t.Fatalf("bob sees alice's timer: %v", err)
		}
		done := eventually(t, "firing", func() (ports.Task, error) { return r.Get(ctx, "alice", task.ID) }, status(ports.TaskCompleted))
		if string(done.Result) != `{"note":"check build"}` || done.Next != "" || done.UpdatedAt.Before(done.DueAt) {
			t.Fatalf("fired = %+v", done)
		}
	})

	t.Run("a repeating timer respawns until cancelled", func(t *testing.T) {
		r := open(t, factory(t), config(newGate(), Limits))
		first, err := r.Schedule(ctx, timer(Alice, 50*time.Millisecond, 200*time.Millisecond, `{"n":1}`))
		if err != nil {
			t.Fatal(err)
		}
		fired := eventually(t, "first firing", func() (ports.Task, error) { return r.Get(ctx, "alice", first.ID) }, status(ports.TaskCompleted))
		if fired.Next == "" || fired.Next == first.ID {
			t.Fatalf("no next occurrence: %+v", fired)
		}
		next, err := r.Get(ctx, "alice", fired.Next)
		if err != nil || next.Kind != ports.TaskKindTimer || next.Repeat != 200*time.Millisecond || !next.DueAt.After(first.DueAt) ||
			string(next.Input) != `{"n":1}` {
			t.Fatalf("next occurrence = %+v, %v", next, err)
		}
		// Each occurrence replaces the last: the pending count stays one.
		second := eventually(t, "second firing", func() (ports.Task, error) { return r.Get(ctx, "alice", fired.Next) }, status(ports.TaskCompleted))
		if second.Next == "" {
			t.Fatalf("the second occurrence did not respawn: %+v", second)
		}
		third, err := r.Cancel(ctx, "alice", second.Next)
		if err != nil {
			t.Fatal(err)
		}
		if third.Status == ports.TaskCompleted {
			return // it fired before the cancel arrived; nothing to prove
		}
		if third.Status != ports.TaskCancelled {
			t.Fatalf("Cancel(pending) = %+v", third)
		}
		time.Sleep(3 * third.Repeat) // no channel can prove a non-event
		list, _, _ := r.List(ctx, "alice", 20)
		for _, l := range list {
			if l.Status == ports.TaskWorking {
				t.Fatalf("a cancelled timer respawned: %+v", l)
			}
		}
	})

	t.Run("a cancelled timer never fires", func(t *testing.T) {
		r := open(t, factory(t), config(newGate(), Limits))
		task, _ := r.Schedule(ctx, timer(Alice, 150*time.Millisecond, 0, `null`))
		got, err := r.Cancel(ctx, "alice", task.ID)
		if err != nil || got.Status != ports.TaskCancelled {
			t.Fatalf("Cancel = %+v, %v", got, err)
		}
		time.Sleep(400 * time.Millisecond) // past its due time: a non-event
		if got, _ := r.Get(ctx, "alice", task.ID); got.Status != ports.TaskCancelled || got.Result != nil {
			t.Fatalf("the cancelled timer = %+v", got)
		}
	})

	t.Run("pending timers are bounded per owner", func(t *testing.T) {
		r := open(t, factory(t), config(newGate(), Limits))
		for range Limits.MaxTimersPerOwner {
			if _, err := r.Schedule(ctx, timer(Alice, time.Hour, 0, `{}`)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := r.Schedule(ctx, timer(Alice, time.Hour, 0, `{}`)); !errors.Is(err, ports.ErrTooManyTimers) {
			t.Fatalf("one timer too many = %v", err)
		}
		if _, err := r.Schedule(ctx, timer(Bob, time.Hour, 0, `{}`)); err != nil {
			t.Fatalf("bob has his own bound: %v", err)
		}
		// Timers do not count against running tasks, nor tasks against timers.
		if _, err := r.Start(ctx, scan(Alice, "")); err != nil {
			t.Fatalf("Start beside full timers: %v", err)
		}
		list, _, _ := r.List(ctx, "alice", 20)
		if _, err := r.Cancel(ctx, "alice", list[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Schedule(ctx, timer(Alice, time.Hour, 0, `{}`)); err != nil {
			t.Fatalf("Schedule after a cancel: %v", err)
		}
	})

	t.Run("close stops every worker before it returns", func(t *testing.T) {
		g := newGate()
		r := factory(t).Open(t, config(g, Limits))
		for range 2 {
			if _, err := r.Start(ctx, scan(Alice, "")); err != nil {
				t.Fatal(err)
			}
			g.next(t)
		}
		if err := r.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if n := g.running.Load(); n != 0 {
			t.Fatalf("%d workers outlived Close", n)
		}
	})

	t.Run("a restart keeps what was acknowledged, fails interrupted work, and fires late timers", func(t *testing.T) {
		st := factory(t)
		g := newGate()
		r := st.Open(t, config(g, Limits))
		done, _ := r.Start(ctx, scan(Alice, ""))
		g.next(t)
		g.release <- []byte(`{"kept":true}`)
		eventually(t, "completion", func() (ports.Task, error) { return r.Get(ctx, "alice", done.ID) }, status(ports.TaskCompleted))
		working, _ := r.Start(ctx, scan(Alice, ""))
		g.next(t)
		cancelled, _ := r.Schedule(ctx, timer(Alice, time.Hour, 0, `{}`))
		if _, err := r.Cancel(ctx, "alice", cancelled.ID); err != nil {
			t.Fatal(err)
		}
		soon, _ := r.Schedule(ctx, timer(Alice, 300*time.Millisecond, 0, `{"late":true}`))
		later, _ := r.Schedule(ctx, timer(Alice, time.Hour, time.Hour, `{}`))
		if err := r.Close(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(soon.DueAt) + 100*time.Millisecond) // the due time passes while nothing runs

		r = open(t, st, config(newGate(), Limits))
		got, err := r.Get(ctx, "alice", done.ID)
		if err != nil || got.Status != ports.TaskCompleted || string(got.Result) != `{"kept":true}` {
			t.Fatalf("completed task after restart = %+v, %v", got, err)
		}
		got, err = r.Get(ctx, "alice", working.ID)
		if err != nil || got.Status != ports.TaskFailed || got.Error != ports.TaskInterrupted {
			t.Fatalf("interrupted task after restart = %+v, %v", got, err)
		}
		if got, _ := r.Get(ctx, "alice", cancelled.ID); got.Status != ports.TaskCancelled {
			t.Fatalf("cancelled timer after restart = %+v", got)
		}
		fired := eventually(t, "late firing", func() (ports.Task, error) { return r.Get(ctx, "alice", soon.ID) }, status(ports.TaskCompleted))
		if string(fired.Result) != `{"late":true}` || !fired.UpdatedAt.After(soon.DueAt) {
			t.Fatalf("late timer = %+v", fired)
		}
		got, err = r.Get(ctx, "alice", later.ID)
		if err != nil || got.Status != ports.TaskWorking || !got.DueAt.Equal(later.DueAt) || got.Repeat != time.Hour {
			t.Fatalf("pending timer after restart = %+v, %v (due %v)", got, err, later.DueAt)
		}
		if !bytes.Equal(got.Input, []byte(`{}`)) || got.Principal.Subject != "alice" {
			t.Fatalf("pending timer lost its payload or principal: %+v", got)
		}
	})
}

// shiftClock is the system clock moved forward on demand, so expiry can be
// tested without waiting.
type shiftClock struct{ by atomic.Int64 }

func (c *shiftClock) Now() time.Time        { return time.Now().Add(time.Duration(c.by.Load())) }
func (c *shiftClock) shift(d time.Duration) { c.by.Add(int64(d)) }
