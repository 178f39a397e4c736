package vectorindex_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/adapters/vectorindex"
	"github.com/arrowhead-go/arrowhead/adapters/vectortest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

const (
	vecTestCollection = "doc_chunks"
	vecTestDims       = 8
	vecTestMaxK       = 20
)

func vecTestConfig() vectorindex.VectorIndexConfig {
	return vectorindex.VectorIndexConfig{Collections: []string{vecTestCollection, "other_chunks"}, Dimensions: vecTestDims, MaxK: vecTestMaxK}
}

func openVecIndex(t testing.TB, cfg vectorindex.VectorIndexConfig) *vectorindex.VectorIndex {
	t.Helper()
	x, err := vectorindex.OpenVectorIndex(context.Background(), cfg)
	if err != nil {
		t.Fatalf("OpenVectorIndex: %v (%v)", err, errors.Unwrap(err))
	}
	t.Cleanup(func() { _ = x.Close() })
	return x
}

// openStored opens the shared embedded store in dir (adapters/sqlite)
// and cfg's index on it; done closes both, the index first. Each call
// has its own connections, as another process would.
func openStored(dir string, cfg vectorindex.VectorIndexConfig) (x *vectorindex.VectorIndex, done func() error, err error) {
	store, err := sqlite.Open(sqlite.Config{Dir: dir})
	if err != nil {
		return nil, nil, err
	}
	cfg.Persist = sqlite.NewVectorStore(store)
	x, err = vectorindex.OpenVectorIndex(context.Background(), cfg)
	if err != nil {
		_ = store.Close()
		return nil, nil, err
	}
	return x, func() error { return errors.Join(x.Close(), store.Close()) }, nil
}

// mustOpenStored is openStored that fails the test, closed when it ends.
func mustOpenStored(t testing.TB, dir string, cfg vectorindex.VectorIndexConfig) (*vectorindex.VectorIndex, func() error) {
	t.Helper()
	x, done, err := openStored(dir, cfg)
	if err != nil {
		t.Fatalf("opening the stored index: %v (%v)", err, errors.Unwrap(err))
	}
	var once sync.Once
	var closeErr error
	closeOnce := func() error { once.Do(func() { closeErr = done() }); return closeErr }
	t.Cleanup(func() { _ = closeOnce() })
	return x, closeOnce
}

func vecContractConfig() vectortest.Config {
	return vectortest.Config{Collection: vecTestCollection, Disallowed: "not_listed", Dimensions: vecTestDims, MaxK: vecTestMaxK}
}

func TestVectorIndexContractInMemory(t *testing.T) {
	vectortest.Run(t, vecContractConfig(), func(t *testing.T) (ports.VectorReader, ports.VectorWriter) {
		x := openVecIndex(t, vecTestConfig())
		return x, x
	})
}

func TestVectorIndexContractPersisted(t *testing.T) {
	vectortest.Run(t, vecContractConfig(), func(t *testing.T) (ports.VectorReader, ports.VectorWriter) {
		x, _ := mustOpenStored(t, t.TempDir(), vecTestConfig())
		return x, x
	})
}

// reopening is a store whose every read first closes and reopens the index
// from disk, so the contract runs against what was persisted, not what
// happens to be in memory.
type reopening struct {
	t    *testing.T
	dir  string
	mu   sync.Mutex
	x    *vectorindex.VectorIndex
	done func() error
}

func (r *reopening) fresh() *vectorindex.VectorIndex {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.done(); err != nil {
		r.t.Fatalf("Close: %v", err)
	}
	x, done, err := openStored(r.dir, vecTestConfig())
	if err != nil {
		r.t.Fatalf("reopening: %v", err)
	}
	r.x, r.done = x, done
	return x
}

func (r *reopening) current() *vectorindex.VectorIndex {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.x
}

func (r *reopening) Search(ctx context.Context, c, tenant string, e []float32, k int) ([]ports.VectorHit, error) {
	return r.fresh().Search(ctx, c, tenant, e, k)
}

func (r *reopening) Hybrid(ctx context.Context, c, tenant, q string, e []float32, k int, o ports.HybridOptions) ([]ports.VectorHit, error) {
	return r.fresh().Hybrid(ctx, c, tenant, q, e, k, o)
}

