package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/arrowhead-go/arrowhead/ports"
)

// TasksName is the task registry's name in /ready.
const TasksName = "postgres-tasks"

// Queues and bounds of the registry's River client.
const (
	// StateMaxConns is the state pool's size unless its DSN names one
	// (WithDefaultMaxConns): River's notification listener holds one
	// connection, its workers, maintenance and the tools' calls share the
	// rest.
	StateMaxConns = 16

	// tasksQueue runs started tasks (scans); timersQueue fires timers and
	// the TTL sweep, so a burst of long scans never delays a timer.
	tasksQueue  = "arrowhead_tasks"
	timersQueue = "arrowhead_timers"
	// DefaultTaskWorkers is how many tasks one replica runs at once; more
	// stay working, queued, until a worker on some replica is free.
	DefaultTaskWorkers = 4
	// timerWorkers bounds the timers one replica fires at once: River
	// fetches at most this many per poll, so it sets how many due timers
	// a poll can start (each firing is one short transaction).
	timerWorkers = 200

	// fetchPollInterval is how often an idle replica looks for due jobs.
	// New tasks are announced at once (LISTEN/NOTIFY); a timer due within
	// the scheduler's interval waits in the queue for its time, and this
	// poll bounds how late it is picked up.
	fetchPollInterval = 200 * time.Millisecond
	// schedulerLead is River's scheduler interval: every 5 s it queues the
	// scheduled jobs due within the next 5 s, keeping their times, and a
	// worker claims each when due; see insertTimer.
	schedulerLead = 5 * time.Second

	// taskTimeout bounds one task's work; its context ends then and the
	// task fails. rescueAfter is when River gives the job of a replica
	// that died to another one, whose worker fails the task as
	// interrupted.
	taskTimeout = 30 * time.Minute
	rescueAfter = taskTimeout + 5*time.Minute
	// taskAttempts lets a rescued job run once more, to record the
	// interruption; the work itself never runs twice.
	taskAttempts = 2

	// sweepInterval is how often the finished tasks of owners that never
	// come back are purged once past their TTL.
	sweepInterval = 10 * time.Minute

	// checkInterval is the least time between two reads of a task's status
	// by its TaskRun.Check; a cancellation is seen within it (or at once,
	// when River relays it to the running job).
	checkInterval = 25 * time.Millisecond
	// finishTimeout bounds one attempt at recording how a task ended,
	// which runs even when the work's context is done.
	finishTimeout = 10 * time.Second
	// settleFor is how long a worker keeps retrying that record while the
	// database does not take it (down, restarting, frozen); between
	// attempts it pauses settleFirstPause, doubling to settleMaxPause, so a
	// task is settled within about a second of the database's return.
	settleFor        = 10 * time.Minute
	settleFirstPause = 50 * time.Millisecond
	settleMaxPause   = time.Second

	// reconcileInterval is how often the leader settles tasks still
	// working whose job is finished or gone (see reconcileWorker): no
	// task stays working longer than that past the end of its job.
	reconcileInterval = time.Minute
)

// Errors of a TaskRegistry.
var (
	// ErrTasksClosed refuses calls after Close.
	ErrTasksClosed = errors.New("the task registry is closed")
	// ErrTasksNotMigrated refuses opening a registry whose tables are
	// missing.
	ErrTasksNotMigrated = errors.New("the task tables are missing: run arrowhead migrate with ARROWHEAD_STATE_DSN")

	errTaskTimedOut   = errors.New("the task ran past its time limit")
	errTaskNotStarted = errors.New("the task could not be handed to a worker")
)

