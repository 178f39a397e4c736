package vectorindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The embedded vector index is the single-machine default behind
// vector_search, vector_query, hybrid_query and doc_index when no Postgres is
// configured. Postgres with pgvector is the scale-out path; both pass the
// same contract suite (adapters/vectortest).
//
// Why brute force and not HNSW: the index is exact, so a tenant filter never
// starves the result (an approximate graph searched across all tenants and
// then filtered can return fewer than k rows for a small tenant), there is
// no recall knob to tune and no graph to build, persist or repair after a
// crash, and writes cost O(content) instead of O(log n) graph surgery under a
// lock. A scan of one tenant's vectors is a dot product over a flat,
// contiguous []float32 (vectors are unit-normalised at insert, so cosine
// similarity is the dot product), unrolled and split across cores. It is
// bound by memory bandwidth: BenchmarkEmbeddedQuery100k (100,000 chunks of
// 384 dimensions in one tenant, k=10) measured p50 6 ms and p99 8-11 ms on
// two idle vCPUs, against p50 6.5 ms and p99 10-11 ms for pgvector's HNSW
// index on the same kind of data in PGlite, with no build step (that index
// took 4 minutes to build). Past MaxVectorChunks the answer is Postgres,
// whose HNSW index is the sub-linear path.

// Limits of the embedded vector index. Each is enforced: a write that would
// exceed one returns *ports.VectorError{Kind: ports.VectorLimit} and changes
// nothing.
const (
	// MaxVectorCollections bounds how many collections one index serves.
	MaxVectorCollections = 64
	// MaxVectorChunks bounds the chunks of one collection, across all its
	// tenants. At 384 dimensions a chunk's vector costs 1.5 KiB, so a full
	// collection holds about 300 MiB of vectors plus its content and keyword
	// index.
	MaxVectorChunks = 200_000
	// MaxVectorTenants bounds the tenants of one collection.
	MaxVectorTenants = 10_000
	// MaxVectorCollectionBytes bounds the content of one collection.
	MaxVectorCollectionBytes = 1 << 30
	// MaxVectorDimensions bounds the configured embedding width.
	MaxVectorDimensions = 4096
	// The per-argument bounds (tenant, id, source, content, query, k,
	// fusion options) are every vector store's: ports/vectorcheck.go. The
	// embedded keyword index is language-neutral apart from its stopwords
	// (see tokenize), so HybridOptions.Language is validated but does not
	// change tokenisation.
)

// Errors of the embedded index beyond every vector store's (the ports
// ErrVector* values), found under the *ports.VectorError the methods
// return. None of them carries a caller's value.
var (
	ErrVectorClosed  = errors.New("vector index is closed")
	ErrVectorCorrupt = errors.New("vector index data is corrupt")
)

func vectorErr(kind ports.VectorErrorKind, err error) error {
	return &ports.VectorError{Kind: kind, Err: err}
}

// VectorIndexConfig configures an embedded vector index.
type VectorIndexConfig struct {
	// Persist is where the index's collections live durably, shared by
	// every process on the data directory (adapters/sqlite's
	// VectorStore). Nil keeps the index in memory only, which suits tests
	// and nothing else.
	Persist VectorPersistence
	// Collections is the allow-list (ARROWHEAD_PGVECTOR_COLLECTIONS); each
	// name passes the strict identifier guard.
	Collections []string
	// Dimensions is the embedding width (ARROWHEAD_EMBEDDING_DIMENSIONS).
	Dimensions int
	// MaxK bounds k (ARROWHEAD_PGVECTOR_MAX_K); 0 means
	// ports.DefaultVectorMaxK.
	MaxK int
}

// VectorIndexConfigFromSettings maps the settings onto an index
// configuration; the caller sets Persist to the shared store under
// ARROWHEAD_DATA_DIR.
func VectorIndexConfigFromSettings(s settings.Settings) VectorIndexConfig {
	return VectorIndexConfig{
		Collections: slices.Clone(s.VectorCollections()),
		Dimensions:  s.EmbeddingDimensions,
		MaxK:        s.PgvectorMaxK,
	}
}

// VectorIndex is the embedded implementation of ports.VectorReader and
// ports.VectorWriter: per collection and tenant, chunks in memory with a
// flat vector table scanned exactly and a BM25 keyword index, persisted
// through a VectorPersistence that several processes share (see
// vectors_persist.go).
//
// It is safe for concurrent use: reads of a collection share its lock,
// writes hold it exclusively, and a write is on disk (fsynced) before it is
// visible. Tenants never meet: every read is confined to one tenant's table.
type VectorIndex struct {
	dim         int
	maxK        int
	collections map[string]*vcollection
	persist     VectorPersistence

	mu     sync.RWMutex // guards closed
	closed bool
}

var (
	_ ports.VectorReader = (*VectorIndex)(nil)
	_ ports.VectorWriter = (*VectorIndex)(nil)
)

