package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/taskrules"
	"github.com/arrowhead-go/arrowhead/ports"
)

// tasksSchema holds the task registry: tasks and timers, and the lease of
// every process that runs tasks.
//
// A task's record is the JSON every embedded registry keeps
// (taskrules.EncodeTask); the columns beside it are what queries select on.
// runner names the process (task_process.id) running a started task while
// it is working; it is empty for timers, which no process owns: whichever
// process's timer loop finds one due fires it, in the transaction that
// records it fired, so a timer fires once however many processes look.
const tasksSchema = `
CREATE TABLE task (
	owner BLOB NOT NULL,
	id TEXT NOT NULL,
	status TEXT NOT NULL,               -- ports.TaskStatus
	timer INTEGER NOT NULL,             -- 1 for a timer, 0 for started work
	due_at INTEGER NOT NULL,            -- a timer's due time
	updated_at INTEGER NOT NULL,
	runner TEXT NOT NULL,
	record BLOB NOT NULL,
	PRIMARY KEY (owner, id)
);
CREATE INDEX task_due ON task (due_at) WHERE status = 'working' AND timer = 1;
CREATE INDEX task_running ON task (runner) WHERE status = 'working' AND timer = 0;
CREATE INDEX task_finished ON task (updated_at) WHERE status <> 'working';
CREATE TABLE task_process (
	id TEXT PRIMARY KEY,
	expires_at INTEGER NOT NULL         -- renewed every lease/5; past it, the process is gone
) WITHOUT ROWID;
`

// Timing of the registry.
const (
	// DefaultTaskLease is how long a process that runs tasks is taken for
	// alive after its last heartbeat. Past it, another process fails its
	// working tasks as interrupted: its workers died with it.
	DefaultTaskLease = 15 * time.Second
	// timerPoll is how often the timer loop looks for timers other
	// processes scheduled (this process's own wake it at once): it bounds
	// how late a timer fires once the process that scheduled it is gone.
	timerPoll = 500 * time.Millisecond
	// watchPoll is how often a process running tasks looks for their
	// cancellation by another process, and ends the work's context.
	watchPoll = 100 * time.Millisecond
	// taskFireBatch bounds how many due timers one transaction fires, so a
	// backlog never makes one long write the other processes wait for.
	taskFireBatch = 256
	// taskSweepInterval is how often finished tasks past their TTL are
	// purged for owners that never come back.
	taskSweepInterval = 10 * time.Minute
)

// TaskRegistry is ports.TaskRegistry in the shared store: every process on
// the data directory reads, lists and cancels every task, and fires every
// due timer.
//
// Started work runs in the process that started it, on a bounded pool of
// goroutines. A cancellation recorded by any process ends the work's
// context: its own process at once, another one within watchPoll. Each
// process holds a lease it renews (task_process); when a process's lease
// runs out (SIGKILL, a crash), a surviving one fails the tasks it was
// running as interrupted, exactly as a restart of the bbolt registry does,
// and never the tasks of a process that is still renewing.
//
// Timers belong to no process: each process's timer loop sleeps until
// the earliest due time (polling for other processes' timers every
// timerPoll) and fires what is due in one write transaction that first
// reads it pending, so a timer fires exactly once, whichever processes are
// alive. The bounds are checked inside the write, so they hold across
// processes.
//
// River's SQLite driver was tried first and not used: see the commit that
// added this file.
type TaskRegistry struct {
	s       *Store
	limits  ports.TaskLimits
	workers map[string]ports.TaskWork
	clock   ports.Clock
	proc    string        // this process's row in task_process
	lease   time.Duration // of this process
	onFire  func(ports.Task)

	slots chan struct{} // the worker pool: one token per running task
	wake  chan struct{} // the timer loop re-reads the earliest due time

	mu      sync.Mutex // guards closed, runs and wg.Add against Close
	closed  bool
	runs    map[string]*taskRun // this process's work, queued or running, by task id
	ctx     context.Context     // ends at Close
	stop    context.CancelFunc
	wg      sync.WaitGroup
	lastRun time.Time // wall time of the last heartbeat; leaseLoop's own
}

var _ ports.TaskRegistry = (*TaskRegistry)(nil)

// taskOptions are the registry's settings tests change.
type taskOptions struct {
	lease time.Duration
	// onFire is called with each timer this process fired, once the
	// firing is committed (the tests count firings across processes).
	onFire func(ports.Task)
}

// OpenTaskRegistry opens the registry in s and joins the processes that
// run tasks. Close it to stop its workers, timers and lease.
func OpenTaskRegistry(ctx context.Context, s *Store, cfg ports.TaskConfig) (*TaskRegistry, error) {
	return openTaskRegistry(ctx, s, cfg, taskOptions{lease: DefaultTaskLease})
}

