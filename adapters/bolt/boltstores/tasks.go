package boltstores

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/taskrules"
	"github.com/arrowhead-go/arrowhead/ports"
)

// TasksNamespace is the embedded store namespace of the task registry.
const TasksNamespace = "tasks"

// taskSweepInterval is how often finished tasks past their TTL are purged for
// owners that never come back (an owner's own writes purge theirs).
const taskSweepInterval = 10 * time.Minute

// Layout of the namespace:
//
//	"owners"/sha256(owner)/<id>   the task, JSON, sealed
//	"due"/<due><sha256(owner)><id> a pending timer, by due time (Unix
//	                               nanoseconds, big-endian u64): empty
//
// A task and its due entry change in one transaction, so the index never
// disagrees with the records.
var (
	taskOwnersKey = []byte("owners")
	taskDueKey    = []byte("due")
)

// errTaskCorrupt is a damaged index entry.
var errTaskCorrupt = errors.New("a task index entry in the embedded store is damaged")

// TaskRegistry is the previous release's embedded ports.TaskRegistry, on
// the bbolt file one process locks; the server now keeps tasks in the
// store processes share (adapters/sqlite), which imports this one's
// (DumpTasks) and shares its rules (adapters/taskrules). Tasks and pending
// timers in the embedded store, work run on a bounded pool of goroutines,
// timers fired by one goroutine that sleeps until the earliest is due.
// Every state change is one fsynced transaction, group-committed with the
// changes that arrive beside it (Namespace.Batch: each closure draws its
// ids and times beforehand, so a rerun changes nothing). Close stops all
// of them.
type TaskRegistry struct {
	ns      *bolt.Namespace
	limits  ports.TaskLimits
	workers map[string]ports.TaskWork
	clock   ports.Clock

	slots chan struct{} // the worker pool: one token per running task
	wake  chan struct{} // the timer loop re-reads the earliest due time

	mu     sync.Mutex // guards closed and wg.Add against Close
	closed bool
	ctx    context.Context // ends at Close: the work's context
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

var _ ports.TaskRegistry = (*TaskRegistry)(nil)

// OpenTaskRegistry opens the registry in ns (claimed as TasksNamespace).
// It first recovers from the previous process: a task that was working is
// failed with ports.TaskInterrupted (its worker died with that process),
// and pending timers, late or not, are armed again.
func OpenTaskRegistry(ctx context.Context, ns *bolt.Namespace, cfg ports.TaskConfig) (*TaskRegistry, error) {
	if ns == nil {
		return nil, errors.New("the task registry needs the embedded store (ARROWHEAD_DATA_DIR)")
	}
	l := cfg.Limits
	if err := taskrules.CheckTaskLimits(l); err != nil {
		return nil, err
	}
	clock := cfg.Clock
	if clock == nil {
		clock = ports.SystemClock{}
	}
	r := &TaskRegistry{ns: ns, limits: l, workers: cfg.Workers, clock: clock,
		slots: make(chan struct{}, taskrules.DefaultTaskWorkers), wake: make(chan struct{}, 1)}
	if err := r.recoverInterrupted(ctx); err != nil {
		return nil, err
	}
	r.ctx, r.stop = context.WithCancel(context.WithoutCancel(ctx))
	r.wg.Add(1)
	go r.timerLoop()
	return r, nil
}

// Close stops the timer loop and every worker, and returns once all of
// them have: a task whose work was stopped is failed as interrupted.
func (r *TaskRegistry) Close(context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.stop()
	r.wg.Wait()
	return nil
}

// goWork runs fn on a registry goroutine unless the registry is closed.
func (r *TaskRegistry) goWork(fn func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.wg.Go(fn)
	return true
}

func (r *TaskRegistry) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

func (r *TaskRegistry) now() time.Time { return r.clock.Now().UTC().Round(0) }

// Start implements ports.TaskRegistry.
func (r *TaskRegistry) Start(ctx context.Context, nt ports.NewTask) (ports.Task, error) {
	work, ok := r.workers[nt.Kind]
	if !ok || nt.Kind == ports.TaskKindTimer {
		return ports.Task{}, ports.ErrNoWorker
	}
	if r.isClosed() {
		return ports.Task{}, taskrules.ErrRegistryClosed
	}
	now := r.now()
	task := taskrules.NewWorkingTask(nt, now)
	err := r.ns.Batch(ctx, func(root *bbolt.Bucket) error {
		ob, tasks, err := r.ownerTasks(root, task.Owner, now)
		if err != nil {
			return err
		}
		if err := taskrules.CheckStartBound(r.limits, tasks); err != nil {
			return err
		}
		return putTask(ob, task)
	})
	if err != nil {
		return ports.Task{}, err
	}
	if !r.goWork(func() { r.run(task, work) }) {
		// Closed between the write and here: the task is interrupted,
		// exactly as a restart would report it.
		_ = r.finish(context.Background(), task, nil, taskrules.ErrTaskInterrupted)
	}
	return task, nil
}

// run waits for a worker slot, runs the work and records how it ended.
func (r *TaskRegistry) run(task ports.Task, work ports.TaskWork) {
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	case <-r.ctx.Done():
		_ = r.finish(context.Background(), task, nil, taskrules.ErrTaskInterrupted)
		return
	}
	check := func(ctx context.Context) error { return r.check(ctx, task) }
	if check(r.ctx) != nil {
		return // cancelled while queued; its state is recorded already
	}
	result, err := work.Safe(r.ctx, ports.TaskRun{Task: task, Check: check})
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
	got, err := r.get(ctx, task.Owner, task.ID, false)
	if err != nil {
		return err
	}
	if got.Status == ports.TaskCancelled {
		return ports.ErrTaskCancelled
	}
	return nil
}

