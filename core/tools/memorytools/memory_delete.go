package memorytools

import (
	"context"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

type memoryDeleteInput struct {
	namespaceArg
	ID string `json:"id" description:"Id of the memory to delete." pattern:"^[0-9a-f]{32}$"`
}

type deletedOutput struct {
	Deleted bool `json:"deleted" description:"True: the record is gone."`
}

// memoryDelete defines memory_delete.
var memoryDelete = catalog.Define[memoryDeleteInput, deletedOutput](catalog.ToolDef{
	Name:        "memory_delete",
	Scope:       "memory:write",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_MEMORY_DELETE_PER_MINUTE", Default: 30},
	Description: "Delete one memory you own by namespace and id. An id you do not own is reported as not found. Example: memory_delete(namespace=\"prefs\", id=\"3f2a9c0d1e4b5a6f7081920a3b4c5d6e\")",
	Annotations: catalog.Annotations{Title: "Delete memory", Destructive: true, Idempotent: true},
})

func (m *memories) delete(ctx context.Context, call catalog.Call, in memoryDeleteInput) (*catalog.Reply[deletedOutput], error) {
	who, err := m.authorize(ctx, call, ports.ActionWrite, ports.KindMemory, in.Namespace)
	if err != nil {
		return nil, err
	}
	if err := m.backend.Delete(ctx, who, in.Namespace, in.ID); err != nil {
		return nil, refusal(err, "Memory")
	}
	return catalog.Answer(deletedOutput{Deleted: true}, "Deleted memory "+in.ID+"."), nil
}
