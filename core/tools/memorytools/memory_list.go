package memorytools

import (
	"context"
	"fmt"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

type memoryListInput struct {
	namespaceArg
}

type memoryEntry struct {
	ID         string         `json:"id" description:"The memory's id."`
	Metadata   map[string]any `json:"metadata" description:"The memory's metadata, sanitized."`
	CreatedAt  string         `json:"created_at" description:"When the memory was created (RFC 3339)."`
	UpdatedAt  string         `json:"updated_at" description:"When it was last written (RFC 3339)."`
	Size       int            `json:"size" description:"Bytes of content and metadata." minimum:"0"`
	Provenance provenanceOut  `json:"provenance" description:"Who wrote it, and when."`
}

type memoryListOutput struct {
	Memories  []memoryEntry `json:"memories" description:"The namespace's memories, oldest first."`
	Truncated bool          `json:"truncated" description:"True when more memories exist than were listed."`
}

// memoryList defines memory_list.
var memoryList = catalog.Define[memoryListInput, memoryListOutput](catalog.ToolDef{
	Name:        "memory_list",
	Scope:       "memory:read",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_MEMORY_LIST_PER_MINUTE", Default: 60},
	Description: "List the ids and metadata of the memories in a namespace you own. Example: memory_list(namespace=\"prefs\")",
	Annotations: catalog.Annotations{Title: "List memories", ReadOnly: true, Idempotent: true},
})

func (m *memories) list(ctx context.Context, call catalog.Call, in memoryListInput) (*catalog.Reply[memoryListOutput], error) {
	who, err := m.authorize(ctx, call, ports.ActionRead, ports.KindMemory, in.Namespace)
	if err != nil {
		return nil, err
	}
	recs, truncated, err := m.backend.List(ctx, who, in.Namespace, m.config.Limits.MaxEntriesPerNamespace)
	if err != nil {
		return nil, refusal(err, "Namespace")
	}
	out := memoryListOutput{Memories: make([]memoryEntry, 0, len(recs)), Truncated: truncated}
	var text strings.Builder
	fmt.Fprintf(&text, "%s in %s:\n", catalog.Count(len(recs), "memories"), in.Namespace)
	for _, r := range recs {
		out.Memories = append(out.Memories, memoryEntry{ID: r.ID, Metadata: content.SanitizedObject(r.Metadata), CreatedAt: stamp(r.CreatedAt),
			UpdatedAt: stamp(r.UpdatedAt), Size: r.Size(), Provenance: provenance(r.Provenance)})
		fmt.Fprintf(&text, "- %s (%d bytes, updated %s)\n", r.ID, r.Size(), stamp(r.UpdatedAt))
	}
	if truncated {
		text.WriteString("More memories exist in this namespace than are listed.\n")
	}
	return catalog.Answer(out, text.String()), nil
}
