package contexttools

import (
	"context"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

// setRef names one of the caller's working sets: a strict identifier
// (letters, digits, '.', '_', '-'; no separators or spaces), safe in any
// key or log.
type setRef struct {
	Name string `json:"name" description:"Working set name: 1-64 letters, digits, '.', '_' or '-'." pattern:"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$" maxLength:"64"`
}

type workingsetGetInput struct {
	setRef
}

type pinItem struct {
	Kind       string `json:"kind" description:"What the pin refers to." enum:"doc,repo_file"`
	Identifier string `json:"identifier" description:"Relative path of the document or repository file." maxLength:"$path"`
	Note       string `json:"note,omitempty" description:"Free text about the pin." maxLength:"$note"`
}

type workingSetOutput struct {
	Name  string    `json:"name" description:"The working set."`
	Items []pinItem `json:"items" description:"Pinned items, in pin order."`
}

// workingsetGet defines workingset_get.
var workingsetGet = catalog.Define[workingsetGetInput, workingSetOutput](catalog.ToolDef{
	Name:        "workingset_get",
	Scope:       "context:read",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_WORKINGSET_GET_PER_MINUTE", Default: 60},
	Description: "Read the contents of a named working set you own. A set you do not own is reported as not found. Example: workingset_get(name=\"bug\")",
	Annotations: catalog.Annotations{Title: "Read working set", ReadOnly: true, Idempotent: true},
	Bounds:      catalog.Bounds{"note": maxNoteBytes},
})

// get is workingset_get.
func (w *server) get(ctx context.Context, call catalog.Call, in workingsetGetInput) (*catalog.Reply[workingSetOutput], error) {
	who, err := catalog.Owner(call.Principal)
	if err != nil {
		return nil, err
	}
	set, err := w.sets.Get(ctx, who, in.Name)
	if err != nil {
		return nil, setRefusal(err)
	}
	return setReply(set), nil
}

// setReply renders a set; its notes are the caller's own text, still
// sanitized so no control sequence reaches a terminal or a model.
func setReply(set ports.WorkingSet) *catalog.Reply[workingSetOutput] {
	out := workingSetOutput{Name: set.Name, Items: make([]pinItem, 0, len(set.Items))}
	var text strings.Builder
	text.WriteString("Working set " + set.Name + ":\n")
	for _, it := range set.Items {
		p := pinItem{Kind: it.Kind, Identifier: content.SanitizeString(it.Identifier), Note: content.SanitizeString(it.Note)}
		out.Items = append(out.Items, p)
		text.WriteString("- " + p.Kind + " " + p.Identifier)
		if p.Note != "" {
			text.WriteString(": " + strings.ReplaceAll(p.Note, "\n", " "))
		}
		text.WriteString("\n")
	}
	if len(set.Items) == 0 {
		text.WriteString("(empty)\n")
	}
	return catalog.Answer(out, text.String())
}