// TaskRegistry is ports.TaskRegistry on PostgreSQL (ARROWHEAD_STATE_DSN),
// run by River: the tasks and timers are rows of arrowhead_tasks, the
// record every replica reads, and each has a River job that runs it on
// whichever replica claims it. A task's row and its job are written in one
// transaction, so a task exists exactly when its job does.
//
// Cancel records the cancellation in the row (durable, seen by every
// replica's Get and TaskRun.Check) and cancels the job in the same
// transaction: a pending timer's job never runs, and River relays the
// cancellation of a running job to the replica running it, whose work's
// context ends. A timer's job is scheduled in the database, so it fires on
// any replica, also when the one that scheduled it is gone.
//
// Per-owner bounds are checked under the owner's transaction-scoped
// advisory lock, so they hold across replicas.
type TaskRegistry struct {
	pool    *Pool
	limits  ports.TaskLimits
	workers map[string]ports.TaskWork
	clock   ports.Clock
	client  *river.Client[pgx.Tx]

	// closing ends at Close: the context the work runs on.
	closing context.Context
	stop    context.CancelFunc

	mu     sync.Mutex
	closed bool
}

var _ ports.TaskRegistry = (*TaskRegistry)(nil)

// OpenTaskRegistry starts a registry on the pool's database, whose tables
// `arrowhead migrate` created (ErrTasksNotMigrated otherwise; the database
// must answer). Close it to stop its workers.
func OpenTaskRegistry(ctx context.Context, pool *Pool, cfg ports.TaskConfig) (*TaskRegistry, error) {
	if pool == nil {
		return nil, errors.New("the task registry on PostgreSQL needs a connection pool (ARROWHEAD_STATE_DSN)")
	}
	l := cfg.Limits
	if l.MaxRunningPerOwner <= 0 || l.MaxTimersPerOwner <= 0 || l.MaxFinishedPerOwner <= 0 || l.FinishedTTL <= 0 {
		return nil, errors.New("ARROWHEAD_TASK_SCHEDULE_MAX_PER_OWNER and the task bounds must be positive")
	}
	if err := tasksMigrated(ctx, pool); err != nil {
		return nil, err
	}
	clock := cfg.Clock
	if clock == nil {
		clock = ports.SystemClock{}
	}
	r := &TaskRegistry{pool: pool, limits: l, workers: cfg.Workers, clock: clock}
	r.closing, r.stop = context.WithCancel(context.WithoutCancel(ctx))
	workers := river.NewWorkers()
	river.AddWorker(workers, &taskWorker{r: r})
	river.AddWorker(workers, &timerWorker{r: r})
	river.AddWorker(workers, &sweepWorker{r: r})
	river.AddWorker(workers, &reconcileWorker{r: r})
	client, err := river.NewClient(riverpgxv5.New(pool.pool), &river.Config{
		Queues: map[string]river.QueueConfig{
			tasksQueue:  {MaxWorkers: DefaultTaskWorkers},
			timersQueue: {MaxWorkers: timerWorkers},
		},
		Workers:           workers,
		FetchPollInterval: fetchPollInterval,
		JobTimeout:        rescueAfter - time.Minute, // the workers keep their own

		RescueStuckJobsAfter: rescueAfter,
		PeriodicJobs: []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(sweepInterval),
				func() (river.JobArgs, *river.InsertOpts) { return sweepArgs{}, &river.InsertOpts{Queue: timersQueue} }, nil),
			river.NewPeriodicJob(river.PeriodicInterval(reconcileInterval),
				func() (river.JobArgs, *river.InsertOpts) {
					return reconcileArgs{}, &river.InsertOpts{Queue: timersQueue}
				}, nil),
		},
		// River's log lines carry job arguments (owners); the registry
		// reports what matters through the tasks themselves.
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, fmt.Errorf("starting the task queue: %w", err)
	}
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		r.stop()
		return nil, fmt.Errorf("starting the task queue: %w", err)
	}
	r.client = client
	return r, nil
}

// tasksMigrated checks that the registry's table and River's are there.
func tasksMigrated(ctx context.Context, pool *Pool) error {
	c, err := pool.acquire(ctx)
	if err != nil {
		return stateErr("opening the task registry", err)
	}
	defer c.Release()
	var missing int
	err = c.QueryRow(ctx, `SELECT count(*) FROM unnest($1::text[]) AS n WHERE to_regclass(n) IS NULL`,
		[]string{tasksTable, "river_job", "river_leader"}).Scan(&missing)
	if err != nil {
		return stateErr("opening the task registry", err)
	}
	if missing > 0 {
		return ErrTasksNotMigrated
	}
	return nil
}

// Name implements ports.HealthReporter.
func (r *TaskRegistry) Name() string { return TasksName }

