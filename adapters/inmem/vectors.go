package inmem

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
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
	// MaxVectorContentBytes bounds one chunk's content (the default chunker
	// cuts at 1,500 characters, at most 6,000 bytes).
	MaxVectorContentBytes = 64 << 10
	// MaxVectorCollectionBytes bounds the content of one collection.
	MaxVectorCollectionBytes = 1 << 30
	// MaxVectorDimensions bounds the configured embedding width.
	MaxVectorDimensions = 4096
	// MaxVectorTenantBytes bounds a tenant, MaxVectorKeyBytes a chunk id and
	// a content hash, MaxVectorSourceBytes a source path: the same bounds as
	// the Postgres store, whose position index must fit a btree row.
	MaxVectorTenantBytes = 512
	MaxVectorKeyBytes    = 1024
	MaxVectorSourceBytes = 2048
	// MaxVectorQueryBytes bounds a hybrid query's text.
	MaxVectorQueryBytes = 16 << 10

	// DefaultVectorMaxK is the largest k when the configuration names none
	// (ARROWHEAD_PGVECTOR_MAX_K's default).
	DefaultVectorMaxK = 50
	// MaxVectorK is the largest configurable k.
	MaxVectorK = 10_000
	// MaxVectorCandidateMultiplier bounds HybridOptions.CandidateMultiplier.
	MaxVectorCandidateMultiplier = 100
	// MaxVectorRRFK bounds HybridOptions.RRFK.
	MaxVectorRRFK = 1_000_000
	// DefaultVectorLanguage is the full-text configuration assumed when
	// HybridOptions.Language is empty. The embedded keyword index is
	// language-neutral apart from its stopwords (see tokenize), so the
	// language is validated but does not change tokenisation.
	DefaultVectorLanguage = "english"

	// Okapi BM25 parameters (the usual defaults).
	bm25K1 = 1.2
	bm25B  = 0.75

	// maxTokenBytes drops longer "words" (base64 blobs, minified code) from
	// the keyword index; they are never useful query terms.
	maxTokenBytes = 128

	// scanFloatsPerShard is the least work (in multiply-adds) given to one
	// goroutine of a parallel vector scan; below it a goroutine costs more
	// than it saves.
	scanFloatsPerShard = 1 << 18

	// Rebuild the keyword postings once stale entries (of replaced or
	// removed chunks) outnumber live ones and there are at least this many.
	minStalePostings = 1 << 16
)

// Errors of the embedded index, found under the *ports.VectorError the
// methods return. None of them carries a caller's value.
var (
	ErrVectorCollection = errors.New("collection is not served by the vector index")
	ErrVectorClosed     = errors.New("vector index is closed")
	ErrVectorArgument   = errors.New("invalid vector store argument")
	ErrVectorNonFinite  = errors.New("embedding has a value that is not a finite number")
	ErrVectorZeroNorm   = errors.New("embedding has zero length")
	ErrVectorIDConflict = errors.New("chunk id or position is held by another chunk")
	ErrVectorK          = errors.New("k is outside the allowed range")
	ErrVectorTooLarge   = errors.New("a vector index size limit was reached")
	ErrVectorConfig     = errors.New("invalid vector index configuration")
	ErrVectorCorrupt    = errors.New("vector index data is corrupt")
)

// identifierPattern is the strict guard every collection name passes: it
// becomes a bucket name here and a table name in Postgres.
var identifierPattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func vectorErr(kind ports.VectorErrorKind, err error) error {
	return &ports.VectorError{Kind: kind, Err: err}
}

// VectorIndexConfig configures an embedded vector index.
type VectorIndexConfig struct {
	// Store is the index's namespace of the embedded store (one bucket per
	// collection). Nil keeps the index in memory only, which suits tests
	// and nothing else.
	Store *bolt.Namespace
	// Collections is the allow-list (ARROWHEAD_PGVECTOR_COLLECTIONS); each
	// name passes the strict identifier guard.
	Collections []string
	// Dimensions is the embedding width (ARROWHEAD_EMBEDDING_DIMENSIONS).
	Dimensions int
	// MaxK bounds k (ARROWHEAD_PGVECTOR_MAX_K); 0 means DefaultVectorMaxK.
	MaxK int
}

