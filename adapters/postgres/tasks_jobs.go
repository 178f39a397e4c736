package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

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
	sweepArgs struct{}
)

func (taskArgs) Kind() string  { return "arrowhead_task" }
func (timerArgs) Kind() string { return "arrowhead_timer" }
func (sweepArgs) Kind() string { return "arrowhead_task_sweep" }

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
// and records how it ended. It returns nil whatever the work did: the task
// row, not the job, carries the outcome, and River must not run it again.
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
		if st.Status == ports.TaskWorking {
			r.finish(st.Task, nil, errInterrupted)
		}
		return nil
	}
	work, ok := r.workers[st.Kind]
	if !ok {
		r.finish(st.Task, nil, ports.ErrNoWorker)
		return nil
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
	r.finish(st.Task, result, werr)
	return nil
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

// finish records the end of a task's work, unless its status changed
// meanwhile (a cancellation wins over the work's late result), and evicts
// the owner's oldest finished tasks beyond the bound. It runs on its own
// context: the work's may be over.
func (r *TaskRegistry) finish(task ports.Task, result []byte, workErr error) {
	ctx, cancel := context.WithTimeout(context.Background(), finishTimeout)
	defer cancel()
	status, reason := ports.TaskCompleted, ""
	if workErr != nil {
		status, reason, result = ports.TaskFailed, workErr.Error(), nil
	}
	// A failure here leaves the task working until River rescues the
	// job, whose second run records the interruption.
	_ = r.pool.inTx(ctx, pgx.ReadWrite, true, func(tx pgx.Tx) error {
		if err := lockOwner(ctx, tx, task.Owner); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, taskFinish, task.Owner, task.ID, string(status), result, reason, r.now(), "")
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		_, err = tx.Exec(ctx, taskEvict, task.Owner, r.limits.MaxFinishedPerOwner)
		return err
	})
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
// the queue until then.
func (w *timerWorker) Work(ctx context.Context, job *river.Job[timerArgs]) error {
	r := w.r
	owner, id := job.Args.Owner, job.Args.TaskID
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
			return river.JobSnooze(wait)
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
		_, err = tx.Exec(ctx, taskEvict, owner, r.limits.MaxFinishedPerOwner)
		return err
	})
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