func openTaskRegistry(ctx context.Context, s *Store, cfg ports.TaskConfig, opt taskOptions) (*TaskRegistry, error) {
	if s == nil {
		return nil, errors.New("the task registry needs the embedded store (ARROWHEAD_DATA_DIR)")
	}
	if err := taskrules.CheckTaskLimits(cfg.Limits); err != nil {
		return nil, err
	}
	clock := cfg.Clock
	if clock == nil {
		clock = ports.SystemClock{}
	}
	r := &TaskRegistry{s: s, limits: cfg.Limits, workers: cfg.Workers, clock: clock, proc: ports.NewTaskID(),
		lease: opt.lease, onFire: opt.onFire, slots: make(chan struct{}, taskrules.DefaultTaskWorkers),
		wake: make(chan struct{}, 1), runs: map[string]*taskRun{}}
	// The lease is taken by leaseLoop's first heartbeat, which also
	// settles the processes whose lease ran out while none was looking
	// (the last one on the directory was killed), and by every Start: the
	// open costs no write, so no fsync at start-up.
	r.lastRun = time.Now().Round(0)
	r.ctx, r.stop = context.WithCancel(context.WithoutCancel(ctx))
	r.wg.Add(3)
	go r.timerLoop()
	go r.leaseLoop()
	go r.watchLoop()
	return r, nil
}

// Close stops the timer loop, the lease and every worker, and returns once
// all of them have: a task whose work was stopped is failed as
// interrupted. The process then leaves task_process.
func (r *TaskRegistry) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.stop()
	r.wg.Wait()
	ctx = context.WithoutCancel(ctx) // leaving is owed even to a caller that gave up
	return r.s.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM task_process WHERE id = ?", r.proc)
		return err
	})
}

func (r *TaskRegistry) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

func (r *TaskRegistry) now() time.Time { return r.clock.Now().UTC().Round(0) }

// putTask writes t; runner is this process for a task it starts, empty for
// everything else (a timer, a finished task).
func putTask(ctx context.Context, tx *Tx, t ports.Task, runner string) error {
	return writeTask(ctx, tx, "INSERT OR REPLACE", t, runner)
}

// writeTask writes t with verb (INSERT OR REPLACE, INSERT OR IGNORE).
func writeTask(ctx context.Context, tx *Tx, verb string, t ports.Task, runner string) error {
	raw, err := taskrules.EncodeTask(t)
	if err != nil {
		return err
	}
	timer := 0
	if t.Kind == ports.TaskKindTimer {
		timer = 1
	}
	_, err = tx.ExecContext(ctx, verb+" INTO task (owner, id, status, timer, due_at, updated_at, runner, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
		OwnerKey(t.Owner), t.ID, string(t.Status), timer, nanos(t.DueAt), nanos(t.UpdatedAt), runner, raw)
	return err
}

func deleteTask(ctx context.Context, tx *Tx, ok []byte, id string) error {
	_, err := tx.ExecContext(ctx, "DELETE FROM task WHERE owner = ? AND id = ?", ok, id)
	return err
}

// errTaskCorrupt is a task record that does not decode.
var errTaskCorrupt = errors.New("a task record in the embedded store is damaged")

func decodeTask(raw []byte, id string) (ports.Task, error) {
	t, err := taskrules.DecodeTask(raw, id)
	if err != nil {
		return ports.Task{}, fmt.Errorf("%w: %w", ErrCorrupt, errTaskCorrupt)
	}
	return t, nil
}