// Health is ok when the database answers and the tables exist.
func (r *TaskRegistry) Health(ctx context.Context) ports.HealthState {
	return r.pool.health(ctx, func(ctx context.Context, c *pgx.Conn) error {
		var present bool
		if err := c.QueryRow(ctx, wsTablePresent, tasksTable).Scan(&present); err != nil {
			return err
		}
		if !present {
			return ErrTasksNotMigrated
		}
		return nil
	})
}

// Close stops this replica's River client: it cancels the work running
// here and returns once every worker has returned (each records its task
// as interrupted). Jobs queued or scheduled stay in the database for the
// other replicas, or for this one's restart.
func (r *TaskRegistry) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.stop()
	return r.client.StopAndCancel(context.WithoutCancel(ctx))
}

func (r *TaskRegistry) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// now is the clock's time at the database's precision (microseconds), so
// what a call returns equals what a later read returns.
func (r *TaskRegistry) now() time.Time { return r.clock.Now().UTC().Truncate(time.Microsecond) }

// visibleSince is the oldest updated_at of a finished task still visible.
func (r *TaskRegistry) visibleSince(now time.Time) time.Time { return now.Add(-r.limits.FinishedTTL) }

// Start implements ports.TaskRegistry.
func (r *TaskRegistry) Start(ctx context.Context, nt ports.NewTask) (ports.Task, error) {
	if _, ok := r.workers[nt.Kind]; !ok || nt.Kind == ports.TaskKindTimer {
		return ports.Task{}, ports.ErrNoWorker
	}
	if r.isClosed() {
		return ports.Task{}, ErrTasksClosed
	}
	now := r.now()
	task := ports.Task{ID: ports.NewTaskID(), Owner: nt.Principal.Key(), Kind: nt.Kind, Status: ports.TaskWorking,
		CreatedAt: now, UpdatedAt: now, Principal: nt.Principal, Input: slices.Clone(nt.Input)}
	err := r.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
		if err := lockOwner(ctx, tx, task.Owner); err != nil {
			return err
		}
		running, err := countTasks(ctx, tx, taskCountRunning, task.Owner)
		if err != nil {
			return err
		}
		if running >= r.limits.MaxRunningPerOwner {
			return ports.ErrTooManyTasks
		}
		return r.insert(ctx, tx, task, taskArgs{Owner: task.Owner, TaskID: task.ID},
			&river.InsertOpts{Queue: tasksQueue, MaxAttempts: taskAttempts})
	})
	if err != nil {
		return ports.Task{}, taskErr("starting a task", err)
	}
	return task, nil
}

// Schedule implements ports.TaskRegistry.
func (r *TaskRegistry) Schedule(ctx context.Context, nt ports.NewTimer) (ports.Task, error) {
	if r.isClosed() {
		return ports.Task{}, ErrTasksClosed
	}
	now := r.now()
	task := ports.Task{ID: ports.NewTaskID(), Owner: nt.Principal.Key(), Kind: ports.TaskKindTimer, Status: ports.TaskWorking,
		CreatedAt: now, UpdatedAt: now, Principal: nt.Principal, Input: slices.Clone(nt.Payload),
		DueAt: nt.DueAt.UTC().Truncate(time.Microsecond), Repeat: nt.Repeat.Truncate(time.Microsecond)}
	err := r.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
		if err := lockOwner(ctx, tx, task.Owner); err != nil {
			return err
		}
		pending, err := countTasks(ctx, tx, taskCountTimers, task.Owner)
		if err != nil {
			return err
		}
		if pending >= r.limits.MaxTimersPerOwner {
			return ports.ErrTooManyTimers
		}
		return r.insertTimer(ctx, tx, task)
	})
	if err != nil {
		return ports.Task{}, taskErr("scheduling a timer", err)
	}
	return task, nil
}