func (r *reopening) Hashes(ctx context.Context, c, tenant, source string) (map[int]string, error) {
	return r.fresh().Hashes(ctx, c, tenant, source)
}

func (r *reopening) Sources(ctx context.Context, c, tenant, prefix string) ([]string, error) {
	return r.fresh().Sources(ctx, c, tenant, prefix)
}

func (r *reopening) Upsert(ctx context.Context, c string, chunks []ports.Chunk) error {
	return r.current().Upsert(ctx, c, chunks)
}

func (r *reopening) Truncate(ctx context.Context, c, tenant, source string, keep int) error {
	return r.current().Truncate(ctx, c, tenant, source, keep)
}

// TestVectorIndexContractAcrossIndexes writes through one index and reads
// through another on the same store file, each with its own connections:
// every read must see the other's acknowledged writes, as a second
// process would.
func TestVectorIndexContractAcrossIndexes(t *testing.T) {
	vectortest.Run(t, vecContractConfig(), func(t *testing.T) (ports.VectorReader, ports.VectorWriter) {
		dir := t.TempDir()
		w, _ := mustOpenStored(t, dir, vecTestConfig())
		r, _ := mustOpenStored(t, dir, vecTestConfig())
		return r, w
	})
}

func TestVectorIndexContractAcrossRestarts(t *testing.T) {
	vectortest.Run(t, vecContractConfig(), func(t *testing.T) (ports.VectorReader, ports.VectorWriter) {
		dir := t.TempDir()
		x, done, err := openStored(dir, vecTestConfig())
		if err != nil {
			t.Fatal(err)
		}
		r := &reopening{t: t, dir: dir, x: x, done: done}
		t.Cleanup(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			_ = r.done()
		})
		return r, r
	})
}

// ---- configuration ----

func TestVectorIndexConfigValidation(t *testing.T) {
	many := make([]string, vectorindex.MaxVectorCollections+1)
	for i := range many {
		many[i] = fmt.Sprintf("c%d", i)
	}
	for name, cfg := range map[string]vectorindex.VectorIndexConfig{
		"zero dimensions":       {Collections: []string{"a"}, Dimensions: 0},
		"too many dimensions":   {Collections: []string{"a"}, Dimensions: vectorindex.MaxVectorDimensions + 1},
		"negative max k":        {Collections: []string{"a"}, Dimensions: 4, MaxK: -1},
		"max k too large":       {Collections: []string{"a"}, Dimensions: 4, MaxK: ports.MaxVectorK + 1},
		"upper-case collection": {Collections: []string{"Docs"}, Dimensions: 4},
		"path collection":       {Collections: []string{"../etc"}, Dimensions: 4},
		"empty collection":      {Collections: []string{""}, Dimensions: 4},
		"duplicate collection":  {Collections: []string{"a", "a"}, Dimensions: 4},
		"too many collections":  {Collections: many, Dimensions: 4},
	} {
		_, err := vectorindex.OpenVectorIndex(context.Background(), cfg)
		if !errors.Is(err, ports.ErrVectorConfig) {
			t.Errorf("%s: got %v, want ErrVectorConfig", name, err)
		}
	}
}

