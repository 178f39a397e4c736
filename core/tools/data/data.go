// Package data is the data-connector family: vetted read-only SQL
// (sql_query), pgvector or embedded-index retrieval (vector_search,
// vector_query, hybrid_query) and diff-aware ingestion (doc_index). The
// tenant of every vector operation is the authenticated caller, injected
// here, never an argument; every table or collection is authorized per
// resource before any database or embedding request is made.
package data

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Deps are what the data family needs. A nil connector leaves its tools
// registered but refusing with "not configured".
type Deps struct {
	Settings   *settings.Settings
	Authorizer ports.Authorizer
	// Vetter admits only a single read-only SELECT.
	Vetter ports.QueryVetter
	// SQL runs vetted statements (ARROWHEAD_SQL_DSN).
	SQL ports.SQLRunner
	// Vectors searches collections: pgvector over ARROWHEAD_SQL_DSN, or the
	// embedded index when no Postgres is configured.
	Vectors ports.VectorReader
	// Writer maintains collections for doc_index: pgvector over
	// ARROWHEAD_VECTOR_WRITE_DSN, or the embedded index.
	Writer ports.VectorWriter
	// Embedder embeds queries and chunks.
	Embedder ports.Embedder
	// Documents is the corpus doc_index reads.
	Documents ports.DocumentStore
}

// Tools returns the family's tools.
func Tools(d Deps) []catalog.ToolSpec {
	return []catalog.ToolSpec{SQLQuery(d), VectorSearch(d), VectorQuery(d), HybridQuery(d), DocIndex(d)}
}

// MaxQueryTextChars bounds the natural-language query of vector_query and
// hybrid_query.
const MaxQueryTextChars = 2000

// DefaultK is the number of results when k is omitted.
const DefaultK = 5

// authorizeTable runs the per-resource check on a table or collection.
func (d Deps) authorizeTable(ctx context.Context, p ports.Principal, action ports.Action, table string) error {
	if d.Authorizer == nil || !d.Authorizer.Authorize(ctx, p, action, ports.Resource{Kind: ports.KindTable, ID: table}).Allowed {
		return catalog.Denied()
	}
	return nil
}

// collection checks the name against the allow-list; the refusal never
// echoes it.
func (d Deps) collection(name string) (string, error) {
	if !slices.Contains(d.Settings.PgvectorCollections, name) {
		return "", catalog.Invalid("The collection is not one this server allows (ARROWHEAD_PGVECTOR_COLLECTIONS).")
	}
	return name, nil
}

// tenant is the caller's tenant: its verified subject.
func tenant(p ports.Principal) string { return p.Subject }

// vectorRefusal maps vector-store failures to caller-safe refusals.
func vectorRefusal(err error) error {
	var ve *ports.VectorError
	if !errors.As(err, &ve) {
		return err
	}
	switch ve.Kind {
	case ports.VectorUnavailable:
		return catalog.Unavailable("The vector store is unavailable.")
	case ports.VectorTimeout:
		return catalog.Failed("The vector store timed out.")
	case ports.VectorDimension:
		return catalog.Invalid("The embedding width does not match the collection.")
	case ports.VectorLimit:
		return catalog.Invalid("A size limit of the vector store was reached; see the embedded index limits in the README.")
	}
	return catalog.Failed("The vector store failed.")
}

// hitsResult renders retrieved chunks: sanitized content with citations,
// and the text answer framed as untrusted data.
func hitsResult(hits []ports.VectorHit, semantic bool, mode string) catalog.Result {
	results := make([]any, 0, len(hits))
	for _, h := range hits {
		results = append(results, map[string]any{
			"id":          h.ID,
			"source":      content.SanitizeString(h.Source),
			"chunk_index": h.Index,
			"content":     content.SanitizeString(h.Content),
			"score":       h.Score,
		})
	}
	body, _ := json.MarshalIndent(results, "", "  ")
	framed := content.Frame(string(body), content.NewSource("retrieval", mode, "json", body))
	return catalog.Result{
		Structured: map[string]any{
			"results":   results,
			"semantic":  semantic,
			"marker":    framed.Marker,
			"untrusted": true,
		},
		Text: framed.Text,
	}
}

// hitsOutput is the shared output schema of the retrieval tools.
func hitsOutput() *catalog.Schema {
	hit := catalog.Object(map[string]*catalog.Schema{
		"id":          catalog.String("Chunk id.", 0),
		"source":      catalog.String("Source document (citation).", 0),
		"chunk_index": catalog.Integer("Chunk position in the source (citation).", 0, 1<<31),
		"content":     catalog.String("Sanitized chunk text (untrusted data).", 0),
		"score":       catalog.Number("Higher is more relevant."),
	}, "id", "source", "chunk_index", "content", "score")
	return catalog.Object(map[string]*catalog.Schema{
		"results":   catalog.Array("Retrieved chunks, best first.", hit, 0),
		"semantic":  catalog.Boolean("False when the embedder is the deterministic, non-semantic one."),
		"marker":    catalog.String("The untrusted-data marker framing the text answer.", 0),
		"untrusted": catalog.Boolean("Always true."),
	}, "results", "semantic", "marker", "untrusted")
}

// kSchema bounds k by ARROWHEAD_PGVECTOR_MAX_K.
func kSchema(s *settings.Settings) *catalog.Schema {
	return catalog.Integer("How many results (default 5).", 1, float64(s.PgvectorMaxK))
}

func kOrDefault(k int) int {
	if k <= 0 {
		return DefaultK
	}
	return k
}
