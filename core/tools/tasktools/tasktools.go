// Package tasktools is the tasks family: handle-based background work and
// timers, owner-scoped. scan_corpus_async starts doc_scan's work in the
// background and returns a handle at once; task_get polls a handle,
// task_update cancels it, task_list lists the caller's handles, and
// task_schedule sets a timer that completes carrying its payload.
//
// Ownership is structural: every handle is recorded under the verified
// caller identity and every lookup includes it, so another caller's handle
// reads as not found. Handles are 128 random bits. The registry behind the
// tools (ports.TaskRegistry) is durable: pending timers survive a restart
// and fire late rather than never, and a task that was working when its
// process died is reported failed, never left working.
package tasktools

import (
	"errors"
	"math"
	"time"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Bounds of the registry that the seed does not make settings of.
const (
	// MaxRunningPerOwner bounds one caller's working tasks (timers
	// apart): a background scan reads the corpus, so a few at a time.
	MaxRunningPerOwner = 4
	// MaxFinishedPerOwner bounds one caller's finished tasks kept for
	// polling; finishing one more evicts the oldest.
	MaxFinishedPerOwner = 50
	// FinishedTTL is how long a finished task stays pollable.
	FinishedTTL = 24 * time.Hour
	// MaxResultBytes bounds a task's result as stored: a scan's findings
	// are dropped from the end until it fits, and "result" is added to
	// its truncated list.
	MaxResultBytes = 256 << 10
	// MaxListed bounds task_list: every handle an owner can hold.
	MaxListed = MaxRunningPerOwner + MaxFinishedPerOwner
	// ScanMaxDuration bounds a background scan, which may take longer
	// than doc_scan's interactive ARROWHEAD_SCAN_TIMEOUT_SECONDS.
	ScanMaxDuration = 15 * time.Minute
)

// Config is what the tasks family reads from the settings.
type Config struct {
	// MaxTimersPerOwner bounds one caller's pending timers.
	MaxTimersPerOwner int `setting:"ARROWHEAD_TASK_SCHEDULE_MAX_PER_OWNER"`
	// MaxDelaySeconds and MinRepeatSeconds bound a timer's delay and
	// repeat (the "$max_delay" and "$min_repeat" bounds, rounded inwards
	// to whole seconds).
	MaxDelaySeconds  float64 `setting:"ARROWHEAD_TASK_SCHEDULE_MAX_DELAY_SECONDS"`
	MinRepeatSeconds float64 `setting:"ARROWHEAD_TASK_SCHEDULE_MIN_REPEAT_SECONDS"`
	// PayloadMaxBytes caps a timer's payload.
	PayloadMaxBytes int `setting:"ARROWHEAD_TASK_PAYLOAD_MAX_BYTES"`
}

// Limits are the registry's bounds under c.
func (c Config) Limits() ports.TaskLimits {
	return ports.TaskLimits{
		MaxRunningPerOwner:  MaxRunningPerOwner,
		MaxTimersPerOwner:   c.MaxTimersPerOwner,
		MaxFinishedPerOwner: MaxFinishedPerOwner,
		FinishedTTL:         FinishedTTL,
	}
}

// Ports are what the tasks family's tools use.
type Ports struct {
	// Tasks records and runs the tasks (the embedded store by default).
	Tasks ports.TaskRegistry
	// Clock decides timers' due times.
	Clock ports.Clock
}

// Family is the tasks family.
var Family = core.Family[Config, Ports, *handles]{
	ID: catalog.FamilyTasks,
	Bounds: func(c Config) catalog.Bounds {
		return catalog.Bounds{"max_delay": int(math.Floor(c.MaxDelaySeconds)), "min_repeat": int(math.Ceil(c.MinRepeatSeconds))}
	},
	Serve: func(c Config, p Ports) *handles { return &handles{config: c, tasks: p.Tasks, clock: p.Clock} },
	Tools: []core.FamilyTool[*handles]{
		core.Tool(scanCorpusAsync, (*handles).startScan),
		core.Tool(taskGet, (*handles).get),
		core.Tool(taskUpdate, (*handles).update),
		core.Tool(taskList, (*handles).list),
		core.Tool(taskSchedule, (*handles).schedule),
	},
}

// handles is the family's handlers over the registry.
type handles struct {
	config Config
	tasks  ports.TaskRegistry
	clock  ports.Clock
}

// taskIDArg is a handle: only ever the server's own, 128 random bits in
// lowercase hex.
type taskIDArg struct {
	TaskID string `json:"task_id" description:"The task handle." pattern:"^[0-9a-f]{32}$"`
}

// handleOut describes a task without its result.
type handleOut struct {
	TaskID    string `json:"task_id" description:"The task handle."`
	Kind      string `json:"kind" description:"What the task does." enum:"scan_corpus,timer"`
	Status    string `json:"status" description:"The task's state." enum:"working,completed,failed,cancelled"`
	CreatedAt string `json:"created_at" description:"When the task was created (RFC 3339, UTC)."`
	UpdatedAt string `json:"updated_at" description:"When its status last changed (RFC 3339, UTC)."`
	DueAt     string `json:"due_at,omitempty" description:"A timer's due time (RFC 3339, UTC)."`
}

func handle(t ports.Task) handleOut {
	h := handleOut{TaskID: t.ID, Kind: t.Kind, Status: string(t.Status), CreatedAt: stamp(t.CreatedAt), UpdatedAt: stamp(t.UpdatedAt)}
	if !t.DueAt.IsZero() {
		h.DueAt = stamp(t.DueAt)
	}
	return h
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// refusal maps registry errors onto refusals that name no value.
func refusal(err error) error {
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return catalog.NotFound("Task")
	case errors.Is(err, ports.ErrTooManyTasks):
		return catalog.Invalid("You have %d tasks running already; wait for one to finish or cancel one.", MaxRunningPerOwner)
	case errors.Is(err, ports.ErrTooManyTimers):
		return catalog.Invalid("You have the maximum number of pending timers (ARROWHEAD_TASK_SCHEDULE_MAX_PER_OWNER).")
	}
	// Starting or scheduling is not idempotent: a task that was created is
	// listed, and repeating it would create a second one.
	if r, ok := catalog.StoreRefusal(err, "The task registry",
		"Check task_list before repeating it: a task or timer that was created is listed there, and a cancel can be repeated safely."); ok {
		return r
	}
	return catalog.Failed("The task registry could not complete the request.").WithCause(err)
}