// OpenVectorIndex validates cfg and checks the collections cfg.Persist
// holds against it (a collection indexed at other dimensions is refused
// with VectorDimension). A collection is loaded when it is first used, so
// opening costs nothing per chunk; a damaged one is refused then, with
// ErrVectorCorrupt, rather than half-loaded.
func OpenVectorIndex(ctx context.Context, cfg VectorIndexConfig) (*VectorIndex, error) {
	if cfg.Dimensions < 1 || cfg.Dimensions > MaxVectorDimensions {
		return nil, fmt.Errorf("%w: dimensions must be between 1 and %d", ports.ErrVectorConfig, MaxVectorDimensions)
	}
	maxK, err := ports.CheckVectorMaxK(cfg.MaxK)
	if err != nil {
		return nil, err
	}
	if len(cfg.Collections) > MaxVectorCollections {
		return nil, fmt.Errorf("%w: at most %d collections", ports.ErrVectorConfig, MaxVectorCollections)
	}
	x := &VectorIndex{dim: cfg.Dimensions, maxK: maxK, collections: make(map[string]*vcollection, len(cfg.Collections))}
	for i, name := range cfg.Collections {
		if !ports.ValidVectorIdentifier(name) {
			return nil, fmt.Errorf("%w: collection %d is not a lowercase identifier", ports.ErrVectorConfig, i+1)
		}
		if _, dup := x.collections[name]; dup {
			return nil, fmt.Errorf("%w: collection %q is listed twice", ports.ErrVectorConfig, name)
		}
		x.collections[name] = newCollection(name, cfg.Dimensions)
	}
	if cfg.Persist == nil {
		return x, nil
	}
	x.persist = cfg.Persist
	if err := cfg.Persist.CheckVectors(ctx, cfg.Dimensions, slices.Sorted(maps.Keys(x.collections))); err != nil {
		return nil, storeErr(err)
	}
	return x, nil
}

// Close ends the index: calls after it fail with VectorUnavailable. It
// closes its persistence when that is an io.Closer; the embedded store
// is its owner's to close, after the index.
func (x *VectorIndex) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	x.closed = true
	if c, ok := x.persist.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// collection returns the named collection, or a refusal. The caller holds
// x.mu for reading until it has taken the collection's own lock, so Close
// cannot run in between.
func (x *VectorIndex) collection(name string) (*vcollection, error) {
	if x.closed {
		return nil, vectorErr(ports.VectorUnavailable, ErrVectorClosed)
	}
	c, ok := x.collections[name]
	if !ok {
		return nil, vectorErr(ports.VectorFailed, ports.ErrVectorCollection)
	}
	return c, nil
}

// open returns the named collection for use, or a refusal.
func (x *VectorIndex) open(collection string) (*vcollection, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.collection(collection)
}

// readTenant runs fn with tenant's table of collection under the
// collection's read lock, once the collection holds every write any
// process acknowledged before the call (fresh); fn is not called when
// the tenant has no chunks.
func (x *VectorIndex) readTenant(ctx context.Context, collection, tenant string, fn func(t *vtenant)) error {
	c, err := x.open(collection)
	if err != nil {
		return err
	}
	if err := x.fresh(ctx, c); err != nil {
		return err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if t := c.tenants[tenant]; t != nil {
		fn(t)
	}
	return nil
}

// Hashes returns the content hash of each stored chunk of source, by index.
func (x *VectorIndex) Hashes(ctx context.Context, collection, tenant, source string) (map[int]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxVectorErr(err)
	}
	if err := ports.CheckVectorSource(tenant, source); err != nil {
		return nil, err
	}
	out := make(map[int]string)
	err := x.readTenant(ctx, collection, tenant, func(t *vtenant) {
		for idx, slot := range t.bySource[source] {
			out[idx] = t.chunks[slot].hash
		}
	})
	return out, err
}

// Sources lists tenant's sources starting with prefix (a literal prefix:
// no character is special), in byte order.
func (x *VectorIndex) Sources(ctx context.Context, collection, tenant, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxVectorErr(err)
	}
	if err := ports.CheckVectorPrefix(tenant, prefix); err != nil {
		return nil, err
	}
	out := []string{}
	err := x.readTenant(ctx, collection, tenant, func(t *vtenant) {
		for src := range t.bySource {
			if strings.HasPrefix(src, prefix) {
				out = append(out, src)
			}
		}
	})
	slices.Sort(out)
	return out, err
}

// Upsert inserts or replaces chunks by id, in order, all or nothing. A chunk
// whose id belongs to another tenant, or whose (tenant, source, index) is
// held by a chunk with another id, refuses the whole call.
func (x *VectorIndex) Upsert(ctx context.Context, collection string, chunks []ports.Chunk) error {
	if err := ctx.Err(); err != nil {
		return ctxVectorErr(err)
	}
	if len(chunks) == 0 {
		return nil
	}
	norm := make([]ports.Chunk, len(chunks))
	for i, ch := range chunks {
		n, err := x.checkChunk(ch)
		if err != nil {
			return err
		}
		norm[i] = n
	}
	c, err := x.open(collection)
	if err != nil {
		return err
	}
	return x.write(ctx, c, func() (VectorWrite, error) {
		count, tenants, err := c.plan(norm)
		if err != nil {
			return VectorWrite{}, err
		}
		return VectorWrite{Upsert: norm, Count: count, Tenants: tenants}, nil
	}, func() { c.applyUpsert(norm) })
}

// Truncate removes source's chunks with index >= keep.
func (x *VectorIndex) Truncate(ctx context.Context, collection, tenant, source string, keep int) error {
	if err := ctx.Err(); err != nil {
		return ctxVectorErr(err)
	}
	keep, err := ports.CheckVectorTruncate(tenant, source, keep)
	if err != nil {
		return err
	}
	c, err := x.open(collection)
	if err != nil {
		return err
	}
	return x.write(ctx, c, func() (VectorWrite, error) {
		t := c.tenants[tenant]
		if t == nil {
			return VectorWrite{}, nil
		}
		doomed := 0
		for idx := range t.bySource[source] {
			if idx >= keep {
				doomed++
			}
		}
		if doomed == 0 {
			return VectorWrite{}, nil
		}
		return VectorWrite{
			Truncate: &VectorTruncate{Tenant: tenant, Source: source, Keep: keep},
			Count:    c.chunks - doomed,
			Tenants:  map[string]int{tenant: t.live - doomed},
		}, nil
	}, func() { c.applyTruncate(tenant, source, keep) })
}