func TestVectorIndexConfigFromSettings(t *testing.T) {
	s := settings.Settings{DataDir: "/var/lib/arrowhead", PgvectorCollections: []string{"doc_chunks"}, EmbeddingDimensions: 384, PgvectorMaxK: 25}
	got := vectorindex.VectorIndexConfigFromSettings(s)
	want := vectorindex.VectorIndexConfig{Collections: []string{"doc_chunks"}, Dimensions: 384, MaxK: 25}
	if got.Persist != nil || !slices.Equal(got.Collections, want.Collections) || got.Dimensions != want.Dimensions || got.MaxK != want.MaxK {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestVectorIndexDefaultMaxK(t *testing.T) {
	x := openVecIndex(t, vectorindex.VectorIndexConfig{Collections: []string{"c"}, Dimensions: 4})
	ctx := context.Background()
	if _, err := x.Search(ctx, "c", "t", []float32{1, 0, 0, 0}, ports.DefaultVectorMaxK); err != nil {
		t.Errorf("k=DefaultVectorMaxK: %v", err)
	}
	_, err := x.Search(ctx, "c", "t", []float32{1, 0, 0, 0}, ports.DefaultVectorMaxK+1)
	wantVecKind(t, err, ports.VectorLimit)
}

func wantVecKind(t *testing.T, err error, kind ports.VectorErrorKind) {
	t.Helper()
	var ve *ports.VectorError
	if !errors.As(err, &ve) || ve.Kind != kind {
		t.Fatalf("got %v, want a VectorError of kind %q", err, kind)
	}
}

// ---- limits ----

func vecChunk(tenant, source string, index int, content string, emb []float32) ports.Chunk {
	return ports.Chunk{
		ID: vectortest.ChunkID(tenant, source, index), Tenant: tenant, Source: source, Index: index,
		Content: content, Hash: vectortest.ContentHash(content), Embedding: emb,
	}
}

func unitVec(i int) []float32 {
	v := make([]float32, vecTestDims)
	v[i%vecTestDims] = 1
	v[(i+1)%vecTestDims] = float32(i%97) / 97
	return v
}

func TestVectorIndexContentLimit(t *testing.T) {
	x := openVecIndex(t, vecTestConfig())
	ctx := context.Background()
	big := strings.Repeat("x", ports.MaxVectorContentBytes+1)
	err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", "a.md", 0, big, unitVec(0))})
	wantVecKind(t, err, ports.VectorLimit)
	if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", "a.md", 0, big[1:], unitVec(0))}); err != nil {
		t.Errorf("content of exactly MaxVectorContentBytes: %v", err)
	}
	long := strings.Repeat("s", ports.MaxVectorSourceBytes+1)
	wantVecKind(t, x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", long, 0, "c", unitVec(0))}), ports.VectorFailed)
	longTenant := strings.Repeat("t", ports.MaxVectorTenantBytes+1)
	_, err = x.Search(ctx, vecTestCollection, longTenant, unitVec(0), 1)
	wantVecKind(t, err, ports.VectorFailed)
	_, err = x.Hybrid(ctx, vecTestCollection, "t", strings.Repeat("q ", ports.MaxVectorQueryBytes), unitVec(0), 1, ports.HybridOptions{RRFK: 60, CandidateMultiplier: 4})
	wantVecKind(t, err, ports.VectorFailed)
	_, err = x.Hybrid(ctx, vecTestCollection, "t", "q", unitVec(0), 1, ports.HybridOptions{RRFK: 60, CandidateMultiplier: 4, Language: "english; drop"})
	wantVecKind(t, err, ports.VectorFailed)
}

func TestVectorIndexChunkLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a collection to its limit")
	}
	x := openVecIndex(t, vecTestConfig())
	ctx := context.Background()
	const batch = 5000
	for start := 0; start < vectorindex.MaxVectorChunks; start += batch {
		chunks := make([]ports.Chunk, 0, batch)
		for i := start; i < start+batch && i < vectorindex.MaxVectorChunks; i++ {
			chunks = append(chunks, vecChunk("t", fmt.Sprintf("s%d", i/100), i%100, "w", unitVec(i)))
		}
		if err := x.Upsert(ctx, vecTestCollection, chunks); err != nil {
			t.Fatalf("filling at %d: %v", start, err)
		}
	}
	one := vecChunk("t", "extra", 0, "w", unitVec(1))
	wantVecKind(t, x.Upsert(ctx, vecTestCollection, []ports.Chunk{one}), ports.VectorLimit)
	// The limit is per collection.
	if err := x.Upsert(ctx, "other_chunks", []ports.Chunk{one}); err != nil {
		t.Errorf("another collection: %v", err)
	}
	// Replacing a chunk at the limit does not grow the collection.
	if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", "s0", 0, "replaced", unitVec(3))}); err != nil {
		t.Errorf("replacing at the limit: %v", err)
	}
	// Freeing room admits new chunks again.
	if err := x.Truncate(ctx, vecTestCollection, "t", "s1", 99); err != nil {
		t.Fatal(err)
	}
	if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{one}); err != nil {
		t.Errorf("after freeing a chunk: %v", err)
	}
	wantVecKind(t, x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", "extra", 1, "w", unitVec(1))}), ports.VectorLimit)
}

