package taskrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// DefaultTaskWorkers is how many tasks run at once in one process; more
// stay working, queued, until a worker is free. Scans read the disk: a
// few at a time keep the machine responsive.
const DefaultTaskWorkers = 4

// ErrRegistryClosed refuses calls after Close.
var ErrRegistryClosed = errors.New("the task registry is closed")

// CheckTaskLimits refuses bounds that are not all positive.
func CheckTaskLimits(l ports.TaskLimits) error {
	if l.MaxRunningPerOwner <= 0 || l.MaxTimersPerOwner <= 0 || l.MaxFinishedPerOwner <= 0 || l.FinishedTTL <= 0 {
		return errors.New("ARROWHEAD_TASK_SCHEDULE_MAX_PER_OWNER and the task bounds must be positive")
	}
	return nil
}

// ErrTaskInterrupted is the error of work stopped because its process
// closed the registry or died: the task fails with ports.TaskInterrupted.
var ErrTaskInterrupted = errors.New(ports.TaskInterrupted)

// errResultNotJSON fails a task whose work returned something other than
// JSON (a worker's bug): it is recorded as failed, never stored.
var errResultNotJSON = errors.New("the task failed: its result could not be recorded")

// NewWorkingTask is the record Start writes for nt at now.
func NewWorkingTask(nt ports.NewTask, now time.Time) ports.Task {
	return ports.Task{ID: ports.NewTaskID(), Owner: nt.Principal.Key(), Kind: nt.Kind, Status: ports.TaskWorking,
		CreatedAt: now, UpdatedAt: now, Principal: nt.Principal, Input: slices.Clone(nt.Input)}
}

// NewPendingTimer is the record Schedule writes for nt at now.
func NewPendingTimer(nt ports.NewTimer, now time.Time) ports.Task {
	return ports.Task{ID: ports.NewTaskID(), Owner: nt.Principal.Key(), Kind: ports.TaskKindTimer, Status: ports.TaskWorking,
		CreatedAt: now, UpdatedAt: now, Principal: nt.Principal, Input: slices.Clone(nt.Payload),
		DueAt: nt.DueAt.UTC().Round(0), Repeat: nt.Repeat}
}

// FinishedTask is t (working) once its work returned result or workErr at
// now: failed with the error's text, failed when the result is not JSON,
// completed with it otherwise.
func FinishedTask(t ports.Task, result []byte, workErr error, now time.Time) ports.Task {
	t.UpdatedAt = now
	switch {
	case workErr != nil:
		t.Status, t.Error = ports.TaskFailed, workErr.Error()
	case !json.Valid(result):
		t.Status, t.Error = ports.TaskFailed, errResultNotJSON.Error()
	default:
		t.Status, t.Result = ports.TaskCompleted, slices.Clone(result)
	}
	return t
}

// InterruptedTask is t (working, not a timer) once the process running it
// is known to be gone.
func InterruptedTask(t ports.Task, now time.Time) ports.Task {
	t.Status, t.Error, t.UpdatedAt = ports.TaskFailed, ports.TaskInterrupted, now
	return t
}

// CancelledTask is t (working) cancelled at now.
func CancelledTask(t ports.Task, now time.Time) ports.Task {
	t.Status, t.UpdatedAt = ports.TaskCancelled, now
	return t
}

// FiredTimer is the pending timer t fired at now: completed with its
// payload as result and, for a repeating one, the next occurrence (a new
// id, named in fired.Next) due ports.NextDue later.
func FiredTimer(t ports.Task, now time.Time) (fired ports.Task, next ports.Task, repeats bool) {
	t.Status, t.Result, t.UpdatedAt = ports.TaskCompleted, slices.Clone(t.Input), now
	if t.Repeat <= 0 {
		return t, ports.Task{}, false
	}
	next = t
	next.ID, next.Status, next.Result = ports.NewTaskID(), ports.TaskWorking, nil
	next.CreatedAt, next.UpdatedAt = now, now
	next.DueAt = ports.NextDue(t.DueAt, t.Repeat, now)
	t.Next = next.ID
	return t, next, true
}