// finish records the end of a task's work, unless its status changed
// meanwhile (a cancellation wins over the work's late result).
func (r *TaskRegistry) finish(ctx context.Context, task ports.Task, result []byte, workErr error) error {
	now := r.now()
	return r.ns.Batch(ctx, func(root *bbolt.Bucket) error {
		ob, tasks, err := r.ownerTasks(root, task.Owner, now)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(tasks, func(t ports.Task) bool { return t.ID == task.ID })
		if i < 0 || tasks[i].Status != ports.TaskWorking {
			return nil
		}
		t := taskrules.FinishedTask(tasks[i], result, workErr, now)
		tasks[i] = t
		if err := putTask(ob, t); err != nil {
			return err
		}
		return r.evictFinished(ob, tasks)
	})
}

// Schedule implements ports.TaskRegistry.
func (r *TaskRegistry) Schedule(ctx context.Context, nt ports.NewTimer) (ports.Task, error) {
	if r.isClosed() {
		return ports.Task{}, taskrules.ErrRegistryClosed
	}
	now := r.now()
	task := taskrules.NewPendingTimer(nt, now)
	err := r.ns.Batch(ctx, func(root *bbolt.Bucket) error {
		ob, tasks, err := r.ownerTasks(root, task.Owner, now)
		if err != nil {
			return err
		}
		if err := taskrules.CheckScheduleBound(r.limits, tasks); err != nil {
			return err
		}
		if err := putTask(ob, task); err != nil {
			return err
		}
		return putDue(root, task)
	})
	if err != nil {
		return ports.Task{}, err
	}
	r.poke()
	return task, nil
}

// Get implements ports.TaskRegistry.
func (r *TaskRegistry) Get(ctx context.Context, owner, id string) (ports.Task, error) {
	return r.get(ctx, owner, id, true)
}

// get reads one task; expire hides a finished task past its TTL (the
// worker's own Check sees its task whatever its age).
func (r *TaskRegistry) get(ctx context.Context, owner, id string, expire bool) (ports.Task, error) {
	var task ports.Task
	err := r.ns.View(ctx, func(root *bbolt.Bucket) error {
		var err error
		_, task, err = r.lookup(root, owner, id, r.now(), expire)
		return err
	})
	return task, err
}

