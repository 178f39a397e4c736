package data

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

type vectorSearchInput struct {
	Collection string        `json:"collection" description:"An allow-listed collection." maxLength:"63"`
	Embedding  []json.Number `json:"embedding" description:"The query vector (finite numbers, the collection's width)." maxItems:"$dimensions"`
	K          int           `json:"k,omitempty" description:"How many results (default 5)." minimum:"1" maximum:"$max_k"`
}

// vectorSearch defines vector_search: nearest rows to a caller-supplied
// embedding. "$dimensions" and "$max_k" are the family's
// ARROWHEAD_PGVECTOR_MAX_* bounds.
var vectorSearch = catalog.Define[vectorSearchInput, hitsOutput](catalog.ToolDef{
	Name:    "vector_search",
	Scope:   "vector:search",
	Ceiling: catalog.Ceiling{Var: "ARROWHEAD_VECTOR_SEARCH_PER_MINUTE", Default: 30},
	Description: "Find the rows of an allow-listed collection nearest to a query embedding, within the caller's tenant; results are capped. " +
		"Example: vector_search(collection=\"documents\", embedding=[0.1, 0.2], k=5)",
	Annotations: catalog.Annotations{Title: "Vector search", ReadOnly: true, Idempotent: true},
})

// search serves vector_search: the vector reader and the table gate.
func (r *server) search(ctx context.Context, call catalog.Call, in vectorSearchInput) (*catalog.Reply[hitsOutput], error) {
	coll := in.Collection
	if err := r.collection(ctx, call.Principal, ports.ActionQuery, coll); err != nil {
		return nil, err
	}
	vec, err := r.vector(in.Embedding)
	if err != nil {
		return nil, err
	}
	hits, err := r.Vectors.Search(ctx, coll, tenant(call.Principal), vec, kOrDefault(in.K))
	if err != nil {
		return nil, vectorRefusal(err)
	}
	return hitsReply(hits, true, "vector"), nil
}

// vector validates a caller embedding: the configured width, finite values
// representable as float32.
func (t *server) vector(nums []json.Number) ([]float32, error) {
	if len(nums) != t.config.EmbeddingDimensions {
		return nil, catalog.Invalid("The embedding must have exactly %d numbers (ARROWHEAD_EMBEDDING_DIMENSIONS).", t.config.EmbeddingDimensions)
	}
	out := make([]float32, len(nums))
	for i, n := range nums {
		f, err := n.Float64()
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > math.MaxFloat32 {
			return nil, catalog.Invalid("Every embedding value must be a finite number.")
		}
		out[i] = float32(f)
	}
	return out, nil
}

type textQueryInput struct {
	Collection string `json:"collection" description:"An allow-listed collection." maxLength:"63"`
	Query      string `json:"query" description:"Natural-language query." maxLength:"$query"`
	K          int    `json:"k,omitempty" description:"How many results (default 5)." minimum:"1" maximum:"$max_k"`
}

// queryTool defines vector_query and hybrid_query, which embed the caller's
// text server-side after authorization (so a denied caller never triggers
// an outbound embedding request). "$max_k" is the family's bound.
func queryTool(name, ceilingVar, desc, title string) catalog.Tool[textQueryInput, hitsOutput] {
	return catalog.Define[textQueryInput, hitsOutput](catalog.ToolDef{
		Name:        name,
		Scope:       "vector:search",
		Ceiling:     catalog.Ceiling{Var: ceilingVar, Default: 30},
		Description: desc,
		Annotations: catalog.Annotations{Title: title, ReadOnly: true, Idempotent: true},
		Bounds:      catalog.Bounds{"query": MaxQueryTextChars},
	})
}

// vectorQuery defines vector_query.
var vectorQuery = queryTool("vector_query", "ARROWHEAD_VECTOR_QUERY_PER_MINUTE",
	"Find the corpus chunks most similar to a natural-language query within the caller's tenant; the query is embedded server-side and each result cites its source and chunk index. "+
		"Example: vector_query(collection=\"doc_chunks\", query=\"how do refunds work?\", k=5)",
	"Vector query")

// hybridQuery defines hybrid_query.
var hybridQuery = queryTool("hybrid_query", "ARROWHEAD_HYBRID_QUERY_PER_MINUTE",
	"Retrieve corpus chunks by vector and keyword relevance fused with reciprocal rank fusion, within the caller's tenant; results cite source and chunk index. "+
		"Example: hybrid_query(collection=\"doc_chunks\", query=\"refund window\", k=5)",
	"Hybrid query")

// vectorQuery and hybridQuery serve vector_query and hybrid_query: the
// vector reader, the embedder and the table gate.
func (q *server) vectorQuery(ctx context.Context, call catalog.Call, in textQueryInput) (*catalog.Reply[hitsOutput], error) {
	return q.retrieve(ctx, call, in, false)
}

func (q *server) hybridQuery(ctx context.Context, call catalog.Call, in textQueryInput) (*catalog.Reply[hitsOutput], error) {
	return q.retrieve(ctx, call, in, true)
}

func (q *server) retrieve(ctx context.Context, call catalog.Call, in textQueryInput, hybrid bool) (*catalog.Reply[hitsOutput], error) {
	coll := in.Collection
	if err := q.collection(ctx, call.Principal, ports.ActionQuery, coll); err != nil {
		return nil, err
	}
	text := strings.TrimSpace(in.Query)
	if text == "" || !utf8.ValidString(text) {
		return nil, catalog.Invalid("The query must be non-empty UTF-8 text.")
	}
	vecs, err := q.Embedder.Embed(ctx, []string{text})
	if err != nil || len(vecs) != 1 {
		return nil, catalog.Failed("The query could not be embedded.").WithCause(err)
	}
	k := kOrDefault(in.K)
	var hits []ports.VectorHit
	mode := "vector"
	if hybrid {
		mode = "hybrid"
		hits, err = q.Vectors.Hybrid(ctx, coll, tenant(call.Principal), text, vecs[0], k, q.config.Hybrid)
	} else {
		hits, err = q.Vectors.Search(ctx, coll, tenant(call.Principal), vecs[0], k)
	}
	if err != nil {
		return nil, vectorRefusal(err)
	}
	return hitsReply(hits, q.Embedder.Semantic(), mode), nil
}