// VectorNamespace is the index's namespace in the embedded store.
const VectorNamespace = "vectors"

// VectorIndexConfigFromSettings maps the settings onto an index
// configuration; the caller sets Store to the VectorNamespace of the
// embedded store under ARROWHEAD_DATA_DIR.
func VectorIndexConfigFromSettings(s settings.Settings) VectorIndexConfig {
	return VectorIndexConfig{
		Collections: slices.Clone(s.VectorCollections()),
		Dimensions:  s.EmbeddingDimensions,
		MaxK:        s.PgvectorMaxK,
	}
}

// VectorIndex is the embedded implementation of ports.VectorReader and
// ports.VectorWriter: per collection and tenant, chunks in memory with a
// flat vector table scanned exactly and a BM25 keyword index, persisted in
// the embedded store (see vectors_store.go).
//
// It is safe for concurrent use: reads of a collection share its lock,
// writes hold it exclusively, and a write is on disk (fsynced) before it is
// visible. Tenants never meet: every read is confined to one tenant's table.
type VectorIndex struct {
	dim         int
	maxK        int
	collections map[string]*vcollection

	mu     sync.RWMutex // guards closed
	closed bool
}

var (
	_ ports.VectorReader = (*VectorIndex)(nil)
	_ ports.VectorWriter = (*VectorIndex)(nil)
)

// OpenVectorIndex validates cfg, then loads every allow-listed collection
// from cfg.Store (creating the buckets it lacks). A damaged collection is
// refused with ErrVectorCorrupt rather than half-loaded.
func OpenVectorIndex(ctx context.Context, cfg VectorIndexConfig) (*VectorIndex, error) {
	if cfg.Dimensions < 1 || cfg.Dimensions > MaxVectorDimensions {
		return nil, fmt.Errorf("%w: dimensions must be between 1 and %d", ErrVectorConfig, MaxVectorDimensions)
	}
	maxK := cfg.MaxK
	if maxK == 0 {
		maxK = DefaultVectorMaxK
	}
	if maxK < 1 || maxK > MaxVectorK {
		return nil, fmt.Errorf("%w: max k must be between 1 and %d", ErrVectorConfig, MaxVectorK)
	}
	if len(cfg.Collections) > MaxVectorCollections {
		return nil, fmt.Errorf("%w: at most %d collections", ErrVectorConfig, MaxVectorCollections)
	}
	x := &VectorIndex{dim: cfg.Dimensions, maxK: maxK, collections: make(map[string]*vcollection, len(cfg.Collections))}
	for i, name := range cfg.Collections {
		if !identifierPattern.MatchString(name) {
			return nil, fmt.Errorf("%w: collection %d is not a lowercase identifier", ErrVectorConfig, i+1)
		}
		if _, dup := x.collections[name]; dup {
			return nil, fmt.Errorf("%w: collection %q is listed twice", ErrVectorConfig, name)
		}
		x.collections[name] = newCollection(name, cfg.Dimensions)
	}
	if cfg.Store == nil {
		return x, nil
	}
	for _, name := range slices.Sorted(maps.Keys(x.collections)) {
		c := x.collections[name]
		c.store = &vstore{ns: cfg.Store, name: []byte(name)}
		if err := c.store.load(ctx, c); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// Close ends the index: calls after it fail with VectorUnavailable. The
// embedded store is its owner's to close, after the index.
func (x *VectorIndex) Close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
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
		return nil, vectorErr(ports.VectorFailed, ErrVectorCollection)
	}
	return c, nil
}

// Search returns the k chunks of tenant nearest to embedding by cosine
// similarity, best first (ties by id).
func (x *VectorIndex) Search(ctx context.Context, collection, tenant string, embedding []float32, k int) ([]ports.VectorHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxVectorErr(err)
	}
	q, err := x.checkQuery(tenant, embedding, k)
	if err != nil {
		return nil, err
	}
	hits := []ports.VectorHit{}
	err = x.readTenant(collection, tenant, func(t *vtenant) {
		top := t.nearest(q, k)
		hits = make([]ports.VectorHit, len(top))
		for i, s := range top {
			hits[i] = t.hit(s.slot, float64(s.score))
		}
	})
	return hits, err
}

