package inmem_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/inmem"
	"github.com/arrowhead-go/arrowhead/adapters/vectortest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

const (
	vecTestCollection = "doc_chunks"
	vecTestDims       = 8
	vecTestMaxK       = 20
)

func vecTestConfig(dir string) inmem.VectorIndexConfig {
	return inmem.VectorIndexConfig{Dir: dir, Collections: []string{vecTestCollection, "other_chunks"}, Dimensions: vecTestDims, MaxK: vecTestMaxK}
}

func openVecIndex(t testing.TB, cfg inmem.VectorIndexConfig) *inmem.VectorIndex {
	t.Helper()
	x, err := inmem.OpenVectorIndex(context.Background(), cfg)
	if err != nil {
		t.Fatalf("OpenVectorIndex: %v (%v)", err, errors.Unwrap(err))
	}
	t.Cleanup(func() { _ = x.Close() })
	return x
}

func vecContractConfig() vectortest.Config {
	return vectortest.Config{Collection: vecTestCollection, Disallowed: "not_listed", Dimensions: vecTestDims, MaxK: vecTestMaxK}
}

func TestVectorIndexContractInMemory(t *testing.T) {
	vectortest.Run(t, vecContractConfig(), func(t *testing.T) (ports.VectorReader, ports.VectorWriter) {
		x := openVecIndex(t, vecTestConfig(""))
		return x, x
	})
}

func TestVectorIndexContractPersisted(t *testing.T) {
	vectortest.Run(t, vecContractConfig(), func(t *testing.T) (ports.VectorReader, ports.VectorWriter) {
		x := openVecIndex(t, vecTestConfig(t.TempDir()))
		return x, x
	})
}

// reopening is a store whose every read first closes and reopens the index
// from disk, so the contract runs against what was persisted, not what
// happens to be in memory.
type reopening struct {
	t   *testing.T
	cfg inmem.VectorIndexConfig
	mu  sync.Mutex
	x   *inmem.VectorIndex
}

func (r *reopening) fresh() *inmem.VectorIndex {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.x.Close(); err != nil {
		r.t.Fatalf("Close: %v", err)
	}
	x, err := inmem.OpenVectorIndex(context.Background(), r.cfg)
	if err != nil {
		r.t.Fatalf("reopening: %v", err)
	}
	r.x = x
	return x
}