// readTasks reads the records a query selects as (id, record).
func readTasks(ctx context.Context, tx *Tx, query string, args ...any) ([]ports.Task, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ports.Task
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, err
		}
		t, err := decodeTask(raw, id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// ownerTasks is the owner's live tasks inside a write, after purging the
// expired ones. The rows are few: the limits bound them per owner.
func (r *TaskRegistry) ownerTasks(ctx context.Context, tx *Tx, ok []byte, now time.Time) ([]ports.Task, error) {
	tasks, err := readTasks(ctx, tx, "SELECT id, record FROM task WHERE owner = ?", ok)
	if err != nil {
		return nil, err
	}
	live := tasks[:0]
	for _, t := range tasks {
		if taskrules.TaskExpired(r.limits, t, now) {
			if err := deleteTask(ctx, tx, ok, t.ID); err != nil {
				return nil, err
			}
			continue
		}
		live = append(live, t)
	}
	return live, nil
}

// evictFinished deletes the owner's oldest finished tasks beyond the bound.
func (r *TaskRegistry) evictFinished(ctx context.Context, tx *Tx, owner string, now time.Time) error {
	ok := OwnerKey(owner)
	tasks, err := r.ownerTasks(ctx, tx, ok, now)
	if err != nil {
		return err
	}
	for _, t := range taskrules.TasksToEvict(r.limits, tasks) {
		if err := deleteTask(ctx, tx, ok, t.ID); err != nil {
			return err
		}
	}
	return nil
}

// lookup reads the owner's task id inside tx: ErrNotFound when absent,
// foreign, or (with expire) finished longer than the TTL ago.
func (r *TaskRegistry) lookup(ctx context.Context, tx *Tx, owner, id string, now time.Time, expire bool) (ports.Task, error) {
	if len(id) != ports.TaskIDLength {
		return ports.Task{}, ports.ErrNotFound
	}
	var raw []byte
	err := tx.QueryRowContext(ctx, "SELECT record FROM task WHERE owner = ? AND id = ?", OwnerKey(owner), id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.Task{}, ports.ErrNotFound
	} else if err != nil {
		return ports.Task{}, err
	}
	t, err := decodeTask(raw, id)
	if err != nil {
		return ports.Task{}, err
	}
	if expire && taskrules.TaskExpired(r.limits, t, now) {
		return ports.Task{}, ports.ErrNotFound
	}
	return t, nil
}

// Start implements ports.TaskRegistry.
func (r *TaskRegistry) Start(ctx context.Context, nt ports.NewTask) (ports.Task, error) {
	if err := r.s.carry(ctx, nt.Principal.Key()); err != nil {
		return ports.Task{}, err
	}
	work, ok := r.workers[nt.Kind]
	if !ok || nt.Kind == ports.TaskKindTimer {
		return ports.Task{}, ports.ErrNoWorker
	}
	if r.isClosed() {
		return ports.Task{}, taskrules.ErrRegistryClosed
	}
	now, wall := r.now(), time.Now().Round(0)
	task := taskrules.NewWorkingTask(nt, now)
	err := r.s.Write(ctx, func(tx *Tx) error {
		tasks, err := r.ownerTasks(ctx, tx, OwnerKey(task.Owner), now)
		if err != nil {
			return err
		}
		if err := taskrules.CheckStartBound(r.limits, tasks); err != nil {
			return err
		}
		// The task names this process as its runner: its lease must hold
		// in the same transaction, or another process would take the task
		// for an orphan.
		if err := r.renewLease(ctx, tx, wall); err != nil {
			return err
		}
		return putTask(ctx, tx, task, r.proc)
	})
	if err != nil {
		return ports.Task{}, err
	}
	if !r.goRun(task, work) {
		// Closed between the write and here: the task is interrupted,
		// exactly as a restart would report it.
		_ = r.finish(context.Background(), task, nil, taskrules.ErrTaskInterrupted)
	}
	return task, nil
}

// taskRun is one task's work in this process.
type taskRun struct {
	cancel context.CancelFunc // ends the work's context
	ending bool               // its task is no longer working: cancel is due
}

// cancelGrace is how long the work of a task that is no longer working
// has to see it through TaskRun.Check and stop on its own before its
// context ends: work that checks between units stops cleanly, reporting
// the cancellation, and work that never checks is still stopped.
const cancelGrace = 250 * time.Millisecond

// goRun runs task's work on a registry goroutine, with a context that
// its cancellation ends, unless the registry is closed.
func (r *TaskRegistry) goRun(task ports.Task, work ports.TaskWork) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	ctx, cancel := context.WithCancel(r.ctx)
	r.runs[task.ID] = &taskRun{cancel: cancel}
	r.wg.Go(func() {
		defer r.forgetRun(task.ID)
		r.run(ctx, task, work)
	})
	return true
}

func (r *TaskRegistry) forgetRun(id string) {
	r.mu.Lock()
	run := r.runs[id]
	delete(r.runs, id)
	r.mu.Unlock()
	if run != nil {
		run.cancel()
	}
}

// endRun ends the context of the work on task id, if it runs here, once
// cancelGrace has passed.
func (r *TaskRegistry) endRun(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if run := r.runs[id]; run != nil && !run.ending {
		run.ending = true
		time.AfterFunc(cancelGrace, run.cancel)
	}
}

// run waits for a worker slot, runs the work and records how it ended.
func (r *TaskRegistry) run(ctx context.Context, task ports.Task, work ports.TaskWork) {
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	case <-ctx.Done():
		if r.ctx.Err() != nil {
			_ = r.finish(context.Background(), task, nil, taskrules.ErrTaskInterrupted)
		}
		return // otherwise cancelled while queued; its state is recorded already
	}
	check := func(ctx context.Context) error { return r.check(ctx, task) }
	if check(ctx) != nil {
		return
	}
	result, err := work.Safe(ctx, ports.TaskRun{Task: task, Check: check})
	if r.ctx.Err() != nil && err != nil {
		err = taskrules.ErrTaskInterrupted
	}
	_ = r.finish(context.Background(), task, result, err)
}