// lookup finds the owner's task id: ErrNotFound when absent, foreign, or
// (with expire) finished longer than the TTL ago.
func (r *TaskRegistry) lookup(root *bbolt.Bucket, owner, id string, now time.Time, expire bool) (*bbolt.Bucket, ports.Task, error) {
	var task ports.Task
	ob := ownerBucket(root, owner)
	if ob == nil || len(id) != ports.TaskIDLength {
		return nil, task, ports.ErrNotFound
	}
	found, err := getTask(ob, ownerKey(owner), []byte(id), &task)
	if err != nil {
		return nil, task, err
	}
	if !found || expire && r.expired(task, now) {
		return nil, task, ports.ErrNotFound
	}
	return ob, task, nil
}

// List implements ports.TaskRegistry.
func (r *TaskRegistry) List(ctx context.Context, owner string, limit int) ([]ports.Task, bool, error) {
	var tasks []ports.Task
	err := r.ns.View(ctx, func(root *bbolt.Bucket) error {
		ob := ownerBucket(root, owner)
		if ob == nil {
			return nil
		}
		all, err := readTasks(ob, ownerKey(owner))
		if err != nil {
			return err
		}
		now := r.now()
		tasks = slices.DeleteFunc(all, func(t ports.Task) bool { return r.expired(t, now) })
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	page, more := taskrules.ListPage(tasks, limit)
	return page, more, nil
}

// Cancel implements ports.TaskRegistry.
func (r *TaskRegistry) Cancel(ctx context.Context, owner, id string) (ports.Task, error) {
	var task ports.Task
	now := r.now()
	err := r.ns.Batch(ctx, func(root *bbolt.Bucket) error {
		ob, found, err := r.lookup(root, owner, id, now, true)
		if err != nil {
			return err
		}
		task = found
		if task.Status != ports.TaskWorking {
			return nil // idempotent: a finished task stays as it is
		}
		task = taskrules.CancelledTask(task, now)
		if err := putTask(ob, task); err != nil {
			return err
		}
		if task.Kind == ports.TaskKindTimer {
			if err := deleteDue(root, task); err != nil {
				return err
			}
		}
		tasks, err := readTasks(ob, ownerKey(owner))
		if err != nil {
			return err
		}
		return r.evictFinished(ob, tasks)
	})
	if err != nil {
		return ports.Task{}, err
	}
	return task, nil
}

// recoverInterrupted fails the tasks the previous process left working (a timer
// stays pending: the timer loop fires it, late if its time has passed)
// and purges expired finished tasks.
func (r *TaskRegistry) recoverInterrupted(ctx context.Context) error {
	now := r.now()
	var dirty bool
	err := r.ns.View(ctx, func(root *bbolt.Bucket) error {
		var err error
		dirty, err = r.eachOwner(root, func(_ *bbolt.Bucket, tasks []ports.Task) (bool, error) {
			return slices.ContainsFunc(tasks, func(t ports.Task) bool { return taskrules.IsRunningTask(t) || r.expired(t, now) }), nil
		})
		return err
	})
	if err != nil || !dirty {
		return err // an unchanged store costs no write (and no fsync) at start-up
	}
	return r.ns.Update(ctx, func(root *bbolt.Bucket) error {
		_, err := r.eachOwner(root, func(ob *bbolt.Bucket, tasks []ports.Task) (bool, error) {
			for _, t := range tasks {
				if taskrules.IsRunningTask(t) {
					if err := putTask(ob, taskrules.InterruptedTask(t, now)); err != nil {
						return false, err
					}
				}
			}
			return false, r.purgeExpired(ob, tasks, now)
		})
		return err
	})
}

// sweep purges finished tasks past their TTL over every owner.
func (r *TaskRegistry) sweep(ctx context.Context) error {
	now := r.now()
	return r.ns.Update(ctx, func(root *bbolt.Bucket) error {
		_, err := r.eachOwner(root, func(ob *bbolt.Bucket, tasks []ports.Task) (bool, error) {
			return false, r.purgeExpired(ob, tasks, now)
		})
		return err
	})
}

// eachOwner calls fn with every owner's bucket and tasks; it reports
// whether any call did.
func (r *TaskRegistry) eachOwner(root *bbolt.Bucket, fn func(ob *bbolt.Bucket, tasks []ports.Task) (bool, error)) (bool, error) {
	owners := root.Bucket(taskOwnersKey)
	if owners == nil {
		return false, nil
	}
	var keys [][]byte
	if err := owners.ForEachBucket(func(k []byte) error { keys = append(keys, slices.Clone(k)); return nil }); err != nil {
		return false, err
	}
	any := false
	for _, k := range keys {
		ob := owners.Bucket(k)
		tasks, err := readTasks(ob, k)
		if err != nil {
			return false, err
		}
		hit, err := fn(ob, tasks)
		if err != nil {
			return false, err
		}
		any = any || hit
	}
	return any, nil
}

// ownerTasks is the owner's bucket (created) and its live tasks, after
// purging the expired ones.
func (r *TaskRegistry) ownerTasks(root *bbolt.Bucket, owner string, now time.Time) (*bbolt.Bucket, []ports.Task, error) {
	owners, err := root.CreateBucketIfNotExists(taskOwnersKey)
	if err != nil {
		return nil, nil, err
	}
	ob, err := owners.CreateBucketIfNotExists(ownerKey(owner))
	if err != nil {
		return nil, nil, err
	}
	tasks, err := readTasks(ob, ownerKey(owner))
	if err != nil {
		return nil, nil, err
	}
	if err := r.purgeExpired(ob, tasks, now); err != nil {
		return nil, nil, err
	}
	return ob, slices.DeleteFunc(tasks, func(t ports.Task) bool { return r.expired(t, now) }), nil
}

func ownerBucket(root *bbolt.Bucket, owner string) *bbolt.Bucket {
	owners := root.Bucket(taskOwnersKey)
	if owners == nil {
		return nil
	}
	return owners.Bucket(ownerKey(owner))
}

func (r *TaskRegistry) expired(t ports.Task, now time.Time) bool {
	return taskrules.TaskExpired(r.limits, t, now)
}

func (r *TaskRegistry) purgeExpired(ob *bbolt.Bucket, tasks []ports.Task, now time.Time) error {
	for _, t := range tasks {
		if r.expired(t, now) {
			if err := ob.Delete([]byte(t.ID)); err != nil {
				return err
			}
		}
	}
	return nil
}

// evictFinished deletes the owner's oldest finished tasks beyond
// MaxFinishedPerOwner.
func (r *TaskRegistry) evictFinished(ob *bbolt.Bucket, tasks []ports.Task) error {
	for _, t := range taskrules.TasksToEvict(r.limits, tasks) {
		if err := ob.Delete([]byte(t.ID)); err != nil {
			return err
		}
	}
	return nil
}

// dueKey orders pending timers by due time, then owner and id.
func dueKey(t ports.Task) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(max(t.DueAt.UnixNano(), 0)))
	k = append(k, ownerKey(t.Owner)...)
	return append(k, t.ID...)
}

func putDue(root *bbolt.Bucket, t ports.Task) error {
	due, err := root.CreateBucketIfNotExists(taskDueKey)
	if err != nil {
		return err
	}
	return due.Put(dueKey(t), nil)
}

func deleteDue(root *bbolt.Bucket, t ports.Task) error {
	if due := root.Bucket(taskDueKey); due != nil {
		return due.Delete(dueKey(t))
	}
	return nil
}

// dueEntry splits a due key.
func dueEntry(k []byte) (at time.Time, owner, id []byte, err error) {
	const ownerLen = 32
	if len(k) != 8+ownerLen+ports.TaskIDLength {
		return time.Time{}, nil, nil, errors.Join(bolt.ErrCorrupt, errTaskCorrupt)
	}
	at = time.Unix(0, int64(binary.BigEndian.Uint64(k[:8]))).UTC()
	return at, k[8 : 8+ownerLen], k[8+ownerLen:], nil
}
