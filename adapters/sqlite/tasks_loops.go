package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/taskrules"
	"github.com/arrowhead-go/arrowhead/ports"
)

// retryAfterError is how long a loop waits after a store error before it
// tries again.
const retryAfterError = time.Second

// poke makes the timer loop re-read the earliest due time.
func (r *TaskRegistry) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// sleep waits d, or until ctx ends (false) or wake fires.
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wake:
	case <-t.C:
	}
	return ctx.Err() == nil
}

// timerLoop fires due timers and sweeps expired tasks until Close. It
// sleeps until the earliest due time, at most timerPoll (other processes
// schedule timers it is not told of); Schedule wakes it for an earlier one.
func (r *TaskRegistry) timerLoop() {
	defer r.wg.Done()
	nextSweep := time.Now().Add(taskSweepInterval)
	failed := false // the last store access failed: pause instead of spinning
	for {
		wait := min(time.Until(nextSweep), timerPoll)
		due, ok, err := r.earliestDue()
		switch {
		case err != nil || failed:
			wait = min(wait, retryAfterError)
		case ok:
			wait = min(wait, due.Sub(r.clock.Now()))
		}
		if !sleep(r.ctx, wait, r.wake) {
			return
		}
		failed = false
		if err == nil && ok && !due.After(r.clock.Now()) {
			failed = r.fireDue(r.ctx) != nil
		}
		if !time.Now().Before(nextSweep) {
			_ = r.sweep(r.ctx)
			nextSweep = time.Now().Add(taskSweepInterval)
		}
	}
}

// earliestDue is the due time of the first pending timer, of any process.
func (r *TaskRegistry) earliestDue() (time.Time, bool, error) {
	var due sql.NullInt64
	err := r.s.Read(r.ctx, func(tx *Tx) error {
		return tx.QueryRowContext(r.ctx, "SELECT min(due_at) FROM task WHERE status = 'working' AND timer = 1").Scan(&due)
	})
	if err != nil || !due.Valid {
		return time.Time{}, false, err
	}
	return time.Unix(0, due.Int64), true, nil
}

// fireDue fires up to taskFireBatch due timers in one write transaction
// that reads them pending first: of several processes firing at once, the
// first commits and the others find nothing left to fire.
func (r *TaskRegistry) fireDue(ctx context.Context) error {
	now := r.now()
	var fired []ports.Task
	err := r.s.Write(ctx, func(tx *Tx) error {
		fired = fired[:0] // a rerun of the batch reports afresh
		due, err := readTasks(ctx, tx, "SELECT id, record FROM task WHERE status = 'working' AND timer = 1 AND due_at <= ? ORDER BY due_at LIMIT ?",
			now.UnixNano(), taskFireBatch)
		if err != nil {
			return err
		}
		owners := map[string]bool{}
		for _, t := range due {
			t, next, repeats := taskrules.FiredTimer(t, now)
			if repeats {
				if err := putTask(ctx, tx, next, ""); err != nil {
					return err
				}
			}
			if err := putTask(ctx, tx, t, ""); err != nil {
				return err
			}
			fired = append(fired, t)
			owners[t.Owner] = true
		}
		for owner := range owners {
			if err := r.evictFinished(ctx, tx, owner, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if r.onFire != nil {
		for _, t := range fired {
			r.onFire(t)
		}
	}
	if len(fired) == taskFireBatch {
		r.poke() // more may be due
	}
	return nil
}

// sweep purges finished tasks past their TTL, for every owner.
func (r *TaskRegistry) sweep(ctx context.Context) error {
	now := r.now()
	return r.s.Write(ctx, func(tx *Tx) error {
		rows, err := tx.QueryContext(ctx, "SELECT DISTINCT owner FROM task WHERE status <> 'working' AND updated_at < ?",
			taskrules.ExpiredBefore(r.limits, now).UnixNano())
		if err != nil {
			return err
		}
		var owners [][]byte
		for rows.Next() {
			var ok []byte
			if err := rows.Scan(&ok); err != nil {
				rows.Close()
				return err
			}
			owners = append(owners, ok)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, ok := range owners {
			if _, err := r.ownerTasks(ctx, tx, ok, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// leaseLoop renews this process's lease every lease/5 and settles the
// processes whose lease ran out, until Close.
func (r *TaskRegistry) leaseLoop() {
	defer r.wg.Done()
	for wait := time.Duration(0); sleep(r.ctx, wait, nil); wait = r.lease / 5 {
		// A gap longer than the lease since this process's own last
		// heartbeat means it did not run either (the machine slept, the
		// clock jumped): the others may be just as late, so this round
		// only renews, and they have their turn to renew too.
		settle := time.Now().Round(0).Sub(r.lastRun) <= r.lease
		_ = r.heartbeat(r.ctx, settle)
	}
}

// heartbeat renews (or takes again) this process's lease and, with
// settle, fails the working tasks of processes whose lease ran out, and of
// none at all (a task imported from the previous store), as interrupted:
// their work died with the process. It runs in one write, so the check
// and the change cannot interleave with a renewal.
func (r *TaskRegistry) heartbeat(ctx context.Context, settle bool) error {
	wall := time.Now().Round(0)
	now := r.now()
	err := r.s.Write(ctx, func(tx *Tx) error {
		if err := r.renewLease(ctx, tx, wall); err != nil {
			return err
		}
		if !settle {
			return nil
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM task_process WHERE expires_at < ?", wall.UnixNano()); err != nil {
			return err
		}
		orphans, err := readTasks(ctx, tx, "SELECT id, record FROM task WHERE status = 'working' AND timer = 0 AND runner NOT IN (SELECT id FROM task_process)")
		if err != nil {
			return err
		}
		owners := map[string]bool{}
		for _, t := range orphans {
			if err := putTask(ctx, tx, taskrules.InterruptedTask(t, now), ""); err != nil {
				return err
			}
			owners[t.Owner] = true
		}
		for owner := range owners {
			if err := r.evictFinished(ctx, tx, owner, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		r.lastRun = wall
	}
	return err
}

// renewLease writes this process's lease, ending lease after wall.
func (r *TaskRegistry) renewLease(ctx context.Context, tx *Tx, wall time.Time) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO task_process (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at",
		r.proc, wall.Add(r.lease).UnixNano())
	return err
}

// watchLoop ends the context of this process's work whose task is no
// longer working (cancelled, or settled by a process that took this one
// for gone), until Close.
func (r *TaskRegistry) watchLoop() {
	defer r.wg.Done()
	for sleep(r.ctx, watchPoll, nil) {
		r.mu.Lock()
		ids := make([]string, 0, len(r.runs))
		for id := range r.runs {
			ids = append(ids, id)
		}
		r.mu.Unlock()
		if len(ids) == 0 {
			continue
		}
		working := map[string]bool{}
		err := r.s.Read(r.ctx, func(tx *Tx) error {
			clear(working)
			rows, err := tx.QueryContext(r.ctx, "SELECT id FROM task WHERE runner = ? AND status = 'working' AND timer = 0", r.proc)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					return err
				}
				working[id] = true
			}
			return rows.Err()
		})
		if err != nil {
			continue
		}
		for _, id := range ids {
			if !working[id] {
				r.endRun(id)
			}
		}
	}
}