// Hybrid fuses the vector ranking and the BM25 keyword ranking of tenant's
// chunks by reciprocal rank fusion: each branch contributes its top
// k*CandidateMultiplier, a chunk scores the sum of 1/(RRFK + rank) over the
// branches that ranked it (rank from 1), and the best k are returned (ties
// by id). This is the formula the Postgres adapter computes in SQL.
//
// The keyword branch matches chunks holding every query term, as
// websearch_to_tsquery does for plain words, without stemming beyond plural
// folding and without phrase or negation operators.
func (x *VectorIndex) Hybrid(ctx context.Context, collection, tenant, query string, embedding []float32, k int, opt ports.HybridOptions) ([]ports.VectorHit, error) {
	if err := ctx.Err(); err != nil {
		return nil, ctxVectorErr(err)
	}
	q, err := x.checkQuery(tenant, embedding, k)
	if err != nil {
		return nil, err
	}
	if err := checkHybrid(query, opt); err != nil {
		return nil, err
	}
	pool := k * opt.CandidateMultiplier
	hits := []ports.VectorHit{}
	err = x.readTenant(collection, tenant, func(t *vtenant) { hits = t.fuse(q, query, k, pool, opt.RRFK) })
	return hits, err
}

// fuse ranks t's chunks by reciprocal rank fusion of the vector and keyword
// branches, each pool deep, and returns the best k.
func (t *vtenant) fuse(q []float32, query string, k, pool, rrfK int) []ports.VectorHit {
	vec := t.nearest(q, pool)
	kw := t.keyword(query, pool)
	fused := make(map[uint32]float64, len(vec)+len(kw))
	for i, s := range vec {
		fused[s.slot] = 1 / float64(rrfK+i+1)
	}
	for i, s := range kw {
		fused[s.slot] += 1 / float64(rrfK+i+1)
	}
	ranked := t.best(fused, k)
	hits := make([]ports.VectorHit, len(ranked))
	for i, s := range ranked {
		hits[i] = t.hit(s.slot, s.score)
	}
	return hits
}