// check is TaskRun.Check: the recorded status, read from the store.
func (r *TaskRegistry) check(ctx context.Context, task ports.Task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var got ports.Task
	err := r.s.Read(ctx, func(tx *Tx) error {
		var err error
		got, err = r.lookup(ctx, tx, task.Owner, task.ID, r.now(), false)
		return err
	})
	switch {
	case err != nil:
		return err
	case got.Status == ports.TaskCancelled:
		return ports.ErrTaskCancelled
	case got.Status != ports.TaskWorking:
		// Settled by another process, which took this one for gone.
		return taskrules.ErrTaskInterrupted
	}
	return nil
}

// finish records the end of a task's work, unless its status changed
// meanwhile (a cancellation wins over the work's late result).
func (r *TaskRegistry) finish(ctx context.Context, task ports.Task, result []byte, workErr error) error {
	now := r.now()
	return r.s.Write(ctx, func(tx *Tx) error {
		t, err := r.lookup(ctx, tx, task.Owner, task.ID, now, false)
		if errors.Is(err, ports.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		if t.Status != ports.TaskWorking {
			return nil
		}
		if err := putTask(ctx, tx, taskrules.FinishedTask(t, result, workErr, now), ""); err != nil {
			return err
		}
		return r.evictFinished(ctx, tx, t.Owner, now)
	})
}

// Schedule implements ports.TaskRegistry.
func (r *TaskRegistry) Schedule(ctx context.Context, nt ports.NewTimer) (ports.Task, error) {
	if err := r.s.carry(ctx, nt.Principal.Key()); err != nil {
		return ports.Task{}, err
	}
	if r.isClosed() {
		return ports.Task{}, taskrules.ErrRegistryClosed
	}
	now := r.now()
	task := taskrules.NewPendingTimer(nt, now)
	err := r.s.Write(ctx, func(tx *Tx) error {
		tasks, err := r.ownerTasks(ctx, tx, OwnerKey(task.Owner), now)
		if err != nil {
			return err
		}
		if err := taskrules.CheckScheduleBound(r.limits, tasks); err != nil {
			return err
		}
		return putTask(ctx, tx, task, "")
	})
	if err != nil {
		return ports.Task{}, err
	}
	r.poke()
	return task, nil
}

// Get implements ports.TaskRegistry.
func (r *TaskRegistry) Get(ctx context.Context, owner, id string) (ports.Task, error) {
	if err := r.s.carry(ctx, owner); err != nil {
		return ports.Task{}, err
	}
	var task ports.Task
	err := r.s.Read(ctx, func(tx *Tx) error {
		var err error
		task, err = r.lookup(ctx, tx, owner, id, r.now(), true)
		return err
	})
	if err != nil {
		return ports.Task{}, err
	}
	return task, nil
}

// List implements ports.TaskRegistry.
func (r *TaskRegistry) List(ctx context.Context, owner string, limit int) ([]ports.Task, bool, error) {
	if err := r.s.carry(ctx, owner); err != nil {
		return nil, false, err
	}
	var tasks []ports.Task
	err := r.s.Read(ctx, func(tx *Tx) error {
		all, err := readTasks(ctx, tx, "SELECT id, record FROM task WHERE owner = ?", OwnerKey(owner))
		if err != nil {
			return err
		}
		now := r.now()
		tasks = tasks[:0]
		for _, t := range all {
			if !taskrules.TaskExpired(r.limits, t, now) {
				tasks = append(tasks, t)
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	page, more := taskrules.ListPage(tasks, limit)
	return page, more, nil
}

// Cancel implements ports.TaskRegistry. The work of a cancelled task ends
// at once when it runs in this process, within watchPoll in another.
func (r *TaskRegistry) Cancel(ctx context.Context, owner, id string) (ports.Task, error) {
	if err := r.s.carry(ctx, owner); err != nil {
		return ports.Task{}, err
	}
	var task ports.Task
	now := r.now()
	// A cancel stops work and grows nothing: it runs on a full disk too
	// (Store.Delete), so a caller can stop what is filling it.
	err := r.s.Delete(ctx, func(tx *Tx) error {
		var err error
		task, err = r.lookup(ctx, tx, owner, id, now, true)
		if err != nil || task.Status != ports.TaskWorking {
			return err // a finished task stays as it is: idempotent
		}
		task = taskrules.CancelledTask(task, now)
		if err := putTask(ctx, tx, task, ""); err != nil {
			return err
		}
		return r.evictFinished(ctx, tx, owner, now)
	})
	if err != nil {
		return ports.Task{}, err
	}
	r.endRun(task.ID)
	return task, nil
}
