package ports

import "context"

// Embedder turns texts into vectors. Implementations bound batch sizes and
// never put an API key in an error. Safe for concurrent use.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Dimensions is the width of every vector returned.
	Dimensions() int
	// Semantic reports whether similarity of vectors reflects meaning (false
	// for the deterministic test embedder).
	Semantic() bool
}

// Chunk is one stored piece of a source document.
type Chunk struct {
	// ID is derived from tenant, source and index (stable across runs).
	ID      string
	Tenant  string
	Source  string
	Index   int
	Content string
	// Hash is the hex SHA-256 of Content, for diff-aware re-indexing.
	Hash      string
	Embedding []float32
}

// VectorHit is one retrieved chunk with its citation.
type VectorHit struct {
	ID      string
	Source  string
	Index   int
	Content string
	// Score is higher-is-better: cosine similarity for vector search, the
	// fused reciprocal-rank score for hybrid search.
	Score float64
}

// HybridOptions tune reciprocal rank fusion.
type HybridOptions struct {
	// RRFK is the k in 1/(k + rank).
	RRFK int
	// CandidateMultiplier sizes each branch's pool as a multiple of k.
	CandidateMultiplier int
	// Language is the full-text configuration (a Postgres regconfig name).
	Language string
}

// VectorReader searches one allow-listed collection within one tenant.
// collection and tenant are trusted: the core checked the collection against
// the allow-list and took the tenant from the authenticated caller.
type VectorReader interface {
	Search(ctx context.Context, collection, tenant string, embedding []float32, k int) ([]VectorHit, error)
	Hybrid(ctx context.Context, collection, tenant, query string, embedding []float32, k int, opt HybridOptions) ([]VectorHit, error)
}

// VectorWriter maintains a collection's chunks for ingestion.
type VectorWriter interface {
	// Hashes returns the stored content hash of each chunk of source, by
	// chunk index.
	Hashes(ctx context.Context, collection, tenant, source string) (map[int]string, error)
	// Upsert inserts or replaces chunks by ID.
	Upsert(ctx context.Context, collection string, chunks []Chunk) error
	// Truncate removes source's chunks with index >= keep (keep 0 removes
	// the whole source).
	Truncate(ctx context.Context, collection, tenant, source string, keep int) error
	// Sources lists the sources stored for tenant under a path prefix.
	Sources(ctx context.Context, collection, tenant, prefix string) ([]string, error)
}

// VectorErrorKind classifies a vector-store failure.
type VectorErrorKind string

// Vector failure kinds.
const (
	VectorUnavailable VectorErrorKind = "unavailable"
	VectorTimeout     VectorErrorKind = "timeout"
	VectorDimension   VectorErrorKind = "dimension" // the embedding width does not match the collection
	VectorLimit       VectorErrorKind = "limit"     // a documented size limit of the store
	VectorFailed      VectorErrorKind = "failed"
)

// VectorError is a caller-safe vector-store failure.
type VectorError struct {
	Kind VectorErrorKind
	Err  error
}

func (e *VectorError) Error() string { return "vector store " + string(e.Kind) }

// Unwrap returns the cause.
func (e *VectorError) Unwrap() error { return e.Err }
