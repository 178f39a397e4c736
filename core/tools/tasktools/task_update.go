package tasktools

import (
	"context"
	"fmt"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

type taskUpdateInput struct {
	taskIDArg
	Action string `json:"action" description:"What to do: cancel, the only action." enum:"cancel"`
}

// taskUpdate defines task_update.
var taskUpdate = catalog.Define[taskUpdateInput, handleOut](catalog.ToolDef{
	Name:    "task_update",
	Scope:   "tasks:write",
	Ceiling: catalog.Ceiling{Var: "ARROWHEAD_TASK_UPDATE_PER_MINUTE", Default: 30},
	Description: "Update a task you started. The only action is \"cancel\": it stops a running task or a pending timer; " +
		"a finished task is left as it is. A task id you do not own is reported as not found. " +
		"Example: task_update(task_id=\"3f2a...\", action=\"cancel\")",
	Annotations: catalog.Annotations{Title: "Cancel a task", Idempotent: true},
})

func (h *handles) update(ctx context.Context, call catalog.Call, in taskUpdateInput) (*catalog.Reply[handleOut], error) {
	who, err := catalog.Owner(call.Principal)
	if err != nil {
		return nil, err
	}
	task, err := h.tasks.Cancel(ctx, who, in.TaskID)
	if err != nil {
		return nil, refusal(err)
	}
	text := fmt.Sprintf("Task %s is cancelled.", task.ID)
	if task.Status != ports.TaskCancelled {
		text = fmt.Sprintf("Task %s had already finished: it is %s.", task.ID, task.Status)
	}
	return catalog.Answer(handle(task), text), nil
}
