package contexttools

import (
	"context"
	"errors"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

// packVectorK is how many chunks vector retrieval asks the index for
// (capped at ARROWHEAD_PGVECTOR_MAX_K); the budget usually ends the pack
// before they run out.
const packVectorK = 10

// What the manifest says about each retriever.
const (
	retrievalLexical = "lexical"
	retrievalSymbols = "symbols"
	retrievalGraph   = "graph"
	retrievalVector  = "vector"

	statusRan           = "ran"
	statusNotConfigured = "not_configured"
	statusNotSemantic   = "not_semantic"
	statusDenied        = "denied"
	statusBudgetSpent   = "budget_spent"
	statusFailed        = "failed"
)

// vectorRetriever finds the chunks of the caller's own vector index
// nearest a query. vectorsOf picks the implementation, once: vectorIndex
// when an embedder and a vector index are configured, noVectorIndex
// otherwise.
type vectorRetriever interface {
	// nearest returns the hits, or the status saying why there are none
	// (statusRan with no hits is an index holding nothing near).
	nearest(ctx context.Context, who ports.Principal, query string) ([]ports.VectorHit, string, error)
	// describe is the manifest entry before nearest runs.
	describe() retrievalRun
}

// noVectorIndex is vector retrieval when it is not configured.
type noVectorIndex struct{}

func (noVectorIndex) nearest(context.Context, ports.Principal, string) ([]ports.VectorHit, string, error) {
	return nil, statusNotConfigured, nil
}

func (noVectorIndex) describe() retrievalRun {
	return retrievalRun{Method: retrievalVector, Status: statusNotConfigured}
}

// vectorIndex is vector retrieval over the collection doc_index fills: the
// first allow-listed collection (the embedded index's doc_chunks when none
// is named), searched within the caller's tenant (its verified subject,
// as vector_query does) under the same per-resource query grant on the
// collection.
type vectorIndex struct {
	// k is how many chunks to ask for: packVectorK, capped at
	// ARROWHEAD_PGVECTOR_MAX_K.
	k          int
	embedder   ports.Embedder
	vectors    ports.VectorReader
	authorizer ports.Authorizer
	collection string
}

func (v vectorIndex) describe() retrievalRun {
	return retrievalRun{Method: retrievalVector, Collection: v.collection, Semantic: v.embedder.Semantic()}
}

func (v vectorIndex) nearest(ctx context.Context, who ports.Principal, query string) ([]ports.VectorHit, string, error) {
	if who.Subject == "" || !v.authorizer.Authorize(ctx, who, ports.ActionQuery, ports.Resource{Kind: ports.KindTable, ID: v.collection}).Allowed {
		return nil, statusDenied, nil
	}
	vecs, err := v.embedder.Embed(ctx, []string{strings.TrimSpace(query)})
	if err != nil || len(vecs) != 1 {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, statusFailed, nil
	}
	hits, err := v.vectors.Search(ctx, v.collection, who.Key(), vecs[0], v.k)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, "", err
		}
		return nil, statusFailed, nil
	}
	return hits, statusRan, nil
}

// chunkLines finds a retrieved chunk in the current text of its document
// and returns the document lines that hold it. The chunk was cut from
// content.SanitizeDocument's text when doc_index ran, so it is searched
// for in that same text now; ok is false when the document no longer
// holds it (it changed since it was indexed). When the sanitized text has
// as many lines as the source, its lines are the source's and the chunk's
// own lines are returned; otherwise (a JSON document, whose sanitized form
// is re-serialized, or Markdown that lost a multi-line construct) the
// chunk cannot be placed on source lines, and the whole document is.
func chunkLines(sanitized, chunk string, lines int) (start, end int, ok bool) {
	at := strings.Index(sanitized, chunk)
	if chunk == "" || at < 0 {
		return 0, 0, false
	}
	sanitizedLines := strings.Count(sanitized, "\n")
	if !strings.HasSuffix(sanitized, "\n") {
		sanitizedLines++
	}
	if sanitizedLines != lines {
		return 1, lines, true
	}
	start = 1 + strings.Count(sanitized[:at], "\n")
	end = 1 + strings.Count(sanitized[:at+len(chunk)-1], "\n")
	return start, end, true
}

// sanitizedDocument is content.SanitizeDocument under the corpus's JSON
// bounds, as doc_index runs it.
func sanitizedDocument(lim content.JSONLimits, rel string, raw []byte) (string, bool) {
	text, err := content.SanitizeDocument(rel, raw, lim)
	return text, err == nil
}