func TestVectorIndexTenantLimit(t *testing.T) {
	x := openVecIndex(t, vecTestConfig())
	ctx := context.Background()
	chunks := make([]ports.Chunk, 0, vectorindex.MaxVectorTenants)
	for i := range vectorindex.MaxVectorTenants {
		chunks = append(chunks, vecChunk(fmt.Sprintf("tenant%d", i), "a.md", 0, "w", unitVec(i)))
	}
	if err := x.Upsert(ctx, vecTestCollection, chunks); err != nil {
		t.Fatal(err)
	}
	wantVecKind(t, x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("one-more", "a.md", 0, "w", unitVec(0))}), ports.VectorLimit)
	// An existing tenant may still write.
	if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("tenant0", "b.md", 0, "w", unitVec(0))}); err != nil {
		t.Errorf("existing tenant: %v", err)
	}
	// A tenant whose chunks are all gone no longer counts.
	if err := x.Truncate(ctx, vecTestCollection, "tenant1", "a.md", 0); err != nil {
		t.Fatal(err)
	}
	if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("one-more", "a.md", 0, "w", unitVec(0))}); err != nil {
		t.Errorf("after a tenant left: %v", err)
	}
}

// ---- concurrency ----

func TestVectorIndexConcurrentUse(t *testing.T) {
	x, _ := mustOpenStored(t, t.TempDir(), vecTestConfig())
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		tenant := fmt.Sprintf("tenant%d", w%2)
		wg.Go(func() {
			for i := range 50 {
				src := fmt.Sprintf("w%d/doc%d.md", w, i%5)
				if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk(tenant, src, i%3, fmt.Sprintf("shared words %d", i), unitVec(i))}); err != nil {
					errs <- err
					return
				}
				if i%7 == 0 {
					if err := x.Truncate(ctx, vecTestCollection, tenant, src, 1); err != nil {
						errs <- err
						return
					}
				}
			}
		})
		wg.Go(func() {
			for i := range 100 {
				hits, err := x.Hybrid(ctx, vecTestCollection, tenant, "shared words", unitVec(i), 5, ports.HybridOptions{RRFK: 60, CandidateMultiplier: 4})
				if err != nil {
					errs <- err
					return
				}
				for _, h := range hits {
					if !strings.HasPrefix(h.Content, "shared words") {
						errs <- fmt.Errorf("odd hit %+v", h)
						return
					}
				}
				if _, err := x.Sources(ctx, vecTestCollection, tenant, "w"); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestVectorIndexLargeTenantScan crosses the parallel-scan threshold and
// checks the result against a single-threaded reference ranking.
func TestVectorIndexLargeTenantScan(t *testing.T) {
	const dims, n = 64, 20_000
	x := openVecIndex(t, vectorindex.VectorIndexConfig{Collections: []string{"big"}, Dimensions: dims, MaxK: 50})
	ctx := context.Background()
	rng := newVecRand(7)
	embs := make([][]float32, n)
	chunks := make([]ports.Chunk, n)
	for i := range n {
		embs[i] = rng.unit(dims)
		chunks[i] = vecChunk("t", fmt.Sprintf("s%d", i/50), i%50, "c", embs[i])
	}
	if err := x.Upsert(ctx, "big", chunks); err != nil {
		t.Fatal(err)
	}
	q := rng.unit(dims)
	hits, err := x.Search(ctx, "big", "t", q, 50)
	if err != nil {
		t.Fatal(err)
	}
	type ref struct {
		id    string
		score float64
	}
	refs := make([]ref, n)
	for i, e := range embs {
		var s float64
		for j := range e {
			s += float64(e[j]) * float64(q[j])
		}
		refs[i] = ref{chunks[i].ID, s}
	}
	slices.SortFunc(refs, func(a, b ref) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.id, b.id)
	})
	for i, h := range hits {
		if h.ID != refs[i].id {
			// float32 rounding may swap near-ties; the score must agree.
			if d := h.Score - refs[i].score; d > 1e-5 || d < -1e-5 {
				t.Fatalf("hit %d = %s (%v), reference %s (%v)", i, h.ID, h.Score, refs[i].id, refs[i].score)
			}
		}
	}
}
