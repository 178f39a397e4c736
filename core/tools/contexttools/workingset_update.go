package contexttools

import (
	"context"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

type workingsetUpdateInput struct {
	setRef
	Action string    `json:"action" description:"pin adds items (creating the set), unpin removes them, clear deletes the set." enum:"pin,unpin,clear"`
	Items  []pinItem `json:"items,omitempty" description:"Items to pin or unpin (notes are ignored when unpinning)." maxItems:"$items"`
}

// workingsetUpdate defines workingset_update; "$items" is the family's
// ARROWHEAD_WORKINGSET_MAX_ITEMS bound.
var workingsetUpdate = catalog.Define[workingsetUpdateInput, workingSetOutput](catalog.ToolDef{
	Name:        "workingset_update",
	Scope:       "context:write",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_WORKINGSET_UPDATE_PER_MINUTE", Default: 30},
	Description: "Pin, unpin, or clear references in a named working set. Each item is {\"kind\": \"doc\"|\"repo_file\", \"identifier\": ..., \"note\": ...}; pinned items are authorized as you pin them. Example: workingset_update(name=\"bug\", action=\"pin\", items=[{\"kind\": \"repo_file\", \"identifier\": \"src/app.py\"}])",
	Annotations: catalog.Annotations{Title: "Update working set"},
	Bounds:      catalog.Bounds{"note": maxNoteBytes},
})

// update is workingset_update.
func (w *server) update(ctx context.Context, call catalog.Call, in workingsetUpdateInput) (*catalog.Reply[workingSetOutput], error) {
	who, err := catalog.Owner(call.Principal)
	if err != nil {
		return nil, err
	}
	if in.Action != "clear" && len(in.Items) == 0 {
		return nil, catalog.Invalid("Argument 'items' must list at least one item to %s.", in.Action)
	}
	items := make([]ports.WorkingSetItem, len(in.Items))
	for i, it := range in.Items {
		rel, err := catalog.CleanPath(it.Identifier)
		if err != nil {
			// CleanPath's refusal, a sentence that never echoes the path.
			return nil, catalog.Invalid("Item %d has an invalid identifier. %s", i+1, err.Error())
		}
		items[i] = ports.WorkingSetItem{Kind: it.Kind, Identifier: rel, Note: it.Note}
	}
	var set ports.WorkingSet
	switch in.Action {
	case "pin":
		// Every item is authorized and proven readable before anything is
		// stored: a refused item leaves the set as it was.
		for i, it := range items {
			if _, err := w.resolver.read(ctx, call.Principal, it); err != nil {
				return nil, pinRefusal(i, err)
			}
		}
		set, err = w.sets.Pin(ctx, who, in.Name, items)
	case "unpin":
		set, err = w.sets.Unpin(ctx, who, in.Name, items)
	default:
		err = w.sets.Delete(ctx, who, in.Name)
		set = ports.WorkingSet{Name: in.Name}
	}
	if err != nil {
		return nil, setRefusal(err)
	}
	return setReply(set), nil
}
