// Package contexttools is the context family: working sets, named lists of
// pinned documents and repository files that belong to the caller's
// verified identity (workingset_get, workingset_update), kept durably (in
// the embedded store, or in PostgreSQL with ARROWHEAD_STATE_DSN) so they
// survive a restart, and pack_context, which
// assembles a token-budgeted, secret-redacted, framed bundle from a
// working set's pins, from literal retrieval over the corpus and the
// repository and, when an embedder and a vector index are configured,
// from vector retrieval over the caller's own doc_index collection. Every
// pin and every retrieved snippet is authorized as reading it would be, at
// pack time.
package contexttools

import (
	"errors"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/retrieval"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Ports are what the context family uses.
type Ports struct {
	// Sets stores the working sets: the embedded store in a server, or
	// PostgreSQL with ARROWHEAD_STATE_DSN.
	Sets ports.WorkingSets
	// Corpus is the jailed document corpus doc pins refer to.
	Corpus ports.DocumentStore
	// Repo is the jailed source tree repo_file pins refer to; nil when
	// ARROWHEAD_REPO_ROOT names no directory (repo_file pins are then
	// refused and retrieval covers the corpus only).
	Repo ports.RepoStore `port:"optional"`
	// Authorizer decides every pin and every packed snippet.
	Authorizer ports.Authorizer
	// Scanner redacts secrets from every packed snippet.
	Scanner *security.Scanner
	// Tokenizer counts the pack's tokens.
	Tokenizer ports.Tokenizer
	// Embedder and Vectors are vector retrieval: the query is embedded and
	// the caller's chunks nearest it in the first allow-listed collection
	// are packed after the literal hits. Either nil (or no collection)
	// leaves vector retrieval off, which the result reports.
	Embedder ports.Embedder     `port:"optional"`
	Vectors  ports.VectorReader `port:"optional"`
}

// Config is what the context family reads from the settings.
type Config struct {
	// QueryMaxChars is ARROWHEAD_SEARCH_QUERY_MAX_LENGTH, pack_context's
	// "$query" bound.
	QueryMaxChars int `setting:"ARROWHEAD_SEARCH_QUERY_MAX_LENGTH"`
	// MaxItems is ARROWHEAD_WORKINGSET_MAX_ITEMS, workingset_update's
	// "$items" bound.
	MaxItems int `setting:"ARROWHEAD_WORKINGSET_MAX_ITEMS"`
	// PackMaxTokens is ARROWHEAD_PACK_MAX_TOKENS: a pack's default and
	// largest budget.
	PackMaxTokens int `setting:"ARROWHEAD_PACK_MAX_TOKENS"`
	// DocMaxFiles and RepoMaxFiles cap the index's listing of the corpus
	// (ARROWHEAD_SEARCH_MAX_FILES) and of the repository
	// (ARROWHEAD_REPO_SEARCH_MAX_FILES).
	DocMaxFiles  int `setting:"ARROWHEAD_SEARCH_MAX_FILES"`
	RepoMaxFiles int `setting:"ARROWHEAD_REPO_SEARCH_MAX_FILES"`
	// DocMaxBytes and RepoMaxBytes cap one read of a document
	// (ARROWHEAD_DOC_MAX_BYTES) or of a repository file
	// (ARROWHEAD_REPO_MAX_FILE_BYTES).
	DocMaxBytes  int64 `setting:"ARROWHEAD_DOC_MAX_BYTES"`
	RepoMaxBytes int64 `setting:"ARROWHEAD_REPO_MAX_FILE_BYTES"`
	// DocumentJSON are the JSON bounds a document is sanitized under, as
	// doc_index sanitizes it.
	DocumentJSON content.JSONLimits
	// RedactReads is ARROWHEAD_REDACT_READS.
	RedactReads bool `setting:"ARROWHEAD_REDACT_READS"`
	// VectorMaxK is ARROWHEAD_PGVECTOR_MAX_K.
	VectorMaxK int `setting:"ARROWHEAD_PGVECTOR_MAX_K"`
	// Collection is the collection vector retrieval searches: the first
	// allow-listed one (the embedded index's doc_chunks when none is
	// named); empty when there is none.
	Collection string
}

// Family is the context family.
var Family = core.Family[Config, Ports, *server]{
	ID: catalog.FamilyContext,
	Configure: func(s *settings.Settings, c *Config) {
		c.DocumentJSON = content.DocumentJSONLimits(s)
		if collections := s.VectorCollections(); len(collections) > 0 {
			c.Collection = collections[0]
		}
	},
	Bounds: func(c Config) catalog.Bounds { return catalog.Bounds{"query": c.QueryMaxChars, "items": c.MaxItems} },
	Serve:  newServer,
	Tools: []core.FamilyTool[*server]{
		core.Tool(packContext, (*server).pack),
		core.Tool(workingsetGet, (*server).get),
		core.Tool(workingsetUpdate, (*server).update),
	},
}

// server is what the three tools share: the working sets, the resolver
// every pin and snippet passes, and pack_context's scanner, tokenizer,
// vector retrieval and index cache.
type server struct {
	config    Config
	sets      ports.WorkingSets
	resolver  *resolver
	scanner   *security.Scanner
	tokenizer ports.Tokenizer
	vectors   vectorRetriever
	index     *retrieval.Cache
}

func newServer(c Config, p Ports) *server {
	return &server{
		config:    c,
		sets:      p.Sets,
		resolver:  &resolver{corpus: p.Corpus, repo: p.Repo, authorizer: p.Authorizer, docMaxBytes: c.DocMaxBytes, repoMaxBytes: c.RepoMaxBytes},
		scanner:   p.Scanner,
		tokenizer: p.Tokenizer,
		vectors:   vectorsOf(c, p),
		index:     retrieval.NewCache(),
	}
}

// vectorsOf is the one place the family decides whether pack_context
// runs vector retrieval: with an embedder, a vector index and a
// collection.
func vectorsOf(c Config, p Ports) vectorRetriever {
	if p.Embedder == nil || p.Vectors == nil || c.Collection == "" {
		return noVectorIndex{}
	}
	return vectorIndex{k: min(packVectorK, max(c.VectorMaxK, 1)), embedder: p.Embedder, vectors: p.Vectors, authorizer: p.Authorizer,
		collection: c.Collection}
}

// maxNoteBytes bounds one pin's note.
const maxNoteBytes = 500

// setRefusal maps store errors to refusals that name nothing.
func setRefusal(err error) error {
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return catalog.NotFound("Working set")
	case errors.Is(err, ports.ErrSetFull):
		return catalog.Invalid("The working set would exceed its item limit (ARROWHEAD_WORKINGSET_MAX_ITEMS).")
	case errors.Is(err, ports.ErrTooManySets):
		return catalog.Invalid("You hold the maximum number of working sets (ARROWHEAD_WORKINGSET_MAX_SETS); clear one first.")
	case errors.Is(err, ports.ErrSetsExhausted):
		return catalog.Refuse(catalog.KindValidation, "The server holds the maximum number of working sets; try again later.")
	}
	if r, ok := catalog.StoreRefusal(err, "The working set store",
		"Read the set with workingset_get before repeating the update."); ok {
		return r
	}
	if _, ok := catalog.AsToolError(err); ok {
		return err
	}
	return catalog.Failed("The working set store could not complete the request.").WithCause(err)
}
