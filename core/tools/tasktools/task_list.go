package tasktools

import (
	"context"
	"fmt"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
)

type taskListInput struct{}

type taskListOutput struct {
	Tasks     []handleOut `json:"tasks" description:"Your task handles, oldest first."`
	Truncated bool        `json:"truncated" description:"True when more tasks exist than were listed."`
}

// taskList defines task_list.
var taskList = catalog.Define[taskListInput, taskListOutput](catalog.ToolDef{
	Name:    "task_list",
	Scope:   "tasks:read",
	Ceiling: catalog.Ceiling{Var: "ARROWHEAD_TASK_LIST_PER_MINUTE", Default: 60},
	Description: "List the task handles you own with their status and kind. Poll one with task_get(task_id=...). " +
		"Example: task_list()",
	Annotations: catalog.Annotations{Title: "List tasks", ReadOnly: true, Idempotent: true},
})

func (h *handles) list(ctx context.Context, call catalog.Call, _ taskListInput) (*catalog.Reply[taskListOutput], error) {
	who, err := catalog.Owner(call.Principal)
	if err != nil {
		return nil, err
	}
	tasks, truncated, err := h.tasks.List(ctx, who, MaxListed+h.config.MaxTimersPerOwner)
	if err != nil {
		return nil, refusal(err)
	}
	out := taskListOutput{Tasks: make([]handleOut, 0, len(tasks)), Truncated: truncated}
	var text strings.Builder
	fmt.Fprintf(&text, "%s:\n", catalog.Count(len(tasks), "tasks"))
	for _, t := range tasks {
		out.Tasks = append(out.Tasks, handle(t))
		fmt.Fprintf(&text, "- %s %s %s\n", t.ID, t.Kind, t.Status)
	}
	if truncated {
		text.WriteString("More tasks exist than are listed.\n")
	}
	return catalog.Answer(out, text.String()), nil
}
