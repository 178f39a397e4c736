package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/arrowhead-go/arrowhead/ports"
)

// The River jobs of the registry. Their arguments name the task by owner
// and id, so the workers' statements carry the owner like every other.
type (
	taskArgs struct {
		Owner  string `json:"owner"`
		TaskID string `json:"task_id"`
	}
	timerArgs struct {
		Owner  string `json:"owner"`
		TaskID string `json:"task_id"`
	}
	sweepArgs     struct{}
	reconcileArgs struct{}
)

func (taskArgs) Kind() string      { return "arrowhead_task" }
func (timerArgs) Kind() string     { return "arrowhead_timer" }
func (sweepArgs) Kind() string     { return "arrowhead_task_sweep" }
func (reconcileArgs) Kind() string { return "arrowhead_task_reconcile" }

// errInterrupted is the failure of work stopped by Close, or begun on a
// replica that died.
var errInterrupted = errors.New(ports.TaskInterrupted)

// taskWorker runs a started task's work.
type taskWorker struct {
	river.WorkerDefaults[taskArgs]
	r *TaskRegistry
}

// Timeout is River's own: the work runs under taskTimeout, on a context
// that only Close and that timeout end (a cancellation reaches the work
// through TaskRun.Check, as the port says).
func (*taskWorker) Timeout(*river.Job[taskArgs]) time.Duration { return -1 }

// Work claims the task, runs its kind's TaskWork as the task's principal
// and settles the task: its final row and the job's completion are one
// transaction (River's JobCompleteTx), so a task is never left working
// behind a finished job. While that transaction fails (the database is
// down) Work keeps retrying it, for at most settleFor; after that, or when
// this replica closes, it returns the error and River retries the job,
// whose next attempt settles the task as interrupted (the work itself
// never runs twice). The leader's reconciler settles what is left.
func (w *taskWorker) Work(jobCtx context.Context, job *river.Job[taskArgs]) error {
	r := w.r
	owner, id := job.Args.Owner, job.Args.TaskID
	var (
		st      storedTask
		claimed bool
	)
	err := r.pool.inTx(jobCtx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
		tag, err := tx.Exec(jobCtx, taskClaim, owner, id, r.now())
		if err != nil {
			return err
		}
		claimed = tag.RowsAffected() == 1
		st, err = scanTask(tx.QueryRow(jobCtx, taskGet, owner, id, time.Time{}))
		return err
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil // evicted, or its owner's records are gone
	case err != nil:
		return err // nothing was claimed: River tries once more
	case !claimed:
		// Not working any more (cancelled while queued), or begun
		// before on a replica that stopped without recording it.
		return r.settle(jobCtx, job, st.Task, nil, errInterrupted)
	}
	work, ok := r.workers[st.Kind]
	if !ok {
		return r.settle(jobCtx, job, st.Task, nil, ports.ErrNoWorker)
	}
	ctx, cancel := context.WithTimeout(r.closing, taskTimeout)
	defer cancel()
	result, werr := work.Safe(ctx, ports.TaskRun{Task: st.Task, Check: r.checker(jobCtx, owner, id)})
	if werr != nil && ctx.Err() != nil {
		werr = errInterrupted
		if r.closing.Err() == nil {
			werr = errTaskTimedOut
		}
	}
	return r.settle(jobCtx, job, st.Task, result, werr)
}

// checker is TaskRun.Check: the recorded status, read from the database at
// most once per checkInterval, and at once when River has relayed a
// cancellation to the job (jobCtx ended).
func (r *TaskRegistry) checker(jobCtx context.Context, owner, id string) func(context.Context) error {
	var (
		mu   sync.Mutex
		last time.Time
	)
	return func(ctx context.Context) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if jobCtx.Err() == nil && time.Since(last) < checkInterval {
			return nil
		}
		var status string
		if err := r.pool.inTx(ctx, pgx.ReadOnly, false, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, taskStatus, owner, id).Scan(&status)
		}); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return ports.ErrTaskCancelled // gone: nothing will read a result
			}
			return stateErr("checking a task", err)
		}
		last = time.Now()
		if ports.TaskStatus(status) == ports.TaskCancelled {
			return ports.ErrTaskCancelled
		}
		return nil
	}
}

// settle records how a task's work ended (unless its status changed
// meanwhile: a cancellation wins over the work's late result), evicts the
// owner's oldest finished tasks beyond the bound and completes the job,
// all in one transaction. A failed attempt is retried with backoff (from
// settleFirstPause, doubling to settleMaxPause) until it commits, settleFor
// has passed or this replica closes; the last error is then returned, never
// dropped, so River retries the job. It runs on a context of its own: the
// work's may be over (a cancelled task's job context ends).
func (r *TaskRegistry) settle(jobCtx context.Context, job *river.Job[taskArgs], task ports.Task, result []byte, workErr error) error {
	status, reason := ports.TaskCompleted, ""
	if workErr != nil {
		status, reason, result = ports.TaskFailed, workErr.Error(), nil
	}
	// JobCompleteTx finds River's client in the job's context.
	return r.persist(context.WithoutCancel(jobCtx), "settling a task", func(ctx context.Context) error {
		return r.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
			if err := lockOwner(ctx, tx, task.Owner); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, taskFinish, task.Owner, task.ID, string(status), result, reason, r.now(), "")
			if err != nil {
				return err
			}
			if tag.RowsAffected() > 0 {
				if _, err := tx.Exec(ctx, taskEvict, task.Owner, r.limits.MaxFinishedPerOwner); err != nil {
					return err
				}
			}
			// A job already gone (River's cleaner) has nothing left to
			// complete.
			if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
				return err
			}
			return nil
		})
	})
}

