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
	"time"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Ports are what the data family's tools use. The connectors are
// optional: an empty DSN (or no collection) leaves one unset, and the
// family serves the tools that need it as not configured.
type Ports struct {
	Authorizer ports.Authorizer
	// Vetter admits only a single read-only SELECT.
	Vetter ports.QueryVetter
	// Embedder embeds queries and chunks.
	Embedder ports.Embedder
	// Documents is the corpus doc_index reads.
	Documents ports.DocumentStore
	// SQL runs vetted statements (ARROWHEAD_SQL_DSN).
	SQL ports.SQLRunner `port:"optional"`
	// Vectors searches collections: pgvector over ARROWHEAD_SQL_DSN, or the
	// embedded index when no Postgres is configured.
	Vectors ports.VectorReader `port:"optional"`
	// Writer maintains collections for doc_index: pgvector over
	// ARROWHEAD_VECTOR_WRITE_DSN, or the embedded index.
	Writer ports.VectorWriter `port:"optional"`
}

// Config is what the data family reads from the settings.
type Config struct {
	// Collections are the collections a vector tool may name
	// (ARROWHEAD_PGVECTOR_COLLECTIONS, or the embedded index's default).
	Collections []string
	// EmbeddingDimensions is the width of every embedding.
	EmbeddingDimensions int `setting:"ARROWHEAD_EMBEDDING_DIMENSIONS"`
	// SQLQueryMaxLength, MaxDimensions and MaxK are the "$sql_length",
	// "$dimensions" and "$max_k" schema bounds.
	SQLQueryMaxLength int `setting:"ARROWHEAD_SQL_QUERY_MAX_LENGTH"`
	MaxDimensions     int `setting:"ARROWHEAD_PGVECTOR_MAX_DIMENSIONS"`
	MaxK              int `setting:"ARROWHEAD_PGVECTOR_MAX_K"`
	// SQLLimits bound one sql_query.
	SQLLimits ports.SQLLimits
	// Hybrid tunes hybrid_query's fusion.
	Hybrid ports.HybridOptions
	// IndexTimeout, IndexMaxFiles and IndexMaxChunks bound one doc_index
	// run; IndexReuseUnchanged keeps chunks whose hash did not change.
	IndexTimeout        time.Duration `setting:"ARROWHEAD_VECTOR_INDEX_TIMEOUT_SECONDS"`
	IndexMaxFiles       int           `setting:"ARROWHEAD_VECTOR_INDEX_MAX_FILES"`
	IndexMaxChunks      int           `setting:"ARROWHEAD_VECTOR_INDEX_MAX_CHUNKS"`
	IndexReuseUnchanged bool          `setting:"ARROWHEAD_INDEX_REUSE_UNCHANGED"`
	// DocMaxBytes caps a document doc_index reads; DocJSON bounds a JSON
	// document's sanitizing; Chunks is how documents are chunked (its
	// MaxChunks is set per document).
	DocMaxBytes int64 `setting:"ARROWHEAD_DOC_MAX_BYTES"`
	DocJSON     content.JSONLimits
	Chunks      content.ChunkSettings
}

// Family is the data-connector family. A tool whose optional port is unset
// refuses every call, naming what to set.
var Family = core.Family[Config, Ports, *server]{
	ID: catalog.FamilyData,
	Configure: func(s *settings.Settings, c *Config) {
		c.Collections = s.VectorCollections()
		c.SQLLimits = ports.SQLLimits{
			MaxRows:       s.SQLMaxRows,
			MaxColumns:    s.SQLMaxColumns,
			MaxCellBytes:  s.SQLMaxBytes,
			MaxTotalBytes: s.SQLMaxBytes,
			Timeout:       settings.Seconds(s.SQLTimeoutSeconds),
			TempFileBytes: megabytes(s.SQLTempFileLimitMB),
			WorkMemBytes:  megabytes(s.SQLWorkMemMB),
		}
		c.Hybrid = ports.HybridOptions{RRFK: s.HybridRRFK, CandidateMultiplier: s.HybridCandidateMultiplier, Language: s.FTSLanguage}
		c.DocJSON = content.DocumentJSONLimits(s)
		c.Chunks = content.ChunkSettings{
			TextMaxChars: s.VectorIndexChunkMaxChars,
			TextOverlap:  s.VectorIndexChunkOverlap,
			CodeMaxChars: s.CodeChunkMaxChars,
		}
	},
	Bounds: func(c Config) catalog.Bounds {
		return catalog.Bounds{"sql_length": c.SQLQueryMaxLength, "dimensions": c.MaxDimensions, "max_k": c.MaxK}
	},
	Serve: func(c Config, p Ports) *server { return &server{config: c, Ports: p} },
	Tools: []core.FamilyTool[*server]{
		core.Tool(sqlQuery, (*server).query).
			Needs(func(s *server) bool { return s.SQL != nil }, "The SQL connector is not configured (ARROWHEAD_SQL_DSN)."),
		core.Tool(vectorSearch, (*server).search).
			Needs(func(s *server) bool { return s.Vectors != nil }, msgNoVectors),
		core.Tool(vectorQuery, (*server).vectorQuery).
			Needs(func(s *server) bool { return s.Vectors != nil }, msgNoVectors),
		core.Tool(hybridQuery, (*server).hybridQuery).
			Needs(func(s *server) bool { return s.Vectors != nil }, msgNoVectors),
		core.Tool(docIndex, (*server).index).
			Needs(func(s *server) bool { return s.Writer != nil }, msgNoIngestion),
	},
}

