package memorytools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

type memoryStoreInput struct {
	namespaceArg
	Content  string         `json:"content" description:"The text to remember." minLength:"1"`
	Metadata map[string]any `json:"metadata,omitempty" description:"Optional JSON object stored with the memory."`
	ID       string         `json:"id,omitempty" description:"Id of a memory to update in place." pattern:"^[0-9a-f]{32}$"`
}

type memoryStoreOutput struct {
	ID         string        `json:"id" description:"The memory's id."`
	Namespace  string        `json:"namespace" description:"The namespace."`
	Created    bool          `json:"created" description:"False when identical content was stored already (its id is returned) or an id was updated."`
	Size       int           `json:"size" description:"Bytes counted against the quota." minimum:"0"`
	Provenance provenanceOut `json:"provenance" description:"Who wrote the stored record, and when."`
}

// memoryStore defines memory_store.
var memoryStore = catalog.Define[memoryStoreInput, memoryStoreOutput](catalog.ToolDef{
	Name:        "memory_store",
	Scope:       "memory:write",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_MEMORY_STORE_PER_MINUTE", Default: 30},
	Description: "Store a memory in a namespace you own and return its id. Identical content returns the existing id unchanged; pass id to update an entry in place. Example: memory_store(namespace=\"prefs\", content=\"prefers metric units\")",
	Annotations: catalog.Annotations{Title: "Store memory", Idempotent: true},
})

func (m *memories) store(ctx context.Context, call catalog.Call, in memoryStoreInput) (*catalog.Reply[memoryStoreOutput], error) {
	who, err := m.authorize(ctx, call, ports.ActionWrite, ports.KindMemory, in.Namespace)
	if err != nil {
		return nil, err
	}
	if len(in.Content) > m.config.MaxContentBytes {
		return nil, catalog.Invalid("The content exceeds %d bytes (ARROWHEAD_MEMORY_MAX_CONTENT_BYTES).", m.config.MaxContentBytes)
	}
	var metadata []byte
	if len(in.Metadata) > 0 {
		raw, err := json.Marshal(in.Metadata)
		if err != nil {
			return nil, catalog.Invalid("The metadata must be a JSON object.")
		}
		clean, err := content.SanitizeJSON(raw, content.JSONLimits{MaxBytes: m.config.MaxMetadataBytes + 1})
		if err != nil || len(clean) > m.config.MaxMetadataBytes {
			return nil, catalog.Invalid("The metadata exceeds %d bytes (ARROWHEAD_MEMORY_MAX_METADATA_BYTES) or is not plain JSON.", m.config.MaxMetadataBytes)
		}
		metadata = []byte(clean)
	}
	id, err := newID()
	if err != nil {
		return nil, catalog.Failed("The memory store could not complete the request.").WithCause(err)
	}
	embedding, err := m.embed(ctx, in.Content)
	if err != nil {
		return nil, err
	}
	now := m.clock.Now()
	rec, created, err := m.backend.Store(ctx, who, ports.MemoryWrite{
		Namespace: in.Namespace, ID: in.ID, Content: in.Content, Metadata: metadata, Hash: contentHash(in.Content), NewID: id,
		Embedding: embedding, Provenance: ports.Provenance{Tool: "memory_store", Caller: who, At: now},
	}, m.config.Limits)
	if err != nil {
		return nil, refusal(err, "Memory")
	}
	out := memoryStoreOutput{ID: rec.ID, Namespace: rec.Namespace, Created: created, Size: rec.Size(), Provenance: provenance(rec.Provenance)}
	verb := "Stored"
	if !created {
		verb = "Kept"
	}
	return catalog.Answer(out, fmt.Sprintf("%s memory %s in %s.", verb, rec.ID, rec.Namespace)), nil
}