// persist runs write (one transaction) until it commits: a failed attempt
// is retried with backoff (from settleFirstPause, doubling to
// settleMaxPause), each attempt under finishTimeout, until settleFor has
// passed, this replica closes or base ends. The last error is then returned, never
// dropped, so River retries the job. Retrying is safe: an attempt that
// failed rolled back, and one whose commit was lost rewrites nothing (every
// statement it runs is conditional on the state it changes).
func (r *TaskRegistry) persist(base context.Context, op string, write func(ctx context.Context) error) error {
	deadline := time.Now().Add(settleFor)
	pause := settleFirstPause
	for {
		ctx, cancel := context.WithTimeout(base, finishTimeout)
		err := write(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return stateErr(op, err)
		}
		select {
		case <-r.closing.Done():
			return stateErr(op, err)
		case <-base.Done(): // the job was cancelled: River decides
			return stateErr(op, err)
		case <-time.After(pause):
		}
		pause = min(2*pause, settleMaxPause)
	}
}

// timerWorker fires a timer once it is due.
type timerWorker struct {
	river.WorkerDefaults[timerArgs]
	r *TaskRegistry
}

// Work completes the pending timer with its payload and, for a repeating
// one, records the next occurrence and its job, all in one transaction: a
// timer fires once, on whichever replica runs its job. A job picked up
// before the timer is due (a timer due soon is queued at once) goes back to
// the queue until then. While the database does not take the transaction
// it is retried (persist), so an outage delays a timer by about the outage,
// not by River's retry backoff; retrying cannot fire it twice, since the
// transaction does nothing for a timer no longer pending.
func (w *timerWorker) Work(ctx context.Context, job *river.Job[timerArgs]) error {
	r := w.r
	owner, id := job.Args.Owner, job.Args.TaskID
	var snooze time.Duration
	err := r.persist(ctx, "firing a timer", func(ctx context.Context) error {
		snooze = 0
		return r.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
			if err := lockOwner(ctx, tx, owner); err != nil {
				return err
			}
			st, err := scanTask(tx.QueryRow(ctx, taskGetForUpdate, owner, id, time.Time{}))
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil || st.Status != ports.TaskWorking {
				return err
			}
			now := r.now()
			if wait := st.DueAt.Sub(now); wait > 0 {
				snooze = wait
				return nil
			}
			next := ""
			if st.Repeat > 0 {
				t := st.Task
				t.ID, t.Status, t.Result, t.Error = ports.NewTaskID(), ports.TaskWorking, nil, ""
				t.CreatedAt, t.UpdatedAt = now, now
				t.DueAt = ports.NextDue(st.DueAt, st.Repeat, now).Truncate(time.Microsecond)
				if err := r.insertTimer(ctx, tx, t); err != nil {
					return err
				}
				next = t.ID
			}
			if _, err := tx.Exec(ctx, taskFinish, owner, id, string(ports.TaskCompleted), st.Input, "", now, next); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, taskEvict, owner, r.limits.MaxFinishedPerOwner); err != nil {
				return err
			}
			// The job completes with the task, as a settled scan's does: a
			// completion River would otherwise write later, on its own,
			// can lag a PostgreSQL outage and leave the fired timer's job
			// "running" until the rescuer finds it.
			if _, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, tx, job); err != nil && !errors.Is(err, rivertype.ErrNotFound) {
				return err
			}
			return nil
		})
	})
	if err == nil && snooze > 0 {
		return river.JobSnooze(snooze)
	}
	return err
}

// sweepWorker purges finished tasks past their TTL, for owners who never
// come back (an owner's own starts and schedules purge theirs).
type sweepWorker struct {
	river.WorkerDefaults[sweepArgs]
	r *TaskRegistry
}

func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[sweepArgs]) error {
	return w.r.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, taskPurgeAll, w.r.visibleSince(w.r.now()))
		return err
	})
}

// reconcileWorker settles the tasks still working whose job is finished or
// gone: a job River completed, cancelled or discarded, or deleted, behind
// a task row nobody settled (a worker that gave up retrying through a long
// outage, a replica lost before it settled, rows from an older version
// that completed the job apart from the row). They fail as interrupted. It
// is a periodic job, so River's leader alone queues it, once per
// reconcileInterval; a job still running on a replica that died is River's
// rescuer's, after rescueAfter, whose retry then settles its task.
type reconcileWorker struct {
	river.WorkerDefaults[reconcileArgs]
	r *TaskRegistry
}

func (w *reconcileWorker) Work(ctx context.Context, _ *river.Job[reconcileArgs]) error {
	r := w.r
	owners := map[string]bool{}
	err := r.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, taskReconcile, ports.TaskInterrupted, r.now())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var owner string
			if err := rows.Scan(&owner); err != nil {
				return err
			}
			owners[owner] = true
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	// Each owner's eviction under its own lock, after the settling
	// committed: holding settled rows while waiting for an owner's lock
	// could deadlock with that owner's worker.
	for owner := range owners {
		if err := r.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
			if err := lockOwner(ctx, tx, owner); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, taskEvict, owner, r.limits.MaxFinishedPerOwner)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}