// What the vector tools answer where nothing serves them: which settings
// would. The embedded index serves both while no PostgreSQL connector is
// set; once one is, the collections live in PostgreSQL.
const (
	msgNoVectors = "Vector retrieval is not configured: the embedded index serves it while neither ARROWHEAD_SQL_DSN nor " +
		"ARROWHEAD_VECTOR_WRITE_DSN is set; with PostgreSQL, ARROWHEAD_PGVECTOR_COLLECTIONS names the collections."
	msgNoIngestion = "Ingestion is not configured: the embedded index takes it while neither ARROWHEAD_SQL_DSN nor " +
		"ARROWHEAD_VECTOR_WRITE_DSN is set; with PostgreSQL, it needs ARROWHEAD_VECTOR_WRITE_DSN and ARROWHEAD_PGVECTOR_COLLECTIONS."
)

// server is what every data tool shares: the Config, the connectors and
// the per-resource gate on tables and collections.
type server struct {
	config Config
	Ports
}

// MaxQueryTextChars bounds the natural-language query of vector_query and
// hybrid_query.
const MaxQueryTextChars = 2000

// DefaultK is the number of results when k is omitted.
const DefaultK = 5

// authorizeTable runs the per-resource check on a table or collection.
func (t *server) authorizeTable(ctx context.Context, p ports.Principal, action ports.Action, table string) error {
	if !t.Authorizer.Authorize(ctx, p, action, ports.Resource{Kind: ports.KindTable, ID: table}).Allowed {
		return catalog.Denied()
	}
	return nil
}

// collection checks the name against the allow-list (the refusal never
// echoes it), then runs the per-resource check on it.
func (t *server) collection(ctx context.Context, p ports.Principal, action ports.Action, name string) error {
	if !slices.Contains(t.config.Collections, name) {
		return catalog.Invalid("The collection is not one this server allows (ARROWHEAD_PGVECTOR_COLLECTIONS).")
	}
	return t.authorizeTable(ctx, p, action, name)
}

// tenant is the caller's tenant: its verified subject.
func tenant(p ports.Principal) string { return p.Key() }

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

// hit is one retrieved chunk. Its fields are in key order: the text block
// is this list rendered as JSON.
type hit struct {
	ChunkIndex int     `json:"chunk_index" description:"Chunk position in the source (citation)." minimum:"0" maximum:"$count"`
	Content    string  `json:"content" description:"Sanitized chunk text (untrusted data)."`
	ID         string  `json:"id" description:"Chunk id."`
	Score      float64 `json:"score" description:"Higher is more relevant."`
	Source     string  `json:"source" description:"Source document (citation)."`
}

// hitsOutput is the shared output of the retrieval tools.
type hitsOutput struct {
	Results   []hit  `json:"results" description:"Retrieved chunks, best first."`
	Semantic  bool   `json:"semantic" description:"False when the embedder is the deterministic, non-semantic one."`
	Marker    string `json:"marker" description:"The untrusted-data marker framing the text answer."`
	Untrusted bool   `json:"untrusted" description:"Always true."`
}

// hitsReply renders retrieved chunks: sanitized content with citations,
// and the text answer framed as untrusted data.
func hitsReply(hits []ports.VectorHit, semantic bool, mode string) *catalog.Reply[hitsOutput] {
	results := make([]hit, 0, len(hits))
	for _, h := range hits {
		results = append(results, hit{
			ID:         h.ID,
			Source:     content.SanitizeString(h.Source),
			ChunkIndex: h.Index,
			Content:    content.SanitizeString(h.Content),
			Score:      h.Score,
		})
	}
	body, _ := json.MarshalIndent(results, "", "  ")
	framed := content.Frame(string(body), content.NewSource("retrieval", mode, "json", body))
	text := framed.Text
	switch {
	case len(results) == 0:
		// Nearest-neighbour search returns something from any chunk it
		// may see: none means there is none.
		text += "\n" + msgNoChunks + "\n"
	case !semantic:
		text += "\n" + msgNotSemantic + "\n"
	}
	return catalog.Answer(hitsOutput{Results: results, Semantic: semantic, Marker: framed.Marker, Untrusted: true}, text)
}

// Notes after the retrieved chunks: what an empty answer means, and that
// the deterministic embedder's scores are not similarity of meaning.
const (
	msgNoChunks    = "No results: the collection holds no chunk you may read. doc_index adds the corpus's documents to a collection."
	msgNotSemantic = "The embedder is the deterministic one (ARROWHEAD_EMBEDDING_PROVIDER=deterministic), so these scores rank shared words, not meaning."
)

func kOrDefault(k int) int {
	if k <= 0 {
		return DefaultK
	}
	return k
}
