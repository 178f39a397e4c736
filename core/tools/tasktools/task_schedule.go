package tasktools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

type taskScheduleInput struct {
	DelaySeconds  float64        `json:"delay_seconds" description:"Seconds from now until the timer fires." minimum:"0" maximum:"$max_delay"`
	Payload       map[string]any `json:"payload,omitempty" description:"Optional JSON object the fired task carries as its result."`
	RepeatSeconds float64        `json:"repeat_seconds,omitempty" description:"Fire again every this many seconds until cancelled." minimum:"$min_repeat" maximum:"$max_delay"`
}

type taskScheduleOutput struct {
	startOutput
	DueAt string `json:"due_at" description:"When the timer fires (RFC 3339, UTC)."`
}

// taskSchedule defines task_schedule; "$max_delay" and "$min_repeat" are
// the family's ARROWHEAD_TASK_SCHEDULE_* bounds.
var taskSchedule = catalog.Define[taskScheduleInput, taskScheduleOutput](catalog.ToolDef{
	Name:    "task_schedule",
	Scope:   "tasks:write",
	Ceiling: catalog.Ceiling{Var: "ARROWHEAD_TASK_SCHEDULE_PER_MINUTE", Default: 10},
	Description: "Schedule a timer that completes after delay_seconds carrying your payload; repeat_seconds respawns " +
		"the next occurrence, whose id the fired task's result names. Poll with task_get(task_id=...). " +
		"Pending timers survive a server restart and fire late rather than never. " +
		"Example: task_schedule(delay_seconds=60, payload={\"note\": \"check build\"})",
	Annotations: catalog.Annotations{Title: "Schedule a timer"},
})

func (h *handles) schedule(ctx context.Context, call catalog.Call, in taskScheduleInput) (*catalog.Reply[taskScheduleOutput], error) {
	if _, err := catalog.Owner(call.Principal); err != nil {
		return nil, err
	}
	c := h.config
	// The schema's bounds are whole seconds; the settings may not be.
	if in.DelaySeconds < 0 || in.DelaySeconds > c.MaxDelaySeconds {
		return nil, catalog.Invalid("delay_seconds must be between 0 and ARROWHEAD_TASK_SCHEDULE_MAX_DELAY_SECONDS.")
	}
	if in.RepeatSeconds != 0 && (in.RepeatSeconds < c.MinRepeatSeconds || in.RepeatSeconds > c.MaxDelaySeconds) {
		return nil, catalog.Invalid("repeat_seconds must be at least ARROWHEAD_TASK_SCHEDULE_MIN_REPEAT_SECONDS and at most ARROWHEAD_TASK_SCHEDULE_MAX_DELAY_SECONDS.")
	}
	var payload []byte
	if in.Payload != nil {
		raw, err := json.Marshal(in.Payload)
		if err != nil {
			return nil, catalog.Invalid("The payload must be a JSON object.")
		}
		clean, err := content.SanitizeJSON(raw, content.JSONLimits{MaxBytes: c.PayloadMaxBytes + 1})
		if err != nil || len(clean) > c.PayloadMaxBytes {
			return nil, catalog.Invalid("The payload exceeds %d bytes (ARROWHEAD_TASK_PAYLOAD_MAX_BYTES) or is not plain JSON.", c.PayloadMaxBytes)
		}
		payload = []byte(clean)
	}
	task, err := h.tasks.Schedule(ctx, ports.NewTimer{
		Principal: call.Principal,
		Payload:   payload,
		DueAt:     h.clock.Now().Add(settings.Seconds(in.DelaySeconds)),
		Repeat:    settings.Seconds(in.RepeatSeconds),
	})
	if err != nil {
		return nil, refusal(err)
	}
	out := taskScheduleOutput{startOutput: startOutput{TaskID: task.ID, Status: string(task.Status)}, DueAt: stamp(task.DueAt)}
	return catalog.Answer(out, fmt.Sprintf("Scheduled timer %s, due %s.", task.ID, out.DueAt)), nil
}
