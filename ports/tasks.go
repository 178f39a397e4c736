package ports

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"
)

// TaskStatus is a task's state, in the MCP tasks vocabulary.
type TaskStatus string

// Task statuses. A task starts working and ends in exactly one of the
// other three; a finished task never changes status again.
const (
	TaskWorking   TaskStatus = "working"
	TaskCompleted TaskStatus = "completed"
	TaskFailed    TaskStatus = "failed"
	TaskCancelled TaskStatus = "cancelled"
)

// Finished reports whether s is a final status.
func (s TaskStatus) Finished() bool { return s != TaskWorking }

// Task kinds.
const (
	// TaskKindScan is scan_corpus_async's background corpus scan.
	TaskKindScan = "scan_corpus"
	// TaskKindTimer is a task_schedule timer: working until it is due,
	// then completed carrying its payload.
	TaskKindTimer = "timer"
)

// TaskInterrupted is the Error of a task that was working when its
// process stopped: after a restart it is failed with this message, never
// left working.
const TaskInterrupted = "interrupted: the server stopped before the task finished"

// Task errors. Their text is caller-safe: none carries an owner, an id or
// an input. A missing task and another owner's task are both ErrNotFound.
var (
	// ErrTooManyTasks refuses Start beyond TaskLimits.MaxRunningPerOwner.
	ErrTooManyTasks = errors.New("the running task limit for this caller is reached")
	// ErrTooManyTimers refuses Schedule beyond TaskLimits.MaxTimersPerOwner
	// (ARROWHEAD_TASK_SCHEDULE_MAX_PER_OWNER).
	ErrTooManyTimers = errors.New("the pending timer limit for this caller is reached")
	// ErrTaskCancelled is what TaskRun.Check returns once the task has been
	// cancelled: the work stops and its result is discarded.
	ErrTaskCancelled = errors.New("the task was cancelled")
	// ErrNoWorker refuses Start of a kind the registry has no TaskWork for.
	ErrNoWorker = errors.New("no worker serves this task kind")
)

// TaskIDBytes is the size of a task id's randomness: 128 bits, so ids are
// unguessable. An id is their lowercase hex (TaskIDLength characters).
const (
	TaskIDBytes  = 16
	TaskIDLength = 2 * TaskIDBytes
)

// NewTaskID returns a fresh random task id. Every backend mints ids with
// it, so their shape is one and the core can validate it.
func NewTaskID() string {
	var b [TaskIDBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// Task is one task as the registry records it.
type Task struct {
	ID    string
	Owner string
	Kind  string
	// Status is the recorded state; see TaskStatus.
	Status    TaskStatus
	CreatedAt time.Time
	// UpdatedAt is the last status change (a fired timer's firing time).
	UpdatedAt time.Time
	// Principal is the caller as authorized when the task started: its
	// work runs as this principal, on whichever worker claims it.
	Principal Principal
	// Input is the kind's argument, JSON: a scan's {"path_prefix": ...},
	// a timer's payload (null when it has none).
	Input []byte
	// Result is the completed task's JSON: the work's result, or a fired
	// timer's payload. Nil otherwise.
	Result []byte
	// Error is the failed task's caller-safe reason.
	Error string
	// DueAt is a timer's due time; zero for other kinds.
	DueAt time.Time
	// Repeat is a repeating timer's interval; zero for a one-shot one.
	Repeat time.Duration
	// Next is the id of the occurrence a fired repeating timer respawned.
	Next string
}

// NewTask is a task to start: the core has authorized it and bounded Input.
type NewTask struct {
	Kind      string
	Principal Principal
	Input     []byte
}

// NewTimer is a timer to schedule, already bounded by the core.
type NewTimer struct {
	Principal Principal
	// Payload is the caller's JSON, carried as the fired task's Result.
	Payload []byte
	DueAt   time.Time
	// Repeat is zero for a one-shot timer.
	Repeat time.Duration
}

// TaskLimits bound a registry per owner. Each is positive.
type TaskLimits struct {
	// MaxRunningPerOwner bounds the owner's working tasks other than
	// timers.
	MaxRunningPerOwner int
	// MaxTimersPerOwner bounds the owner's pending (working) timers.
	MaxTimersPerOwner int
	// MaxFinishedPerOwner bounds the owner's finished tasks kept for
	// polling: finishing one more evicts the oldest.
	MaxFinishedPerOwner int
	// FinishedTTL is how long a finished task stays pollable; older ones
	// are evicted.
	FinishedTTL time.Duration
}

// TaskRun is one claimed task, handed to its TaskWork.
type TaskRun struct {
	Task Task
	// Check returns ErrTaskCancelled once the task's cancellation is
	// recorded (by any process sharing the registry), and nil while it is
	// still working. Work calls it between units (a scan, between files)
	// and stops on an error.
	Check func(ctx context.Context) error
}

// TaskWork does the work of one task kind. It returns the result JSON, or
// an error whose text is caller-safe: it becomes the failed task's Error.
// ctx ends when the registry closes; the task is then interrupted.
type TaskWork func(ctx context.Context, run TaskRun) (result []byte, err error)

// ErrTaskPanicked is the caller-safe Error of a task whose work panicked.
var ErrTaskPanicked = errors.New("the task failed")

// Safe runs w, turning a panic into ErrTaskPanicked: one bad task never
// takes the server down. Every backend runs work through it.
func (w TaskWork) Safe(ctx context.Context, run TaskRun) (result []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			result, err = nil, ErrTaskPanicked
		}
	}()
	return w(ctx, run)
}

