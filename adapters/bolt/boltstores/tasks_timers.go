package boltstores

import (
	"context"
	"slices"
	"time"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/taskrules"
	"github.com/arrowhead-go/arrowhead/ports"
)

// fireBatch bounds how many due timers one transaction fires, so a backlog
// (after a long restart) never makes one huge write.
const fireBatch = 256

// retryAfterError is how long the timer loop waits after a store error
// before it tries again.
const retryAfterError = time.Second

// poke makes the timer loop re-read the earliest due time.
func (r *TaskRegistry) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// timerLoop fires due timers and sweeps expired tasks until Close. It
// sleeps until the earliest due time; Schedule wakes it for an earlier one.
func (r *TaskRegistry) timerLoop() {
	defer r.wg.Done()
	nextSweep := time.Now().Add(taskSweepInterval)
	failed := false // the last store access failed: pause instead of spinning
	for {
		wait := time.Until(nextSweep)
		due, ok, err := r.earliestDue()
		switch {
		case err != nil || failed:
			wait = min(wait, retryAfterError)
		case ok:
			wait = min(wait, due.Sub(r.clock.Now()))
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-r.ctx.Done():
				t.Stop()
				return
			case <-r.wake:
			case <-t.C:
			}
			t.Stop()
		}
		if r.ctx.Err() != nil {
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

// earliestDue is the due time of the first pending timer.
func (r *TaskRegistry) earliestDue() (time.Time, bool, error) {
	var at time.Time
	var ok bool
	err := r.ns.View(r.ctx, func(root *bbolt.Bucket) error {
		due := root.Bucket(taskDueKey)
		if due == nil {
			return nil
		}
		k, _ := due.Cursor().First()
		if k == nil {
			return nil
		}
		var err error
		at, _, _, err = dueEntry(k)
		ok = err == nil
		return err
	})
	return at, ok, err
}

// fireDue completes up to fireBatch due timers in one transaction, each
// carrying its payload, and respawns the repeating ones.
func (r *TaskRegistry) fireDue(ctx context.Context) error {
	now := r.now()
	return r.ns.Update(ctx, func(root *bbolt.Bucket) error {
		due := root.Bucket(taskDueKey)
		owners := root.Bucket(taskOwnersKey)
		if due == nil || owners == nil {
			return nil
		}
		var keys [][]byte
		c := due.Cursor()
		for k, _ := c.First(); k != nil && len(keys) < fireBatch; k, _ = c.Next() {
			at, _, _, err := dueEntry(k)
			if err != nil {
				return err
			}
			if at.After(now) {
				break
			}
			keys = append(keys, slices.Clone(k))
		}
		for _, k := range keys {
			if err := due.Delete(k); err != nil {
				return err
			}
			_, ownerHash, id, _ := dueEntry(k)
			if err := r.fire(root, owners.Bucket(ownerHash), ownerHash, id, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// fire completes one pending timer and records its next occurrence.
func (r *TaskRegistry) fire(root, ob *bbolt.Bucket, ownerHash, id []byte, now time.Time) error {
	if ob == nil {
		return nil // its owner's records are gone (evicted); nothing to fire
	}
	var t ports.Task
	found, err := getTask(ob, ownerHash, id, &t)
	if err != nil || !found || t.Status != ports.TaskWorking {
		return err
	}
	t, next, repeats := taskrules.FiredTimer(t, now)
	if repeats {
		if err := putTask(ob, next); err != nil {
			return err
		}
		if err := putDue(root, next); err != nil {
			return err
		}
	}
	if err := putTask(ob, t); err != nil {
		return err
	}
	tasks, err := readTasks(ob, ownerHash)
	if err != nil {
		return err
	}
	return r.evictFinished(ob, tasks)
}