func (r *reopening) current() *inmem.VectorIndex {
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

func TestVectorIndexContractAcrossRestarts(t *testing.T) {
	vectortest.Run(t, vecContractConfig(), func(t *testing.T) (ports.VectorReader, ports.VectorWriter) {
		cfg := vecTestConfig(t.TempDir())
		x, err := inmem.OpenVectorIndex(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := &reopening{t: t, cfg: cfg, x: x}
		t.Cleanup(func() { _ = r.current().Close() })
		return r, r
	})
}

// ---- configuration ----

func TestVectorIndexConfigValidation(t *testing.T) {
	many := make([]string, inmem.MaxVectorCollections+1)
	for i := range many {
		many[i] = fmt.Sprintf("c%d", i)
	}
	for name, cfg := range map[string]inmem.VectorIndexConfig{
		"zero dimensions":       {Collections: []string{"a"}, Dimensions: 0},
		"too many dimensions":   {Collections: []string{"a"}, Dimensions: inmem.MaxVectorDimensions + 1},
		"negative max k":        {Collections: []string{"a"}, Dimensions: 4, MaxK: -1},
		"max k too large":       {Collections: []string{"a"}, Dimensions: 4, MaxK: inmem.MaxVectorK + 1},
		"upper-case collection": {Collections: []string{"Docs"}, Dimensions: 4},
		"path collection":       {Collections: []string{"../etc"}, Dimensions: 4},
		"empty collection":      {Collections: []string{""}, Dimensions: 4},
		"duplicate collection":  {Collections: []string{"a", "a"}, Dimensions: 4},
		"too many collections":  {Collections: many, Dimensions: 4},
	} {
		_, err := inmem.OpenVectorIndex(context.Background(), cfg)
		if !errors.Is(err, inmem.ErrVectorConfig) {
			t.Errorf("%s: got %v, want ErrVectorConfig", name, err)
		}
	}
}

func TestVectorIndexConfigFromSettings(t *testing.T) {
	s := settings.Settings{DataDir: "/var/lib/arrowhead", PgvectorCollections: []string{"doc_chunks"}, EmbeddingDimensions: 384, PgvectorMaxK: 25}
	got := inmem.VectorIndexConfigFromSettings(s)
	want := inmem.VectorIndexConfig{Dir: "/var/lib/arrowhead/vectors", Collections: []string{"doc_chunks"}, Dimensions: 384, MaxK: 25}
	if got.Dir != want.Dir || !slices.Equal(got.Collections, want.Collections) || got.Dimensions != want.Dimensions || got.MaxK != want.MaxK {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestVectorIndexDefaultMaxK(t *testing.T) {
	x := openVecIndex(t, inmem.VectorIndexConfig{Collections: []string{"c"}, Dimensions: 4})
	ctx := context.Background()
	if _, err := x.Search(ctx, "c", "t", []float32{1, 0, 0, 0}, inmem.DefaultVectorMaxK); err != nil {
		t.Errorf("k=DefaultVectorMaxK: %v", err)
	}
	_, err := x.Search(ctx, "c", "t", []float32{1, 0, 0, 0}, inmem.DefaultVectorMaxK+1)
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
	x := openVecIndex(t, vecTestConfig(""))
	ctx := context.Background()
	big := strings.Repeat("x", inmem.MaxVectorContentBytes+1)
	err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", "a.md", 0, big, unitVec(0))})
	wantVecKind(t, err, ports.VectorLimit)
	if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", "a.md", 0, big[1:], unitVec(0))}); err != nil {
		t.Errorf("content of exactly MaxVectorContentBytes: %v", err)
	}
	long := strings.Repeat("s", inmem.MaxVectorSourceBytes+1)
	wantVecKind(t, x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", long, 0, "c", unitVec(0))}), ports.VectorFailed)
	longTenant := strings.Repeat("t", inmem.MaxVectorTenantBytes+1)
	_, err = x.Search(ctx, vecTestCollection, longTenant, unitVec(0), 1)
	wantVecKind(t, err, ports.VectorFailed)
	_, err = x.Hybrid(ctx, vecTestCollection, "t", strings.Repeat("q ", inmem.MaxVectorQueryBytes), unitVec(0), 1, ports.HybridOptions{RRFK: 60, CandidateMultiplier: 4})
	wantVecKind(t, err, ports.VectorFailed)
	_, err = x.Hybrid(ctx, vecTestCollection, "t", "q", unitVec(0), 1, ports.HybridOptions{RRFK: 60, CandidateMultiplier: 4, Language: "english; drop"})
	wantVecKind(t, err, ports.VectorFailed)
}

func TestVectorIndexChunkLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a collection to its limit")
	}
	x := openVecIndex(t, vecTestConfig(""))
	ctx := context.Background()
	const batch = 5000
	for start := 0; start < inmem.MaxVectorChunks; start += batch {
		chunks := make([]ports.Chunk, 0, batch)
		for i := start; i < start+batch && i < inmem.MaxVectorChunks; i++ {
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
	x := openVecIndex(t, vecTestConfig(""))
	ctx := context.Background()
	chunks := make([]ports.Chunk, 0, inmem.MaxVectorTenants)
	for i := range inmem.MaxVectorTenants {
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

// ---- lifecycle and persistence ----

func TestVectorIndexClosed(t *testing.T) {
	x, err := inmem.OpenVectorIndex(context.Background(), vecTestConfig(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err = x.Search(context.Background(), vecTestCollection, "t", unitVec(0), 1)
	wantVecKind(t, err, ports.VectorUnavailable)
	wantVecKind(t, x.Upsert(context.Background(), vecTestCollection, []ports.Chunk{vecChunk("t", "a", 0, "c", unitVec(0))}), ports.VectorUnavailable)
}

func TestVectorIndexCancelledContext(t *testing.T) {
	x := openVecIndex(t, vecTestConfig(""))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := x.Search(ctx, vecTestCollection, "t", unitVec(0), 1)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Search: %v", err)
	}
	if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("t", "a", 0, "c", unitVec(0))}); !errors.Is(err, context.Canceled) {
		t.Errorf("Upsert: %v", err)
	}
}

func TestVectorIndexLocksItsDirectory(t *testing.T) {
	dir := t.TempDir()
	x := openVecIndex(t, vecTestConfig(dir))
	_, err := inmem.OpenVectorIndex(context.Background(), vecTestConfig(dir))
	if !errors.Is(err, inmem.ErrVectorLocked) {
		t.Fatalf("second open: %v, want ErrVectorLocked", err)
	}
	wantVecKind(t, err, ports.VectorUnavailable)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	y := openVecIndex(t, vecTestConfig(dir))
	_ = y
}

func TestVectorIndexFilesArePrivate(t *testing.T) {
	dir := t.TempDir()
	x := openVecIndex(t, vecTestConfig(dir))
	if err := x.Upsert(context.Background(), vecTestCollection, []ports.Chunk{vecChunk("t", "a", 0, "c", unitVec(0))}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{vecTestCollection, filepath.Join(vecTestCollection, "index.wal")} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want no group or other access", name, st.Mode().Perm())
		}
	}
}

// snapshotOf reads everything a tenant has, for comparing stores.
func snapshotOf(t *testing.T, x *inmem.VectorIndex, tenant string) []string {
	t.Helper()
	ctx := context.Background()
	srcs, err := x.Sources(ctx, vecTestCollection, tenant, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range srcs {
		h, err := x.Hashes(ctx, vecTestCollection, tenant, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range slices.Sorted(maps.Keys(h)) {
			out = append(out, fmt.Sprintf("%s#%d=%s", s, i, h[i]))
		}
	}
	hits, err := x.Search(ctx, vecTestCollection, tenant, unitVec(2), vecTestMaxK)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		out = append(out, fmt.Sprintf("hit %s %s#%d %.5f %q", h.ID, h.Source, h.Index, h.Score, h.Content))
	}
	return out
}

func TestVectorIndexCompactionAndReload(t *testing.T) {
	dir := t.TempDir()
	cfg := vecTestConfig(dir)
	x, err := inmem.OpenVectorIndex(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// About 12 MiB of log: past the compaction threshold.
	pad := strings.Repeat("lorem ipsum dolor sit amet ", 2200)
	for i := range 200 {
		c := vecChunk("t", fmt.Sprintf("doc%d.md", i%20), i/20, fmt.Sprintf("%s %d", pad, i), unitVec(i))
		if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{c}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, vecTestCollection, "index.snap")); err != nil {
		t.Fatalf("no snapshot after 12 MiB of writes: %v", err)
	}
	walInfo, err := os.Stat(filepath.Join(dir, vecTestCollection, "index.wal"))
	if err != nil {
		t.Fatal(err)
	}
	if walInfo.Size() > 8<<20 {
		t.Errorf("log is %d bytes after compaction", walInfo.Size())
	}
	// Writes after the snapshot land in the new log.
	if err := x.Truncate(ctx, vecTestCollection, "t", "doc3.md", 4); err != nil {
		t.Fatal(err)
	}
	if err := x.Upsert(ctx, vecTestCollection, []ports.Chunk{vecChunk("u", "z.md", 0, "second tenant", unitVec(5))}); err != nil {
		t.Fatal(err)
	}
	want := snapshotOf(t, x, "t")
	wantU := snapshotOf(t, x, "u")
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	y := openVecIndex(t, cfg)
	if got := snapshotOf(t, y, "t"); !slices.Equal(got, want) {
		t.Errorf("after reload:\n got %d lines\nwant %d lines", len(got), len(want))
	}
	if got := snapshotOf(t, y, "u"); !slices.Equal(got, wantU) {
		t.Errorf("tenant u after reload: %v, want %v", got, wantU)
	}
	hits, err := y.Hybrid(ctx, vecTestCollection, "t", "lorem", unitVec(0), 3, ports.HybridOptions{RRFK: 60, CandidateMultiplier: 2})
	if err != nil || len(hits) != 3 {
		t.Errorf("hybrid after reload: %v, %v", hits, err)
	}
}

// vecWriteSome creates an index in dir with a few writes and closes it.
func vecWriteSome(t *testing.T, dir string) {
	t.Helper()
	x, err := inmem.OpenVectorIndex(context.Background(), vecTestConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := x.Upsert(context.Background(), vecTestCollection, []ports.Chunk{vecChunk("t", "a.md", i, fmt.Sprintf("chunk %d", i), unitVec(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestVectorIndexTornFinalRecordIsDropped(t *testing.T) {
	dir := t.TempDir()
	vecWriteSome(t, dir)
	wal := filepath.Join(dir, vecTestCollection, "index.wal")
	st, err := os.Stat(wal)
	if err != nil {
		t.Fatal(err)
	}
	// A crash in the middle of appending the third record.
	if err := os.Truncate(wal, st.Size()-7); err != nil {
		t.Fatal(err)
	}
	x := openVecIndex(t, vecTestConfig(dir))
	h, err := x.Hashes(context.Background(), vecTestCollection, "t", "a.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 {
		t.Fatalf("after a torn record: %v, want chunks 0 and 1", h)
	}
	// The log was repaired: new writes survive another restart.
	if err := x.Upsert(context.Background(), vecTestCollection, []ports.Chunk{vecChunk("t", "a.md", 5, "five", unitVec(5))}); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	y := openVecIndex(t, vecTestConfig(dir))
	if h, _ := y.Hashes(context.Background(), vecTestCollection, "t", "a.md"); len(h) != 3 {
		t.Errorf("after repair and restart: %v", h)
	}
}

func TestVectorIndexRefusesCorruptFiles(t *testing.T) {
	flip := func(off int64) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if off < 0 {
				off += int64(len(b))
			}
			b[off] ^= 0x40
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := map[string]struct {
		file   string
		damage func(t *testing.T, path string)
	}{
		"log magic":               {"index.wal", flip(0)},
		"log header checksum":     {"index.wal", flip(17)},
		"first record length":     {"index.wal", flip(20)},
		"first record payload":    {"index.wal", flip(40)},
		"log replaced by garbage": {"index.wal", func(t *testing.T, p string) { _ = os.WriteFile(p, []byte("not a log at all, really not"), 0o600) }},
		"empty log":               {"index.wal", func(t *testing.T, p string) { _ = os.WriteFile(p, nil, 0o600) }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			vecWriteSome(t, dir)
			tc.damage(t, filepath.Join(dir, vecTestCollection, tc.file))
			_, err := inmem.OpenVectorIndex(context.Background(), vecTestConfig(dir))
			if !errors.Is(err, inmem.ErrVectorCorrupt) {
				t.Fatalf("got %v, want ErrVectorCorrupt", err)
			}
			if strings.Contains(err.Error(), dir) {
				t.Errorf("error names the path: %v", err)
			}
		})
	}
}

func TestVectorIndexRefusesCorruptSnapshot(t *testing.T) {
	dir := t.TempDir()
	x, err := inmem.OpenVectorIndex(context.Background(), vecTestConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("padding words ", 4000)
	for i := range 150 {
		if err := x.Upsert(context.Background(), vecTestCollection, []ports.Chunk{vecChunk("t", "a.md", i, pad, unitVec(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, vecTestCollection, "index.snap")
	good, err := os.ReadFile(snap)
	if err != nil {
		t.Fatalf("no snapshot: %v", err)
	}
	for name, mutate := range map[string]func([]byte) []byte{
		"flipped byte":   func(b []byte) []byte { b[len(b)/2] ^= 1; return b },
		"flipped count":  func(b []byte) []byte { b[len(b)-5] ^= 1; return b },
		"truncated":      func(b []byte) []byte { return b[:len(b)-100] },
		"trailing bytes": func(b []byte) []byte { return append(b, 0) },
		"wrong magic":    func(b []byte) []byte { b[0] = 'X'; return b },
		"huge length":    func(b []byte) []byte { b[28], b[29], b[30], b[31] = 0xff, 0xff, 0xff, 0x7f; return b },
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(snap, mutate(slices.Clone(good)), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := inmem.OpenVectorIndex(context.Background(), vecTestConfig(dir))
			if !errors.Is(err, inmem.ErrVectorCorrupt) {
				t.Fatalf("got %v, want ErrVectorCorrupt", err)
			}
		})
	}
	if err := os.WriteFile(snap, good, 0o600); err != nil {
		t.Fatal(err)
	}
	y := openVecIndex(t, vecTestConfig(dir))
	if h, err := y.Hashes(context.Background(), vecTestCollection, "t", "a.md"); err != nil || len(h) != 150 {
		t.Errorf("restored snapshot: %d chunks, %v", len(h), err)
	}
}

func TestVectorIndexRefusesOtherDimensions(t *testing.T) {
	dir := t.TempDir()
	vecWriteSome(t, dir)
	cfg := vecTestConfig(dir)
	cfg.Dimensions = vecTestDims * 2
	_, err := inmem.OpenVectorIndex(context.Background(), cfg)
	wantVecKind(t, err, ports.VectorDimension)
}

// ---- concurrency ----

func TestVectorIndexConcurrentUse(t *testing.T) {
	x := openVecIndex(t, vecTestConfig(t.TempDir()))
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
	x := openVecIndex(t, inmem.VectorIndexConfig{Collections: []string{"big"}, Dimensions: dims, MaxK: 50})
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