// TaskConfig configures a registry backend.
type TaskConfig struct {
	Limits TaskLimits
	// Workers serve Start, by kind. Timers need none: the registry fires
	// them itself.
	Workers map[string]TaskWork
	// Clock stamps times and decides when timers are due; nil is the
	// system clock.
	Clock Clock
}

// TaskRegistry records owner-scoped background tasks and timers, and runs
// them. owner is always the verified identity (Principal.Subject), never
// an argument; every lookup includes it, so another owner's task is
// ErrNotFound exactly like a task that does not exist.
//
// Every state change is durable when the method returns: a process that
// restarts finds a timer still pending (it fires late rather than never)
// and a task that was working failed with TaskInterrupted. Cancellation is
// a recorded state change, seen by Get and TaskRun.Check in every process
// that shares the registry, not only a signal to the local goroutine.
//
// Implementations are safe for concurrent use and pass the contract suite
// in adapters/tasktest. Closing a backend (its concrete type) stops every
// worker and timer goroutine before it returns.
type TaskRegistry interface {
	// Start records a working task of t.Kind for t.Principal.Subject and
	// hands it to that kind's worker. ErrTooManyTasks when the owner has
	// MaxRunningPerOwner working tasks; ErrNoWorker for an unserved kind.
	Start(ctx context.Context, t NewTask) (Task, error)
	// Schedule records a pending timer. At DueAt it becomes completed
	// with the payload as Result; a repeating one also records the next
	// occurrence (a new id, in Next) due NextDue later. ErrTooManyTimers
	// when the owner has MaxTimersPerOwner pending.
	Schedule(ctx context.Context, t NewTimer) (Task, error)
	// Get returns the owner's task.
	Get(ctx context.Context, owner, id string) (Task, error)
	// List returns up to limit of the owner's tasks, oldest first, and
	// whether more exist.
	List(ctx context.Context, owner string, limit int) ([]Task, bool, error)
	// Cancel records the owner's working task as cancelled and stops its
	// work (a timer never fires, nor respawns). Cancelling a finished task
	// changes nothing: it returns the task as it is, so Cancel is
	// idempotent.
	Cancel(ctx context.Context, owner, id string) (Task, error)
}

// NextDue is when a repeating timer due at due fires next, seen at now:
// the first due+k*repeat (k >= 1) after now, so a timer that fired late
// after a restart does not fire a burst of missed occurrences.
func NextDue(due time.Time, repeat time.Duration, now time.Time) time.Time {
	next := due.Add(repeat)
	if next.After(now) {
		return next
	}
	missed := now.Sub(next)/repeat + 1
	return next.Add(missed * repeat)
}
