package memorytools

import (
	"context"
	"fmt"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

type memorySearchInput struct {
	namespaceArg
	Query string `json:"query" description:"Words to recall memories by." minLength:"1" maxLength:"1000"`
	K     int    `json:"k,omitempty" description:"How many memories to return (default 5)." minimum:"1" maximum:"$max_k"`
}

type memoryResult struct {
	content.Framed
	ID         string         `json:"id" description:"The memory's id."`
	Score      float64        `json:"score" description:"Relevance, higher is better."`
	Metadata   map[string]any `json:"metadata" description:"The memory's metadata, sanitized."`
	CreatedAt  string         `json:"created_at" description:"When the memory was created (RFC 3339)."`
	UpdatedAt  string         `json:"updated_at" description:"When it was last written (RFC 3339)."`
	Provenance provenanceOut  `json:"provenance" description:"Who wrote it, and when."`
}

type memorySearchOutput struct {
	Results []memoryResult `json:"results" description:"The recalled memories, most relevant first; each content is sanitized and framed as untrusted data."`
	Recall  string         `json:"recall" description:"The search actually performed." enum:"keyword,semantic"`
}

const defaultK = 5

// memorySearch defines memory_search; "$max_k" is the family's ARROWHEAD_MEMORY_MAX_K bound.
var memorySearch = catalog.Define[memorySearchInput, memorySearchOutput](catalog.ToolDef{
	Name:        "memory_search",
	Scope:       "memory:read",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_MEMORY_SEARCH_PER_MINUTE", Default: 60},
	Description: "Recall the memories in a namespace you own most relevant to a query. Recall is semantic with the PostgreSQL backend on pgvector and a real embedding provider, keyword otherwise; the result says which. Example: memory_search(namespace=\"prefs\", query=\"units\", k=5)",
	Annotations: catalog.Annotations{Title: "Search memories", ReadOnly: true, Idempotent: true},
})

func (m *memories) search(ctx context.Context, call catalog.Call, in memorySearchInput) (*catalog.Reply[memorySearchOutput], error) {
	who, err := m.authorize(ctx, call, ports.ActionRead, ports.KindMemory, in.Namespace)
	if err != nil {
		return nil, err
	}
	k := in.K
	if k == 0 {
		k = min(defaultK, m.config.MaxK)
	}
	embedding, err := m.embed(ctx, in.Query)
	if err != nil {
		return nil, err
	}
	hits, recall, err := m.backend.Search(ctx, who, in.Namespace, in.Query, embedding, k)
	if err != nil {
		return nil, refusal(err, "Namespace")
	}
	out := memorySearchOutput{Results: make([]memoryResult, 0, len(hits)), Recall: string(recall)}
	text := fmt.Sprintf("%s (%s recall):\n", catalog.Count(len(hits), "memories"), recall)
	for _, h := range hits {
		r := h.Record
		f := frame("memory", r.Namespace+"/"+r.ID, r.Content)
		out.Results = append(out.Results, memoryResult{Framed: f, ID: r.ID, Score: h.Score, Metadata: content.SanitizedObject(r.Metadata),
			CreatedAt: stamp(r.CreatedAt), UpdatedAt: stamp(r.UpdatedAt), Provenance: provenance(r.Provenance)})
		text += f.Text + "\n"
	}
	return catalog.Answer(out, text), nil
}