// IsRunningTask reports whether t is working work other than a timer:
// what MaxRunningPerOwner bounds.
func IsRunningTask(t ports.Task) bool {
	return t.Status == ports.TaskWorking && t.Kind != ports.TaskKindTimer
}

// IsPendingTimer reports whether t is a timer not yet fired: what
// MaxTimersPerOwner bounds.
func IsPendingTimer(t ports.Task) bool {
	return t.Kind == ports.TaskKindTimer && t.Status == ports.TaskWorking
}

// CheckStartBound refuses one more running task for an owner whose live
// tasks are tasks.
func CheckStartBound(l ports.TaskLimits, tasks []ports.Task) error {
	if count(tasks, IsRunningTask) >= l.MaxRunningPerOwner {
		return ports.ErrTooManyTasks
	}
	return nil
}

// CheckScheduleBound refuses one more pending timer for an owner whose
// live tasks are tasks.
func CheckScheduleBound(l ports.TaskLimits, tasks []ports.Task) error {
	if count(tasks, IsPendingTimer) >= l.MaxTimersPerOwner {
		return ports.ErrTooManyTimers
	}
	return nil
}

// TaskExpired reports whether t finished longer than FinishedTTL before
// now: it is no longer listed, and is purged at the owner's next write.
func TaskExpired(l ports.TaskLimits, t ports.Task, now time.Time) bool {
	return t.Status.Finished() && now.Sub(t.UpdatedAt) > l.FinishedTTL
}

// ExpiredBefore is the update time before which a finished task has
// expired at now (TaskExpired, for a query's index).
func ExpiredBefore(l ports.TaskLimits, now time.Time) time.Time { return now.Add(-l.FinishedTTL) }

// TasksToEvict are the owner's oldest finished tasks beyond
// MaxFinishedPerOwner, among tasks.
func TasksToEvict(l ports.TaskLimits, tasks []ports.Task) []ports.Task {
	finished := slices.DeleteFunc(slices.Clone(tasks), func(t ports.Task) bool { return !t.Status.Finished() })
	if len(finished) <= l.MaxFinishedPerOwner {
		return nil
	}
	slices.SortFunc(finished, func(a, b ports.Task) int {
		if c := a.UpdatedAt.Compare(b.UpdatedAt); c != 0 {
			return c
		}
		return TasksByCreation(a, b)
	})
	return finished[:len(finished)-l.MaxFinishedPerOwner]
}

// TasksByCreation orders tasks as List returns them: oldest first, then
// by id.
func TasksByCreation(a, b ports.Task) int {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return bytes.Compare([]byte(a.ID), []byte(b.ID))
}

// ListPage is List's answer from the owner's live tasks (sorted here):
// up to limit of them, oldest first, and whether more exist. A negative
// limit is no limit.
func ListPage(tasks []ports.Task, limit int) ([]ports.Task, bool) {
	slices.SortFunc(tasks, TasksByCreation)
	if limit >= 0 && len(tasks) > limit {
		return tasks[:limit], true
	}
	return tasks, false
}

func count(tasks []ports.Task, pred func(ports.Task) bool) int {
	n := 0
	for _, t := range tasks {
		if pred(t) {
			n++
		}
	}
	return n
}

// EncodeTask is t as an embedded store keeps it (JSON, taskRow).
func EncodeTask(t ports.Task) ([]byte, error) { return json.Marshal(toTaskRow(t)) }

// errTaskRecordCorrupt is a task record that does not decode, or names
// another task than the key it is stored under.
var errTaskRecordCorrupt = errors.New("a task record in the embedded store is damaged")

// DecodeTask reads a record EncodeTask wrote, stored under id.
func DecodeTask(raw []byte, id string) (ports.Task, error) {
	var row taskRow
	if err := json.Unmarshal(raw, &row); err != nil || row.ID != id {
		return ports.Task{}, errTaskRecordCorrupt
	}
	return row.task(), nil
}
