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

// VectorSearch declares vector_search: nearest rows to a caller-supplied
// embedding.
func VectorSearch(d Deps) catalog.ToolSpec {
	s := d.Settings
	return catalog.MustTool(catalog.ToolDef{
		Name:    "vector_search",
		Family:  catalog.FamilyData,
		Scope:   "vector:search",
		Ceiling: catalog.Ceiling{Var: "ARROWHEAD_VECTOR_SEARCH_PER_MINUTE", Default: 30},
		Description: "Find the rows of an allow-listed collection nearest to a query embedding, within the caller's tenant; results are capped. " +
			"Example: vector_search(collection=\"documents\", embedding=[0.1, 0.2], k=5)",
		Input: catalog.Object(map[string]*catalog.Schema{
			"collection": catalog.String("An allow-listed collection.", 63),
			"embedding":  catalog.Array("The query vector (finite numbers, the collection's width).", catalog.Number(""), s.PgvectorMaxDimensions),
			"k":          kSchema(s),
		}, "collection", "embedding"),
		Output:      hitsOutput(),
		Annotations: catalog.Annotations{Title: "Vector search", ReadOnly: true, Idempotent: true},
		Handler: func(ctx context.Context, call catalog.Call) (catalog.Result, error) {
			var args struct {
				Collection string        `json:"collection"`
				Embedding  []json.Number `json:"embedding"`
				K          int           `json:"k"`
			}
			if err := call.Bind(&args); err != nil {
				return catalog.Result{}, err
			}
			coll, err := d.collection(args.Collection)
			if err != nil {
				return catalog.Result{}, err
			}
			if err := d.authorizeTable(ctx, call.Principal, ports.ActionQuery, coll); err != nil {
				return catalog.Result{}, err
			}
			vec, err := d.vector(args.Embedding)
			if err != nil {
				return catalog.Result{}, err
			}
			if d.Vectors == nil {
				return catalog.Result{}, catalog.Unavailable("Vector search is not configured.")
			}
			hits, err := d.Vectors.Search(ctx, coll, tenant(call.Principal), vec, kOrDefault(args.K))
			if err != nil {
				return catalog.Result{}, vectorRefusal(err)
			}
			return hitsResult(hits, true, "vector"), nil
		},
	})
}

// vector validates a caller embedding: the configured width, finite values
// representable as float32.
func (d Deps) vector(nums []json.Number) ([]float32, error) {
	if len(nums) != d.Settings.EmbeddingDimensions {
		return nil, catalog.Invalid("The embedding must have exactly %d numbers (ARROWHEAD_EMBEDDING_DIMENSIONS).", d.Settings.EmbeddingDimensions)
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

// queryTool builds vector_query and hybrid_query, which embed the caller's
// text server-side after authorization (so a denied caller never triggers
// an outbound embedding request).
func queryTool(d Deps, name, ceilingVar, desc, title string, hybrid bool) catalog.ToolSpec {
	s := d.Settings
	return catalog.MustTool(catalog.ToolDef{
		Name:        name,
		Family:      catalog.FamilyData,
		Scope:       "vector:search",
		Ceiling:     catalog.Ceiling{Var: ceilingVar, Default: 30},
		Description: desc,
		Input: catalog.Object(map[string]*catalog.Schema{
			"collection": catalog.String("An allow-listed collection.", 63),
			"query":      catalog.String("Natural-language query.", MaxQueryTextChars),
			"k":          kSchema(s),
		}, "collection", "query"),
		Output:      hitsOutput(),
		Annotations: catalog.Annotations{Title: title, ReadOnly: true, Idempotent: true},
		Handler: func(ctx context.Context, call catalog.Call) (catalog.Result, error) {
			var args struct {
				Collection string `json:"collection"`
				Query      string `json:"query"`
				K          int    `json:"k"`
			}
			if err := call.Bind(&args); err != nil {
				return catalog.Result{}, err
			}
			coll, err := d.collection(args.Collection)
			if err != nil {
				return catalog.Result{}, err
			}
			if err := d.authorizeTable(ctx, call.Principal, ports.ActionQuery, coll); err != nil {
				return catalog.Result{}, err
			}
			text := strings.TrimSpace(args.Query)
			if text == "" || !utf8.ValidString(text) {
				return catalog.Result{}, catalog.Invalid("The query must be non-empty UTF-8 text.")
			}
			if d.Vectors == nil || d.Embedder == nil {
				return catalog.Result{}, catalog.Unavailable("Vector retrieval is not configured.")
			}
			vecs, err := d.Embedder.Embed(ctx, []string{text})
			if err != nil || len(vecs) != 1 {
				return catalog.Result{}, catalog.Failed("The query could not be embedded.").WithCause(err)
			}
			k := kOrDefault(args.K)
			var hits []ports.VectorHit
			mode := "vector"
			if hybrid {
				mode = "hybrid"
				hits, err = d.Vectors.Hybrid(ctx, coll, tenant(call.Principal), text, vecs[0], k, ports.HybridOptions{
					RRFK: s.HybridRRFK, CandidateMultiplier: s.HybridCandidateMultiplier, Language: s.FTSLanguage,
				})
			} else {
				hits, err = d.Vectors.Search(ctx, coll, tenant(call.Principal), vecs[0], k)
			}
			if err != nil {
				return catalog.Result{}, vectorRefusal(err)
			}
			return hitsResult(hits, d.Embedder.Semantic(), mode), nil
		},
	})
}

// VectorQuery declares vector_query.
func VectorQuery(d Deps) catalog.ToolSpec {
	return queryTool(d, "vector_query", "ARROWHEAD_VECTOR_QUERY_PER_MINUTE",
		"Find the corpus chunks most similar to a natural-language query within the caller's tenant; the query is embedded server-side and each result cites its source and chunk index. "+
			"Example: vector_query(collection=\"doc_chunks\", query=\"how do refunds work?\", k=5)",
		"Vector query", false)
}

// HybridQuery declares hybrid_query.
func HybridQuery(d Deps) catalog.ToolSpec {
	return queryTool(d, "hybrid_query", "ARROWHEAD_HYBRID_QUERY_PER_MINUTE",
		"Retrieve corpus chunks by vector and keyword relevance fused with reciprocal rank fusion, within the caller's tenant; results cite source and chunk index. "+
			"Example: hybrid_query(collection=\"doc_chunks\", query=\"refund window\", k=5)",
		"Hybrid query", true)
}
