package tasktools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

type taskGetInput struct {
	taskIDArg
}

type taskGetOutput struct {
	handleOut
	Result map[string]any `json:"result,omitempty" description:"A completed task's result: a scan's findings, or a fired timer's payload and next_task_id."`
	Error  string         `json:"error,omitempty" description:"Why the task failed."`
}

// taskGet defines task_get.
var taskGet = catalog.Define[taskGetInput, taskGetOutput](catalog.ToolDef{
	Name:    "task_get",
	Scope:   "tasks:read",
	Ceiling: catalog.Ceiling{Var: "ARROWHEAD_TASK_GET_PER_MINUTE", Default: 120},
	Description: "Return the status of a task you started, and its result once it has finished. " +
		"A task id you do not own is reported as not found. Example: task_get(task_id=\"3f2a...\")",
	Annotations: catalog.Annotations{Title: "Get a task", ReadOnly: true, Idempotent: true},
})

func (h *handles) get(ctx context.Context, call catalog.Call, in taskGetInput) (*catalog.Reply[taskGetOutput], error) {
	who, err := catalog.Owner(call.Principal)
	if err != nil {
		return nil, err
	}
	task, err := h.tasks.Get(ctx, who, in.TaskID)
	if err != nil {
		return nil, refusal(err)
	}
	out := taskGetOutput{handleOut: handle(task), Result: result(task)}
	if task.Status == ports.TaskFailed {
		out.Error = content.SanitizeString(task.Error)
	}
	var text strings.Builder
	fmt.Fprintf(&text, "Task %s (%s) is %s.", task.ID, task.Kind, task.Status)
	if out.Error != "" {
		fmt.Fprintf(&text, " %s", catalog.Sentence(out.Error))
	}
	if out.Result != nil {
		raw, _ := json.Marshal(out.Result)
		text.WriteString("\n")
		text.WriteString(content.Frame(string(raw), content.NewSource("task", task.ID, "json", raw)).Text)
	}
	return catalog.Answer(out, text.String()), nil
}

// result is a completed task's result as task_get returns it, sanitized:
// a scan's output, or a timer's payload and the id of its next
// occurrence. Nil before completion.
func result(t ports.Task) map[string]any {
	if t.Status != ports.TaskCompleted {
		return nil
	}
	if t.Kind != ports.TaskKindTimer {
		return content.SanitizedObject(t.Result)
	}
	out := map[string]any{}
	if len(t.Result) > 0 && string(t.Result) != "null" {
		out["payload"] = content.SanitizedObject(t.Result)
	}
	if t.Next != "" {
		out["next_task_id"] = t.Next
	}
	return out
}