// insertTimer writes a pending timer and its job. A timer due beyond the
// scheduler's interval is a job scheduled at its due time: River's
// scheduler queues it up to one interval early (keeping its time) and a
// worker claims it when due, so no replica holds it before then. One due
// sooner would wait for the scheduler's next pass, so its job is queued at
// once and its worker puts it back until due (River snoozes it, keeping
// it in the queue at its time).
func (r *TaskRegistry) insertTimer(ctx context.Context, tx pgx.Tx, task ports.Task) error {
	opts := &river.InsertOpts{Queue: timersQueue}
	if time.Until(task.DueAt) > schedulerLead {
		opts.ScheduledAt = task.DueAt
	}
	return r.insert(ctx, tx, task, timerArgs{Owner: task.Owner, TaskID: task.ID}, opts)
}

// insert writes task's row and the job that runs it, in tx, after purging
// the owner's expired tasks.
func (r *TaskRegistry) insert(ctx context.Context, tx pgx.Tx, task ports.Task, args river.JobArgs, opts *river.InsertOpts) error {
	if _, err := tx.Exec(ctx, taskPurgeOwner, task.Owner, r.visibleSince(task.CreatedAt)); err != nil {
		return err
	}
	job, err := r.client.InsertTx(ctx, tx, args, opts)
	if err != nil {
		return err
	}
	row, err := insertArgs(task, job.Job.ID)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, taskInsert, row...)
	return err
}

// Get implements ports.TaskRegistry.
func (r *TaskRegistry) Get(ctx context.Context, owner, id string) (ports.Task, error) {
	if len(id) != ports.TaskIDLength {
		return ports.Task{}, ports.ErrNotFound
	}
	// One statement, one round trip: no transaction to open and end.
	st, err := scanTask(r.pool.pool.QueryRow(ctx, taskGet, owner, id, r.visibleSince(r.now())))
	task := st.Task
	if err != nil {
		return ports.Task{}, taskErr("reading a task", err)
	}
	return task, nil
}

// List implements ports.TaskRegistry.
func (r *TaskRegistry) List(ctx context.Context, owner string, limit int) ([]ports.Task, bool, error) {
	var bound *int64
	if limit >= 0 {
		n := int64(limit) + 1
		bound = &n
	}
	var tasks []ports.Task
	err := r.pool.inTx(ctx, pgx.ReadOnly, false, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, taskList, owner, r.visibleSince(r.now()), bound)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			st, err := scanTask(rows)
			if err != nil {
				return err
			}
			tasks = append(tasks, st.Task)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, false, taskErr("listing tasks", err)
	}
	if limit >= 0 && len(tasks) > limit {
		return tasks[:limit], true, nil
	}
	return tasks, false, nil
}

// Cancel implements ports.TaskRegistry.
func (r *TaskRegistry) Cancel(ctx context.Context, owner, id string) (ports.Task, error) {
	if len(id) != ports.TaskIDLength {
		return ports.Task{}, ports.ErrNotFound
	}
	var task ports.Task
	err := r.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
		if err := lockOwner(ctx, tx, owner); err != nil {
			return err
		}
		now := r.now()
		st, err := scanTask(tx.QueryRow(ctx, taskGetForUpdate, owner, id, r.visibleSince(now)))
		if err != nil {
			return err
		}
		task = st.Task
		if task.Status != ports.TaskWorking {
			return nil // idempotent: a finished task stays as it is
		}
		if _, err := tx.Exec(ctx, taskCancel, owner, id, now); err != nil {
			return err
		}
		task.Status, task.UpdatedAt = ports.TaskCancelled, now
		// A pending job is cancelled outright; a running one is told
		// to stop on the replica running it.
		if _, err := r.client.JobCancelTx(ctx, tx, st.jobID); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
			return err
		}
		_, err = tx.Exec(ctx, taskEvict, owner, r.limits.MaxFinishedPerOwner)
		return err
	})
	if err != nil {
		return ports.Task{}, taskErr("cancelling a task", err)
	}
	return task, nil
}

// taskErr maps a failure to the port's errors or a fixed, caller-safe one.
func taskErr(op string, err error) error {
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return ports.ErrNotFound
	case errors.Is(err, ports.ErrTooManyTasks), errors.Is(err, ports.ErrTooManyTimers),
		errors.Is(err, ports.ErrNoWorker), errors.Is(err, errTaskDamaged):
		return err
	}
	return stateErr(op, err)
}