// readTenant runs fn with tenant's table of collection under the
// collection's read lock; fn is not called when the tenant has no chunks.
func (x *VectorIndex) readTenant(collection, tenant string, fn func(t *vtenant)) error {
	x.mu.RLock()
	c, err := x.collection(collection)
	if err != nil {
		x.mu.RUnlock()
		return err
	}
	c.mu.RLock()
	x.mu.RUnlock()
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
	if err := checkKey(tenant, MaxVectorTenantBytes); err != nil {
		return nil, err
	}
	if err := checkKey(source, MaxVectorSourceBytes); err != nil {
		return nil, err
	}
	out := make(map[int]string)
	err := x.readTenant(collection, tenant, func(t *vtenant) {
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
	if err := checkKey(tenant, MaxVectorTenantBytes); err != nil {
		return nil, err
	}
	if len(prefix) > MaxVectorSourceBytes || !validText(prefix) {
		return nil, vectorErr(ports.VectorFailed, ErrVectorArgument)
	}
	out := []string{}
	err := x.readTenant(collection, tenant, func(t *vtenant) {
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
	x.mu.RLock()
	c, err := x.collection(collection)
	if err != nil {
		x.mu.RUnlock()
		return err
	}
	c.mu.Lock()
	x.mu.RUnlock()
	defer c.mu.Unlock()
	count, err := c.plan(norm)
	if err != nil {
		return err
	}
	if c.store != nil {
		if err := c.store.upsert(ctx, c, norm, count); err != nil {
			return err
		}
	}
	c.applyUpsert(norm)
	return nil
}

// Truncate removes source's chunks with index >= keep.
func (x *VectorIndex) Truncate(ctx context.Context, collection, tenant, source string, keep int) error {
	if err := ctx.Err(); err != nil {
		return ctxVectorErr(err)
	}
	if err := checkKey(tenant, MaxVectorTenantBytes); err != nil {
		return err
	}
	if err := checkKey(source, MaxVectorSourceBytes); err != nil {
		return err
	}
	if keep < 0 {
		return vectorErr(ports.VectorFailed, ErrVectorArgument)
	}
	keep = min(keep, math.MaxInt32)
	x.mu.RLock()
	c, err := x.collection(collection)
	if err != nil {
		x.mu.RUnlock()
		return err
	}
	c.mu.Lock()
	x.mu.RUnlock()
	defer c.mu.Unlock()
	t := c.tenants[tenant]
	if t == nil {
		return nil
	}
	var doomed []int
	for idx := range t.bySource[source] {
		if idx >= keep {
			doomed = append(doomed, idx)
		}
	}
	if len(doomed) == 0 {
		return nil
	}
	if c.store != nil {
		if err := c.store.truncate(ctx, c, tenant, source, doomed, c.chunks-len(doomed)); err != nil {
			return err
		}
	}
	c.applyTruncate(tenant, source, keep)
	return nil
}

// ---- validation ----

func (x *VectorIndex) checkQuery(tenant string, embedding []float32, k int) ([]float32, error) {
	if err := checkKey(tenant, MaxVectorTenantBytes); err != nil {
		return nil, err
	}
	if k < 1 || k > x.maxK {
		return nil, vectorErr(ports.VectorLimit, ErrVectorK)
	}
	return unit(embedding, x.dim)
}

func checkHybrid(query string, opt ports.HybridOptions) error {
	if len(query) > MaxVectorQueryBytes || !validText(query) {
		return vectorErr(ports.VectorFailed, ErrVectorArgument)
	}
	if opt.RRFK < 0 || opt.RRFK > MaxVectorRRFK ||
		opt.CandidateMultiplier < 1 || opt.CandidateMultiplier > MaxVectorCandidateMultiplier {
		return vectorErr(ports.VectorLimit, ErrVectorArgument)
	}
	if opt.Language != "" && !identifierPattern.MatchString(opt.Language) {
		return vectorErr(ports.VectorFailed, ErrVectorArgument)
	}
	return nil
}

// checkChunk validates one chunk and returns it with a unit-length copy of
// its embedding.
func (x *VectorIndex) checkChunk(ch ports.Chunk) (ports.Chunk, error) {
	if err := checkKey(ch.Tenant, MaxVectorTenantBytes); err != nil {
		return ch, err
	}
	if err := checkKey(ch.ID, MaxVectorKeyBytes); err != nil {
		return ch, err
	}
	if err := checkKey(ch.Source, MaxVectorSourceBytes); err != nil {
		return ch, err
	}
	if ch.Index < 0 || ch.Index > math.MaxInt32 {
		return ch, vectorErr(ports.VectorFailed, ErrVectorArgument)
	}
	if len(ch.Hash) > MaxVectorKeyBytes || !validText(ch.Hash) || !validText(ch.Content) {
		return ch, vectorErr(ports.VectorFailed, ErrVectorArgument)
	}
	if len(ch.Content) > MaxVectorContentBytes {
		return ch, vectorErr(ports.VectorLimit, ErrVectorTooLarge)
	}
	u, err := unit(ch.Embedding, x.dim)
	if err != nil {
		return ch, err
	}
	ch.Embedding = u
	return ch, nil
}

// checkKey accepts a non-empty text of at most max bytes.
func checkKey(s string, max int) error {
	if s == "" || len(s) > max || !validText(s) {
		return vectorErr(ports.VectorFailed, ErrVectorArgument)
	}
	return nil
}

// validText is what a Postgres text column can store: valid UTF-8 without
// NUL. The embedded index refuses the rest too, so both stores agree.
func validText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// unit returns v scaled to unit length, refusing a wrong width, a
// non-finite value and the zero vector (whose direction is undefined).
func unit(v []float32, dim int) ([]float32, error) {
	if len(v) != dim {
		return nil, vectorErr(ports.VectorDimension, errors.New("embedding width does not match the collection"))
	}
	var sum float64
	for _, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, vectorErr(ports.VectorFailed, ErrVectorNonFinite)
		}
		sum += float64(f) * float64(f)
	}
	if sum == 0 {
		return nil, vectorErr(ports.VectorFailed, ErrVectorZeroNorm)
	}
	norm := math.Sqrt(sum)
	out := make([]float32, dim)
	for i, f := range v {
		out[i] = float32(float64(f) / norm)
	}
	return out, nil
}

func ctxVectorErr(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return vectorErr(ports.VectorTimeout, err)
	}
	return vectorErr(ports.VectorFailed, err)
}

// ---- collections ----

// vcollection is one collection: its tenants and the bookkeeping its limits
// need. mu guards everything; store is its persistence (nil in memory).
type vcollection struct {
	name string
	dim  int

	mu           sync.RWMutex
	tenants      map[string]*vtenant
	owner        map[string]*vtenant // chunk id -> its tenant, across tenants
	chunks       int
	contentBytes int64
	store        *vstore
}

func newCollection(name string, dim int) *vcollection {
	return &vcollection{name: name, dim: dim, tenants: map[string]*vtenant{}, owner: map[string]*vtenant{}}
}

type position struct {
	tenant, source string
	index          int
}

// plan checks an upsert against the limits and the uniqueness of ids and
// positions, replaying it in order over the current state without changing
// anything, and returns the collection's chunk count after it.
func (c *vcollection) plan(chunks []ports.Chunk) (int, error) {
	idTenant := map[string]string{} // id -> tenant, as of the planned step
	idPos := map[string]position{}  // id -> position, as of the planned step
	posID := map[position]string{}  // position -> id ("" = freed)
	idBytes := map[string]int{}     // id -> content bytes, as of the planned step
	newTenants := map[string]bool{}
	chunks0, bytes0 := c.chunks, c.contentBytes
	for _, ch := range chunks {
		pos := position{ch.Tenant, ch.Source, ch.Index}
		tenant, existed := idTenant[ch.ID]
		var oldPos position
		var oldBytes int
		if existed {
			oldPos, oldBytes = idPos[ch.ID], idBytes[ch.ID]
		} else if t := c.owner[ch.ID]; t != nil {
			existed = true
			slot := t.byID[ch.ID]
			tenant = t.name
			oldPos = position{t.name, t.chunks[slot].source, t.chunks[slot].index}
			oldBytes = len(t.chunks[slot].content)
		}
		if existed && tenant != ch.Tenant {
			return 0, vectorErr(ports.VectorFailed, ErrVectorIDConflict)
		}
		holder, planned := posID[pos]
		if !planned {
			if t := c.tenants[pos.tenant]; t != nil {
				if slot, ok := t.bySource[pos.source][pos.index]; ok {
					holder = t.chunks[slot].id
				}
			}
		}
		if holder != "" && holder != ch.ID {
			return 0, vectorErr(ports.VectorFailed, ErrVectorIDConflict)
		}
		if existed && oldPos != pos {
			posID[oldPos] = ""
		}
		posID[pos] = ch.ID
		idPos[ch.ID] = pos
		idTenant[ch.ID] = ch.Tenant
		idBytes[ch.ID] = len(ch.Content)
		if !existed {
			chunks0++
		}
		bytes0 += int64(len(ch.Content) - oldBytes)
		if c.tenants[ch.Tenant] == nil {
			newTenants[ch.Tenant] = true
		}
	}
	if chunks0 > MaxVectorChunks || bytes0 > MaxVectorCollectionBytes || len(c.tenants)+len(newTenants) > MaxVectorTenants {
		return 0, vectorErr(ports.VectorLimit, ErrVectorTooLarge)
	}
	return chunks0, nil
}

// applyUpsert applies a planned (or replayed) upsert. Embeddings are unit
// length already.
func (c *vcollection) applyUpsert(chunks []ports.Chunk) {
	for _, ch := range chunks {
		if t := c.owner[ch.ID]; t != nil {
			slot := t.byID[ch.ID]
			c.contentBytes -= int64(len(t.chunks[slot].content))
			c.chunks--
			t.remove(slot)
			delete(c.owner, ch.ID)
			if t.live == 0 && t.name != ch.Tenant {
				// Only a replayed log from a damaged history moves an id
				// between tenants; the plan refuses it.
				delete(c.tenants, t.name)
			}
		}
		t := c.tenants[ch.Tenant]
		if t == nil {
			t = newTenant(ch.Tenant, c.dim)
			c.tenants[ch.Tenant] = t
		}
		if slot, ok := t.bySource[ch.Source][ch.Index]; ok {
			// Only a replayed log from a damaged history gets here: the
			// plan refuses a second holder of a position.
			id := t.chunks[slot].id
			c.contentBytes -= int64(len(t.chunks[slot].content))
			c.chunks--
			t.remove(slot)
			delete(c.owner, id)
		}
		t.insert(ch)
		c.owner[ch.ID] = t
		c.chunks++
		c.contentBytes += int64(len(ch.Content))
	}
}

func (c *vcollection) applyTruncate(tenant, source string, keep int) {
	t := c.tenants[tenant]
	if t == nil {
		return
	}
	for idx, slot := range t.bySource[source] {
		if idx < keep {
			continue
		}
		id := t.chunks[slot].id
		c.contentBytes -= int64(len(t.chunks[slot].content))
		c.chunks--
		t.remove(slot)
		delete(c.owner, id)
	}
	if t.live == 0 {
		delete(c.tenants, tenant)
	}
}

// ---- tenants ----

// vtenant is one tenant's chunks. Chunks live in slots: the vector of slot
// s is vecs[s*dim:(s+1)*dim], contiguous so a scan streams through memory.
// A removed slot is reused by the next insert; its generation changes so
// keyword postings that still name it are recognised as stale.
type vtenant struct {
	name string
	dim  int

	vecs   []float32
	chunks []vchunk
	free   []uint32
	live   int

	byID     map[string]uint32
	bySource map[string]map[int]uint32

	// The keyword index: term -> postings, and per-term document frequency
	// over live chunks. stale counts postings of removed chunks.
	terms    map[string]uint32
	postings [][]vposting
	df       []int32
	stale    int
	nPosting int
	totalLen int64
}

type vchunk struct {
	id, source, content, hash string
	index                     int
	alive                     bool
	gen                       uint32
	length                    int32 // tokens, for BM25 length normalisation
}

type vposting struct {
	slot, gen uint32
	tf        uint32
}

func newTenant(name string, dim int) *vtenant {
	return &vtenant{
		name: name, dim: dim,
		byID: map[string]uint32{}, bySource: map[string]map[int]uint32{}, terms: map[string]uint32{},
	}
}

func (t *vtenant) hit(slot uint32, score float64) ports.VectorHit {
	ch := &t.chunks[slot]
	return ports.VectorHit{ID: ch.id, Source: ch.source, Index: ch.index, Content: ch.content, Score: score}
}

func (t *vtenant) insert(ch ports.Chunk) {
	var slot uint32
	if n := len(t.free); n > 0 {
		slot = t.free[n-1]
		t.free = t.free[:n-1]
		copy(t.vecs[int(slot)*t.dim:], ch.Embedding)
	} else {
		slot = uint32(len(t.chunks))
		t.chunks = append(t.chunks, vchunk{})
		t.vecs = append(t.vecs, ch.Embedding...)
	}
	c := &t.chunks[slot]
	c.id, c.source, c.content, c.hash, c.index, c.alive = ch.ID, ch.Source, ch.Content, ch.Hash, ch.Index, true
	t.live++
	t.byID[ch.ID] = slot
	m := t.bySource[ch.Source]
	if m == nil {
		m = map[int]uint32{}
		t.bySource[ch.Source] = m
	}
	m[ch.Index] = slot

	counts, length := tokenize(ch.Content)
	c.length = int32(length)
	t.totalLen += int64(length)
	for term, tf := range counts {
		id, ok := t.terms[term]
		if !ok {
			id = uint32(len(t.postings))
			t.terms[term] = id
			t.postings = append(t.postings, nil)
			t.df = append(t.df, 0)
		}
		t.postings[id] = append(t.postings[id], vposting{slot: slot, gen: c.gen, tf: tf})
		t.df[id]++
		t.nPosting++
	}
}

func (t *vtenant) remove(slot uint32) {
	c := &t.chunks[slot]
	delete(t.byID, c.id)
	if m := t.bySource[c.source]; m != nil {
		delete(m, c.index)
		if len(m) == 0 {
			delete(t.bySource, c.source)
		}
	}
	counts, _ := tokenize(c.content)
	for term := range counts {
		t.df[t.terms[term]]--
		t.stale++
	}
	t.totalLen -= int64(c.length)
	*c = vchunk{gen: c.gen + 1}
	t.free = append(t.free, slot)
	t.live--
	if t.stale >= minStalePostings && t.stale*2 > t.nPosting {
		t.rebuildPostings()
	}
}

// rebuildPostings drops stale postings and terms no live chunk holds.
func (t *vtenant) rebuildPostings() {
	t.terms = map[string]uint32{}
	t.postings, t.df = nil, nil
	t.stale, t.nPosting, t.totalLen = 0, 0, 0
	for slot := range t.chunks {
		c := &t.chunks[slot]
		if !c.alive {
			continue
		}
		counts, length := tokenize(c.content)
		t.totalLen += int64(length)
		for term, tf := range counts {
			id, ok := t.terms[term]
			if !ok {
				id = uint32(len(t.postings))
				t.terms[term] = id
				t.postings = append(t.postings, nil)
				t.df = append(t.df, 0)
			}
			t.postings[id] = append(t.postings[id], vposting{slot: uint32(slot), gen: c.gen, tf: tf})
			t.df[id]++
			t.nPosting++
		}
	}
}

// ---- vector ranking ----

type scored struct {
	slot  uint32
	score float32
}

type scored64 struct {
	slot  uint32
	score float64
}

// nearest returns the n live slots with the highest dot product with q,
// best first, ties by id.
func (t *vtenant) nearest(q []float32, n int) []scored {
	rows := len(t.chunks)
	shards := 1
	if work := rows * t.dim; work >= 2*scanFloatsPerShard {
		shards = min(runtime.GOMAXPROCS(0), work/scanFloatsPerShard)
	}
	if shards <= 1 {
		h := topN{t: t, n: n}
		t.scan(q, 0, rows, &h)
		return h.sorted()
	}
	heaps := make([]topN, shards)
	var wg sync.WaitGroup
	per := (rows + shards - 1) / shards
	for i := range shards {
		lo, hi := i*per, min((i+1)*per, rows)
		heaps[i] = topN{t: t, n: n}
		wg.Go(func() { t.scan(q, lo, hi, &heaps[i]) })
	}
	wg.Wait()
	merged := topN{t: t, n: n}
	for i := range heaps {
		for _, s := range heaps[i].items {
			merged.offer(s)
		}
	}
	return merged.sorted()
}

func (t *vtenant) scan(q []float32, lo, hi int, h *topN) {
	dim := t.dim
	for slot := lo; slot < hi; slot++ {
		if !t.chunks[slot].alive {
			continue
		}
		s := dot(q, t.vecs[slot*dim:(slot+1)*dim])
		if len(h.items) == h.n && s < h.items[0].score {
			continue // cannot enter the heap: skip the offer's bookkeeping
		}
		h.offer(scored{slot: uint32(slot), score: s})
	}
}

// dot is the inner product, unrolled eight ways with four accumulators so
// the additions do not wait on one another.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa, bb := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += aa[0]*bb[0] + aa[4]*bb[4]
		s1 += aa[1]*bb[1] + aa[5]*bb[5]
		s2 += aa[2]*bb[2] + aa[6]*bb[6]
		s3 += aa[3]*bb[3] + aa[7]*bb[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// topN keeps the best n offers in a min-heap whose root is the worst kept.
type topN struct {
	t     *vtenant
	n     int
	items []scored
}

// worse orders by score, then by id descending (a larger id loses a tie).
func (h *topN) worse(a, b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return h.t.chunks[a.slot].id > h.t.chunks[b.slot].id
}

func (h *topN) offer(s scored) {
	if len(h.items) < h.n {
		h.items = append(h.items, s)
		for i := len(h.items) - 1; i > 0; {
			p := (i - 1) / 2
			if !h.worse(h.items[i], h.items[p]) {
				break
			}
			h.items[i], h.items[p] = h.items[p], h.items[i]
			i = p
		}
		return
	}
	if !h.worse(h.items[0], s) {
		return
	}
	h.items[0] = s
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.items) && h.worse(h.items[l], h.items[m]) {
			m = l
		}
		if r < len(h.items) && h.worse(h.items[r], h.items[m]) {
			m = r
		}
		if m == i {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

func (h *topN) sorted() []scored {
	out := slices.Clone(h.items)
	slices.SortFunc(out, func(a, b scored) int {
		switch {
		case h.worse(b, a):
			return -1
		case h.worse(a, b):
			return 1
		}
		return 0
	})
	return out
}

// ---- keyword ranking ----

// keyword returns up to n live slots holding every term of query, ranked by
// Okapi BM25 (ties by id).
func (t *vtenant) keyword(query string, n int) []scored64 {
	counts, _ := tokenize(query)
	if len(counts) == 0 || t.live == 0 {
		return nil
	}
	type qterm struct {
		term string
		id   uint32
	}
	qs := make([]qterm, 0, len(counts))
	for term := range counts {
		id, ok := t.terms[term]
		if !ok || t.df[id] == 0 {
			return nil // every term must match
		}
		qs = append(qs, qterm{term, id})
	}
	// Rarest term first: it bounds the candidates; the fixed order also
	// fixes the floating-point summation order.
	slices.SortFunc(qs, func(a, b qterm) int {
		if c := cmp.Compare(t.df[a.id], t.df[b.id]); c != 0 {
			return c
		}
		return strings.Compare(a.term, b.term)
	})
	nDocs := float64(t.live)
	avgLen := float64(t.totalLen) / nDocs
	if avgLen == 0 {
		avgLen = 1
	}
	var acc map[uint32]float64
	for i, q := range qs {
		df := float64(t.df[q.id])
		idf := math.Log(1 + (nDocs-df+0.5)/(df+0.5))
		next := make(map[uint32]float64, min(int(df), 1<<16))
		for _, p := range t.postings[q.id] {
			c := &t.chunks[p.slot]
			if !c.alive || c.gen != p.gen {
				continue
			}
			prev, ok := acc[p.slot]
			if i > 0 && !ok {
				continue
			}
			tf := float64(p.tf)
			norm := tf + bm25K1*(1-bm25B+bm25B*float64(c.length)/avgLen)
			next[p.slot] = prev + idf*tf*(bm25K1+1)/norm
		}
		acc = next
		if len(acc) == 0 {
			return nil
		}
	}
	return t.best(acc, n)
}

// best returns the n highest scores, best first, ties broken by chunk id.
func (t *vtenant) best(scores map[uint32]float64, n int) []scored64 {
	out := make([]scored64, 0, len(scores))
	for slot, score := range scores {
		out = append(out, scored64{slot: slot, score: score})
	}
	slices.SortFunc(out, func(a, b scored64) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(t.chunks[a.slot].id, t.chunks[b.slot].id)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// stopwords is a deliberately tiny list; every entry is also a stopword of
// Postgres's english configuration, so the embedded index never matches
// less than Postgres on them.
var stopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true,
	"by": true, "for": true, "from": true, "in": true, "is": true, "it": true, "of": true,
	"on": true, "or": true, "that": true, "the": true, "to": true, "was": true, "with": true,
}

// tokenize lowercases s, splits it on anything that is not a letter or a
// digit, drops stopwords and over-long tokens, folds plurals, and returns
// the term frequencies and the token count.
func tokenize(s string) (map[string]uint32, int) {
	counts := map[string]uint32{}
	n := 0
	for field := range strings.FieldsFuncSeq(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(field) > maxTokenBytes {
			continue
		}
		w := strings.ToLower(field)
		if stopwords[w] {
			continue
		}
		counts[fold(w)]++
		n++
	}
	return counts, n
}

// fold is Harman's S-stemmer: it folds regular English plurals onto their
// singular so "refunds" matches "refund", as Postgres's stemmer would.
func fold(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && !strings.HasSuffix(w, "eies") && !strings.HasSuffix(w, "aies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "es") && !strings.HasSuffix(w, "aes") && !strings.HasSuffix(w, "ees") && !strings.HasSuffix(w, "oes"):
		return w[:len(w)-1]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}
