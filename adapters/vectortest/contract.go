// Package vectortest is the contract suite of ports.VectorReader and
// ports.VectorWriter: one set of tests that every vector store (the embedded
// index, pgvector) must pass, so the single-machine default and the
// scale-out path behave alike. Each adapter's tests call Run with a factory
// for an empty store.
package vectortest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Config describes the store under test.
type Config struct {
	// Collection is allow-listed and empty each time the factory returns.
	Collection string
	// Disallowed is a valid identifier the store does not serve.
	Disallowed string
	// Dimensions is the store's configured embedding width (at least 4).
	Dimensions int
	// MaxK is the store's largest k (at least 10).
	MaxK int
}

// Factory returns a reader and a writer over an empty Config.Collection.
// Run calls it once per subtest.
type Factory func(t *testing.T) (ports.VectorReader, ports.VectorWriter)

// scoreTolerance absorbs the float32 arithmetic of the stores.
const scoreTolerance = 1e-5

// Run runs the contract suite.
func Run(t *testing.T, cfg Config, newStore Factory) {
	if cfg.Dimensions < 4 || cfg.MaxK < 10 || cfg.Collection == "" || cfg.Disallowed == "" {
		t.Fatalf("vectortest: Config needs a collection, a disallowed name, at least 4 dimensions and MaxK >= 10")
	}
	s := suite{cfg: cfg, newStore: newStore}
	t.Run("SearchRanksByCosine", s.searchRanksByCosine)
	t.Run("SearchBoundsK", s.searchBoundsK)
	t.Run("DimensionMismatch", s.dimensionMismatch)
	t.Run("RefusesBadEmbeddings", s.refusesBadEmbeddings)
	t.Run("RefusesBadArguments", s.refusesBadArguments)
	t.Run("RefusesUnlistedCollection", s.refusesUnlistedCollection)
	t.Run("TenantIsolation", s.tenantIsolation)
	t.Run("CrossTenantIDConflict", s.crossTenantIDConflict)
	t.Run("PositionConflict", s.positionConflict)
	t.Run("IdempotentUpsert", s.idempotentUpsert)
	t.Run("ReplaceContent", s.replaceContent)
	t.Run("HashesAndTruncate", s.hashesAndTruncate)
	t.Run("SourcesPrefixIsLiteral", s.sourcesPrefixIsLiteral)
	t.Run("HybridMatchesReferenceRRF", s.hybridMatchesReference)
	t.Run("HybridKeywordNeedsEveryTerm", s.hybridKeywordNeedsEveryTerm)
	t.Run("HybridWithoutKeywords", s.hybridWithoutKeywords)
}

type suite struct {
	cfg      Config
	newStore Factory
}

// ---- fixtures ----

// ChunkID is the id the suite gives a chunk: deterministic in tenant,
// source and index, like the core's.
func ChunkID(tenant, source string, index int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d:%s|%d:%s|%d", len(tenant), tenant, len(source), source, index))
	return hex.EncodeToString(sum[:16])
}

// ContentHash is the hex SHA-256 of content.
func ContentHash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

func (s *suite) vec(xs ...float64) []float32 {
	v := make([]float32, s.cfg.Dimensions)
	for i, x := range xs {
		v[i] = float32(x)
	}
	return v
}

// angle is a unit vector in the plane of the first two axes, theta radians
// from the first: its cosine with vec(1) is cos(theta).
func (s *suite) angle(theta float64) []float32 {
	return s.vec(math.Cos(theta), math.Sin(theta))
}

func (s *suite) chunk(tenant, source string, index int, content string, emb []float32) ports.Chunk {
	return ports.Chunk{
		ID: ChunkID(tenant, source, index), Tenant: tenant, Source: source, Index: index,
		Content: content, Hash: ContentHash(content), Embedding: emb,
	}
}

func upsert(t *testing.T, w ports.VectorWriter, collection string, chunks ...ports.Chunk) {
	t.Helper()
	if err := w.Upsert(context.Background(), collection, chunks); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
}

func search(t *testing.T, r ports.VectorReader, collection, tenant string, emb []float32, k int) []ports.VectorHit {
	t.Helper()
	hits, err := r.Search(context.Background(), collection, tenant, emb, k)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	return hits
}

func hybrid(t *testing.T, r ports.VectorReader, collection, tenant, query string, emb []float32, k int, opt ports.HybridOptions) []ports.VectorHit {
	t.Helper()
	hits, err := r.Hybrid(context.Background(), collection, tenant, query, emb, k, opt)
	if err != nil {
		t.Fatalf("Hybrid: %v", err)
	}
	return hits
}

func ids(hits []ports.VectorHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// wantKind fails unless err is a *ports.VectorError of kind.
func wantKind(t *testing.T, what string, err error, kind ports.VectorErrorKind) {
	t.Helper()
	var ve *ports.VectorError
	if !errors.As(err, &ve) {
		t.Fatalf("%s: got %v, want a *ports.VectorError of kind %q", what, err, kind)
	}
	if ve.Kind != kind {
		t.Fatalf("%s: got kind %q (%v), want %q", what, ve.Kind, err, kind)
	}
}

// wantVectorError fails unless err is a *ports.VectorError of any kind.
func wantVectorError(t *testing.T, what string, err error) {
	t.Helper()
	var ve *ports.VectorError
	if !errors.As(err, &ve) {
		t.Fatalf("%s: got %v, want a *ports.VectorError", what, err)
	}
}

func defaultHybrid() ports.HybridOptions {
	return ports.HybridOptions{RRFK: 60, CandidateMultiplier: 4, Language: "english"}
}

// ---- tests ----

func (s *suite) searchRanksByCosine(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	// Angles from the query axis; the embeddings are scaled differently so
	// only their direction may count.
	angles := []float64{0.9, 0.1, 1.4, 0.5, 2.5, 0.3}
	var chunks []ports.Chunk
	for i, a := range angles {
		e := s.angle(a)
		scale := float32(i + 1)
		for j := range e {
			e[j] *= scale
		}
		chunks = append(chunks, s.chunk("acme", fmt.Sprintf("docs/%d.md", i), i, fmt.Sprintf("chunk number %d", i), e))
	}
	upsert(t, w, col, chunks...)

	hits := search(t, r, col, "acme", s.vec(3, 0), 4)
	wantOrder := []int{1, 5, 3, 0} // by increasing angle
	if len(hits) != len(wantOrder) {
		t.Fatalf("got %d hits, want %d", len(hits), len(wantOrder))
	}
	for i, idx := range wantOrder {
		h := hits[i]
		if h.ID != chunks[idx].ID || h.Source != chunks[idx].Source || h.Index != idx || h.Content != chunks[idx].Content {
			t.Errorf("hit %d = %+v, want chunk %d (%s #%d)", i, h, idx, chunks[idx].Source, idx)
		}
		if want := math.Cos(angles[idx]); math.Abs(h.Score-want) > scoreTolerance {
			t.Errorf("hit %d score = %v, want cosine %v", i, h.Score, want)
		}
	}
	// k larger than the tenant's rows returns them all, an obtuse one last
	// with a negative score.
	all := search(t, r, col, "acme", s.vec(1), s.cfg.MaxK)
	if len(all) != len(angles) {
		t.Fatalf("k=MaxK returned %d hits, want %d", len(all), len(angles))
	}
	if last := all[len(all)-1]; last.ID != chunks[4].ID || last.Score >= 0 {
		t.Errorf("last hit = %+v, want chunk 4 with a negative score", last)
	}
	// An exact match scores 1.
	if top := search(t, r, col, "acme", chunks[2].Embedding, 1); len(top) != 1 || top[0].ID != chunks[2].ID || math.Abs(top[0].Score-1) > scoreTolerance {
		t.Errorf("exact match = %+v, want chunk 2 with score 1", top)
	}
}

func (s *suite) searchBoundsK(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	upsert(t, w, col, s.chunk("acme", "a.md", 0, "alpha", s.vec(1, 0)))
	ctx := context.Background()
	for _, k := range []int{0, -1, s.cfg.MaxK + 1, math.MaxInt32} {
		_, err := r.Search(ctx, col, "acme", s.vec(1), k)
		wantKind(t, fmt.Sprintf("Search k=%d", k), err, ports.VectorLimit)
		_, err = r.Hybrid(ctx, col, "acme", "alpha", s.vec(1), k, defaultHybrid())
		wantKind(t, fmt.Sprintf("Hybrid k=%d", k), err, ports.VectorLimit)
	}
	if hits := search(t, r, col, "acme", s.vec(1), s.cfg.MaxK); len(hits) != 1 {
		t.Errorf("k=MaxK: got %d hits, want 1", len(hits))
	}
	if hits := hybrid(t, r, col, "acme", "alpha", s.vec(1), s.cfg.MaxK, defaultHybrid()); len(hits) != 1 {
		t.Errorf("hybrid k=MaxK: got %d hits, want 1", len(hits))
	}
	// Candidate multiplier and RRF k are bounded too.
	for _, opt := range []ports.HybridOptions{
		{RRFK: -1, CandidateMultiplier: 4, Language: "english"},
		{RRFK: 60, CandidateMultiplier: 0, Language: "english"},
		{RRFK: 60, CandidateMultiplier: 1_000_000, Language: "english"},
	} {
		_, err := r.Hybrid(ctx, col, "acme", "alpha", s.vec(1), 1, opt)
		wantVectorError(t, fmt.Sprintf("Hybrid %+v", opt), err)
	}
}

func (s *suite) dimensionMismatch(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	ctx := context.Background()
	upsert(t, w, col, s.chunk("acme", "a.md", 0, "alpha", s.vec(1, 0)))
	for _, width := range []int{s.cfg.Dimensions - 1, s.cfg.Dimensions + 1, 1} {
		emb := make([]float32, width)
		emb[0] = 1
		_, err := r.Search(ctx, col, "acme", emb, 1)
		wantKind(t, fmt.Sprintf("Search width %d", width), err, ports.VectorDimension)
		_, err = r.Hybrid(ctx, col, "acme", "alpha", emb, 1, defaultHybrid())
		wantKind(t, fmt.Sprintf("Hybrid width %d", width), err, ports.VectorDimension)
		bad := s.chunk("acme", "b.md", 0, "beta", emb)
		err = w.Upsert(ctx, col, []ports.Chunk{s.chunk("acme", "c.md", 0, "gamma", s.vec(0, 1)), bad})
		wantKind(t, fmt.Sprintf("Upsert width %d", width), err, ports.VectorDimension)
	}
	// A refused batch writes nothing, not even its valid chunks.
	if hits := search(t, r, col, "acme", s.vec(1), s.cfg.MaxK); len(hits) != 1 {
		t.Errorf("after refused upserts: %d chunks, want 1", len(hits))
	}
}

func (s *suite) refusesBadEmbeddings(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	ctx := context.Background()
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for name, emb := range map[string][]float32{
		"NaN":       s.vec(1, float64(nan)),
		"+Inf":      s.vec(float64(inf), 0),
		"-Inf":      s.vec(0, float64(-inf)),
		"zero norm": s.vec(),
	} {
		_, err := r.Search(ctx, col, "acme", emb, 1)
		wantKind(t, "Search "+name, err, ports.VectorFailed)
		_, err = r.Hybrid(ctx, col, "acme", "alpha", emb, 1, defaultHybrid())
		wantKind(t, "Hybrid "+name, err, ports.VectorFailed)
		err = w.Upsert(ctx, col, []ports.Chunk{s.chunk("acme", "a.md", 0, "alpha", emb)})
		wantKind(t, "Upsert "+name, err, ports.VectorFailed)
	}
	if hits := search(t, r, col, "acme", s.vec(1), s.cfg.MaxK); len(hits) != 0 {
		t.Errorf("refused upserts stored %d chunks", len(hits))
	}
}

func (s *suite) refusesBadArguments(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	ctx := context.Background()
	good := s.chunk("acme", "a.md", 0, "alpha", s.vec(1))
	mutate := func(f func(*ports.Chunk)) ports.Chunk {
		c := good
		f(&c)
		return c
	}
	for name, c := range map[string]ports.Chunk{
		"empty tenant":        mutate(func(c *ports.Chunk) { c.Tenant = "" }),
		"empty id":            mutate(func(c *ports.Chunk) { c.ID = "" }),
		"empty source":        mutate(func(c *ports.Chunk) { c.Source = "" }),
		"negative index":      mutate(func(c *ports.Chunk) { c.Index = -1 }),
		"NUL in content":      mutate(func(c *ports.Chunk) { c.Content = "al\x00pha" }),
		"invalid UTF-8":       mutate(func(c *ports.Chunk) { c.Content = "al\xffpha" }),
		"NUL in source":       mutate(func(c *ports.Chunk) { c.Source = "a\x00.md" }),
		"invalid UTF-8 in id": mutate(func(c *ports.Chunk) { c.ID = "\xc3" }),
	} {
		err := w.Upsert(ctx, col, []ports.Chunk{c})
		wantKind(t, "Upsert "+name, err, ports.VectorFailed)
	}
	if hits := search(t, r, col, "acme", s.vec(1), s.cfg.MaxK); len(hits) != 0 {
		t.Errorf("refused upserts stored %d chunks", len(hits))
	}
	_, err := r.Search(ctx, col, "", s.vec(1), 1)
	wantKind(t, "Search with an empty tenant", err, ports.VectorFailed)
	_, err = r.Hybrid(ctx, col, "acme", "al\x00pha", s.vec(1), 1, defaultHybrid())
	wantKind(t, "Hybrid with NUL in the query", err, ports.VectorFailed)
	err = w.Truncate(ctx, col, "acme", "a.md", -1)
	wantKind(t, "Truncate keep=-1", err, ports.VectorFailed)
	_, err = w.Sources(ctx, col, "acme", "a\xff")
	wantKind(t, "Sources with invalid UTF-8", err, ports.VectorFailed)
	if err := w.Upsert(ctx, col, nil); err != nil {
		t.Errorf("Upsert of nothing: %v", err)
	}
}

func (s *suite) refusesUnlistedCollection(t *testing.T) {
	r, w := s.newStore(t)
	ctx := context.Background()
	bad := s.cfg.Disallowed
	_, err := r.Search(ctx, bad, "acme", s.vec(1), 1)
	wantVectorError(t, "Search", err)
	_, err = r.Hybrid(ctx, bad, "acme", "alpha", s.vec(1), 1, defaultHybrid())
	wantVectorError(t, "Hybrid", err)
	_, err = w.Hashes(ctx, bad, "acme", "a.md")
	wantVectorError(t, "Hashes", err)
	err = w.Upsert(ctx, bad, []ports.Chunk{s.chunk("acme", "a.md", 0, "alpha", s.vec(1))})
	wantVectorError(t, "Upsert", err)
	err = w.Truncate(ctx, bad, "acme", "a.md", 0)
	wantVectorError(t, "Truncate", err)
	_, err = w.Sources(ctx, bad, "acme", "")
	wantVectorError(t, "Sources", err)
	// Names that are not identifiers at all are refused the same way.
	for _, name := range []string{"", "Docs", "docs; drop table docs", `docs"`, "a.b"} {
		_, err := r.Search(ctx, name, "acme", s.vec(1), 1)
		wantVectorError(t, fmt.Sprintf("Search %q", name), err)
		err = w.Upsert(ctx, name, []ports.Chunk{s.chunk("acme", "a.md", 0, "alpha", s.vec(1))})
		wantVectorError(t, fmt.Sprintf("Upsert %q", name), err)
	}
}

func (s *suite) tenantIsolation(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	ctx := context.Background()
	// Two tenants with identical content, embeddings and sources.
	embs := [][]float32{s.vec(1, 0), s.vec(0, 1), s.vec(1, 1), s.vec(0, 0, 1), s.vec(-1, 0.2)}
	owned := map[string]map[string]bool{"tenant-a": {}, "tenant-b": {}}
	for tenant := range owned {
		for i, e := range embs {
			c := s.chunk(tenant, fmt.Sprintf("shared/doc%d.md", i%2), i, fmt.Sprintf("shared secret zebra paragraph %d", i), e)
			upsert(t, w, col, c)
			owned[tenant][c.ID] = true
		}
	}
	opts := []ports.HybridOptions{defaultHybrid(), {RRFK: 0, CandidateMultiplier: 100, Language: "english"}}
	queries := []string{"shared secret zebra", "paragraph", "", "' OR '1'='1", "tenant-b"}
	for tenant, mine := range owned {
		for _, e := range append(embs, s.vec(0.3, -0.7, 0.1, 0.9)) {
			for _, k := range []int{1, 3, s.cfg.MaxK} {
				hits := search(t, r, col, tenant, e, k)
				if want := min(k, len(embs)); len(hits) != want {
					t.Fatalf("%s k=%d: %d hits, want %d", tenant, k, len(hits), want)
				}
				for _, h := range hits {
					if !mine[h.ID] {
						t.Fatalf("Search as %s returned another tenant's chunk %s", tenant, h.ID)
					}
				}
				for _, q := range queries {
					for _, opt := range opts {
						for _, h := range hybrid(t, r, col, tenant, q, e, k, opt) {
							if !mine[h.ID] {
								t.Fatalf("Hybrid as %s (%q) returned another tenant's chunk %s", tenant, q, h.ID)
							}
						}
					}
				}
			}
		}
		srcs, err := w.Sources(ctx, col, tenant, "")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(srcs, []string{"shared/doc0.md", "shared/doc1.md"}) {
			t.Errorf("Sources as %s = %q", tenant, srcs)
		}
	}
	// Tenants that merely resemble one, or would match it under a pattern
	// or case folding, see nothing.
	for _, tenant := range []string{"tenant-c", "tenant-%", "tenant-_", "TENANT-A", "tenant-a ", " tenant-a", "tenant", "%", "*", "' OR '1'='1", "tenant-a' --"} {
		if hits := search(t, r, col, tenant, s.vec(1), s.cfg.MaxK); len(hits) != 0 {
			t.Errorf("Search as %q saw %d chunks", tenant, len(hits))
		}
		if hits := hybrid(t, r, col, tenant, "zebra", s.vec(1), s.cfg.MaxK, defaultHybrid()); len(hits) != 0 {
			t.Errorf("Hybrid as %q saw %d chunks", tenant, len(hits))
		}
		if srcs, err := w.Sources(ctx, col, tenant, ""); err != nil || len(srcs) != 0 {
			t.Errorf("Sources as %q = %q, %v", tenant, srcs, err)
		}
		if h, err := w.Hashes(ctx, col, tenant, "shared/doc0.md"); err != nil || len(h) != 0 {
			t.Errorf("Hashes as %q = %v, %v", tenant, h, err)
		}
	}
	// One tenant's writes leave the other's rows alone.
	if err := w.Truncate(ctx, col, "tenant-a", "shared/doc0.md", 0); err != nil {
		t.Fatal(err)
	}
	hb, err := w.Hashes(ctx, col, "tenant-b", "shared/doc0.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(hb) != 3 {
		t.Errorf("tenant-a's truncate changed tenant-b: %d chunks of doc0 left, want 3", len(hb))
	}
	if got := search(t, r, col, "tenant-a", s.vec(1), s.cfg.MaxK); len(got) != 2 {
		t.Errorf("tenant-a has %d chunks after its truncate, want 2", len(got))
	}
	if got := search(t, r, col, "tenant-b", s.vec(1), s.cfg.MaxK); len(got) != 5 {
		t.Errorf("tenant-b has %d chunks after tenant-a's truncate, want 5", len(got))
	}
}

func (s *suite) crossTenantIDConflict(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	ctx := context.Background()
	theirs := s.chunk("tenant-b", "b.md", 0, "tenant b original", s.vec(1))
	upsert(t, w, col, theirs)
	// Tenant a presents tenant b's chunk id with its own content.
	hijack := s.chunk("tenant-a", "a.md", 0, "overwritten by a", s.vec(0, 1))
	hijack.ID = theirs.ID
	err := w.Upsert(ctx, col, []ports.Chunk{s.chunk("tenant-a", "a.md", 1, "fine", s.vec(1)), hijack})
	wantKind(t, "Upsert of another tenant's id", err, ports.VectorFailed)
	hits := search(t, r, col, "tenant-b", s.vec(1), s.cfg.MaxK)
	if len(hits) != 1 || hits[0].Content != theirs.Content || hits[0].Source != "b.md" {
		t.Errorf("tenant-b's chunk changed: %+v", hits)
	}
	if hits := search(t, r, col, "tenant-a", s.vec(1), s.cfg.MaxK); len(hits) != 0 {
		t.Errorf("the refused batch stored %d chunks for tenant-a", len(hits))
	}
}

func (s *suite) positionConflict(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	ctx := context.Background()
	first := s.chunk("acme", "a.md", 0, "first", s.vec(1))
	upsert(t, w, col, first)
	second := s.chunk("acme", "a.md", 0, "second", s.vec(0, 1))
	second.ID = "some-other-id"
	err := w.Upsert(ctx, col, []ports.Chunk{second})
	wantKind(t, "Upsert of a held position under another id", err, ports.VectorFailed)
	hits := search(t, r, col, "acme", s.vec(1), s.cfg.MaxK)
	if len(hits) != 1 || hits[0].ID != first.ID {
		t.Errorf("position conflict changed the store: %+v", hits)
	}
	// Moving a chunk to a free position, then reusing its old one, in one
	// call, is fine: the chunks apply in order.
	moved := first
	moved.Index = 1
	moved.Source = "a.md"
	reuse := second
	upsert(t, w, col, moved, reuse)
	h, err := w.Hashes(ctx, col, "acme", "a.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0] != reuse.Hash || h[1] != first.Hash {
		t.Errorf("after the move, Hashes = %v", h)
	}
}

func (s *suite) idempotentUpsert(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	ctx := context.Background()
	var chunks []ports.Chunk
	for i := range 6 {
		chunks = append(chunks, s.chunk("acme", fmt.Sprintf("doc%d.md", i%3), i/3, fmt.Sprintf("idempotent zebra text %d", i), s.angle(float64(i)*0.2)))
	}
	upsert(t, w, col, chunks...)
	before := search(t, r, col, "acme", s.vec(1), s.cfg.MaxK)
	beforeH := hybrid(t, r, col, "acme", "zebra", s.vec(1), s.cfg.MaxK, defaultHybrid())
	for range 3 {
		upsert(t, w, col, chunks...)
	}
	// The same chunk twice in one call is one chunk.
	upsert(t, w, col, chunks[0], chunks[0])
	after := search(t, r, col, "acme", s.vec(1), s.cfg.MaxK)
	afterH := hybrid(t, r, col, "acme", "zebra", s.vec(1), s.cfg.MaxK, defaultHybrid())
	if len(after) != len(chunks) {
		t.Fatalf("after re-upserts: %d chunks, want %d", len(after), len(chunks))
	}
	if !slices.Equal(ids(before), ids(after)) || !slices.Equal(ids(beforeH), ids(afterH)) {
		t.Errorf("re-upsert changed the rankings:\n%v\n%v", ids(before), ids(after))
	}
	for i := range after {
		if math.Abs(after[i].Score-before[i].Score) > scoreTolerance || math.Abs(afterH[i].Score-beforeH[i].Score) > 1e-12 {
			t.Errorf("re-upsert changed score %d", i)
		}
	}
	for src, n := range map[string]int{"doc0.md": 2, "doc1.md": 2, "doc2.md": 2} {
		h, err := w.Hashes(ctx, col, "acme", src)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != n {
			t.Errorf("Hashes(%s) has %d entries, want %d", src, len(h), n)
		}
	}
}

func (s *suite) replaceContent(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	old := s.chunk("acme", "a.md", 0, "the walrus policy", s.vec(1))
	upsert(t, w, col, old)
	if hits := hybrid(t, r, col, "acme", "walrus", s.vec(0, 1), 1, defaultHybrid()); len(hits) != 1 {
		t.Fatalf("hybrid before replace: %d hits", len(hits))
	}
	repl := s.chunk("acme", "a.md", 0, "the narwhal policy", s.vec(0, 1))
	if repl.ID != old.ID {
		t.Fatal("ChunkID is not deterministic")
	}
	upsert(t, w, col, repl)
	hits := search(t, r, col, "acme", s.vec(0, 1), s.cfg.MaxK)
	if len(hits) != 1 || hits[0].Content != repl.Content || math.Abs(hits[0].Score-1) > scoreTolerance {
		t.Fatalf("after replace: %+v", hits)
	}
	// The keyword index follows the content. With RRF k = 0 and one chunk,
	// the vector branch alone scores 1 and both branches score 2.
	opt := ports.HybridOptions{RRFK: 0, CandidateMultiplier: 1, Language: "english"}
	walrus := hybrid(t, r, col, "acme", "walrus", s.vec(0, 1), 1, opt)
	narwhal := hybrid(t, r, col, "acme", "narwhal", s.vec(0, 1), 1, opt)
	if len(walrus) != 1 || math.Abs(walrus[0].Score-1) > 1e-12 {
		t.Errorf("old word still matches: %+v (want the vector branch alone, score 1)", walrus)
	}
	if len(narwhal) != 1 || math.Abs(narwhal[0].Score-2) > 1e-12 {
		t.Errorf("new word does not match: %+v (want both branches, score 2)", narwhal)
	}
}

func (s *suite) hashesAndTruncate(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	ctx := context.Background()
	var chunks []ports.Chunk
	for i := range 5 {
		chunks = append(chunks, s.chunk("acme", "guide.md", i, fmt.Sprintf("guide part %d", i), s.angle(float64(i)*0.1)))
	}
	chunks = append(chunks, s.chunk("acme", "other.md", 0, "other", s.vec(0, 0, 1)))
	upsert(t, w, col, chunks...)

	h, err := w.Hashes(ctx, col, "acme", "guide.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 5 {
		t.Fatalf("Hashes = %v, want 5 entries", h)
	}
	for i := range 5 {
		if h[i] != chunks[i].Hash {
			t.Errorf("Hashes[%d] = %q, want %q", i, h[i], chunks[i].Hash)
		}
	}
	if h, err := w.Hashes(ctx, col, "acme", "missing.md"); err != nil || len(h) != 0 {
		t.Errorf("Hashes of a missing source = %v, %v", h, err)
	}
	// Hashes matches the source exactly, not as a pattern or a prefix.
	for _, src := range []string{"guide", "guide.m_", "guide.md%", "GUIDE.md"} {
		if h, err := w.Hashes(ctx, col, "acme", src); err != nil || len(h) != 0 {
			t.Errorf("Hashes(%q) = %v, %v", src, h, err)
		}
	}

	// The document shrank to two chunks.
	if err := w.Truncate(ctx, col, "acme", "guide.md", 2); err != nil {
		t.Fatal(err)
	}
	h, _ = w.Hashes(ctx, col, "acme", "guide.md")
	if len(h) != 2 || h[0] != chunks[0].Hash || h[1] != chunks[1].Hash {
		t.Errorf("after Truncate(2): %v", h)
	}
	// Truncating beyond the end, or a missing source, changes nothing.
	if err := w.Truncate(ctx, col, "acme", "guide.md", 10); err != nil {
		t.Fatal(err)
	}
	if err := w.Truncate(ctx, col, "acme", "missing.md", 0); err != nil {
		t.Fatal(err)
	}
	if got := search(t, r, col, "acme", s.vec(1), s.cfg.MaxK); len(got) != 3 {
		t.Errorf("%d chunks left, want 3", len(got))
	}
	// The document was deleted.
	if err := w.Truncate(ctx, col, "acme", "guide.md", 0); err != nil {
		t.Fatal(err)
	}
	srcs, err := w.Sources(ctx, col, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(srcs, []string{"other.md"}) {
		t.Errorf("Sources after deleting guide.md = %q", srcs)
	}
	got := search(t, r, col, "acme", s.vec(1), s.cfg.MaxK)
	if len(got) != 1 || got[0].Source != "other.md" {
		t.Errorf("after deleting guide.md: %+v", got)
	}
}

func (s *suite) sourcesPrefixIsLiteral(t *testing.T) {
	_, w := s.newStore(t)
	col := s.cfg.Collection
	ctx := context.Background()
	sources := []string{
		"docs/a_b.md", "docs/axb.md", "docs/100%.md", "docs/1000.md", `docs\x.md`, `docs/back\slash.md`,
		"docs2/x.md", "other/y.md", "docs/[abc].md", "docs/a.md",
	}
	for i, src := range sources {
		upsert(t, w, col, s.chunk("acme", src, 0, "content", s.angle(float64(i)*0.1)))
		// A second chunk must not duplicate the source in the listing.
		upsert(t, w, col, s.chunk("acme", src, 1, "more content", s.angle(float64(i)*0.1+0.05)))
	}
	upsert(t, w, col, s.chunk("other-tenant", "docs/secret.md", 0, "content", s.vec(1)))
	cases := map[string][]string{
		"":             {"docs/100%.md", "docs/1000.md", "docs/[abc].md", "docs/a.md", "docs/a_b.md", "docs/axb.md", `docs/back\slash.md`, "docs2/x.md", `docs\x.md`, "other/y.md"},
		"docs/":        {"docs/100%.md", "docs/1000.md", "docs/[abc].md", "docs/a.md", "docs/a_b.md", "docs/axb.md", `docs/back\slash.md`},
		"docs/a_":      {"docs/a_b.md"},
		"docs/100%":    {"docs/100%.md"},
		"docs/100":     {"docs/100%.md", "docs/1000.md"},
		`docs\`:        {`docs\x.md`},
		`docs/back\`:   {`docs/back\slash.md`},
		"docs/[":       {"docs/[abc].md"},
		"%":            {},
		"_":            {},
		"docs/%":       {},
		"docs/a.md":    {"docs/a.md"},
		"docs/a.md/":   {},
		"DOCS/":        {},
		"other/y.md_x": {},
	}
	for prefix, want := range cases {
		got, err := w.Sources(ctx, col, "acme", prefix)
		if err != nil {
			t.Fatalf("Sources(%q): %v", prefix, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("Sources(%q) = %q, want %q", prefix, got, want)
		}
	}
}

// referenceRRF is the fusion every store must compute: each branch's list
// is cut to pool, a chunk scores the sum over branches of 1/(rrfK + rank)
// with ranks from 1 (vector term first), and the best k win, ties by id.
func referenceRRF(vector, keyword []string, pool, rrfK, k int) ([]string, []float64) {
	score := map[string]float64{}
	for i, id := range vector[:min(pool, len(vector))] {
		score[id] = 1 / float64(rrfK+i+1)
	}
	for i, id := range keyword[:min(pool, len(keyword))] {
		score[id] += 1 / float64(rrfK+i+1)
	}
	type fused struct {
		id    string
		score float64
	}
	var all []fused
	for id, sc := range score {
		all = append(all, fused{id, sc})
	}
	slices.SortFunc(all, func(a, b fused) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	all = all[:min(k, len(all))]
	outIDs, outScores := make([]string, len(all)), make([]float64, len(all))
	for i, f := range all {
		outIDs[i], outScores[i] = f.id, f.score
	}
	return outIDs, outScores
}

func (s *suite) hybridMatchesReference(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	// Twelve chunks at increasing angles from the query: the vector
	// ranking is the insertion order. Every chunk has eight words; the
	// keyword "zebra" appears 4, 3, 2 and 1 times in four of them, so any
	// sane keyword ranking (BM25, ts_rank_cd) orders them by that count.
	zebras := map[int]int{11: 4, 7: 3, 3: 2, 5: 1}
	filler := []string{"alpha", "bravo", "delta", "golf", "hotel", "kilo", "lima", "oscar"}
	var chunks []ports.Chunk
	var vectorOrder []string
	for i := range 12 {
		words := slices.Clone(filler)
		for j := range zebras[i] {
			words[j*2] = "zebra"
		}
		c := s.chunk("acme", fmt.Sprintf("zoo/%02d.md", i), 0, strings.Join(words, " "), s.angle(0.05+float64(i)*0.12))
		chunks = append(chunks, c)
		vectorOrder = append(vectorOrder, c.ID)
	}
	keywordOrder := []string{chunks[11].ID, chunks[7].ID, chunks[3].ID, chunks[5].ID}
	// Insert in a scrambled order so storage order cannot stand in for rank.
	for _, i := range []int{5, 0, 11, 3, 8, 1, 10, 7, 2, 9, 6, 4} {
		upsert(t, w, col, chunks[i])
	}
	for _, tc := range []struct{ k, mult, rrfK int }{
		{4, 2, 60}, {3, 1, 0}, {10, 4, 5}, {1, 1, 1}, {5, 3, 60}, {2, 100, 0},
	} {
		for _, query := range []string{"zebra", "Zebras", "ZEBRA!"} {
			opt := ports.HybridOptions{RRFK: tc.rrfK, CandidateMultiplier: tc.mult, Language: "english"}
			got := hybrid(t, r, col, "acme", query, s.vec(1), tc.k, opt)
			wantIDs, wantScores := referenceRRF(vectorOrder, keywordOrder, tc.k*tc.mult, tc.rrfK, tc.k)
			if !slices.Equal(ids(got), wantIDs) {
				t.Errorf("k=%d mult=%d rrf_k=%d query %q:\n got  %v\n want %v", tc.k, tc.mult, tc.rrfK, query, ids(got), wantIDs)
				continue
			}
			for i := range got {
				if math.Abs(got[i].Score-wantScores[i]) > 1e-12 {
					t.Errorf("k=%d mult=%d rrf_k=%d: score %d = %v, want %v", tc.k, tc.mult, tc.rrfK, i, got[i].Score, wantScores[i])
				}
				c := chunks[slices.Index(vectorOrder, got[i].ID)]
				if got[i].Source != c.Source || got[i].Index != c.Index || got[i].Content != c.Content {
					t.Errorf("hit %d lost its citation: %+v", i, got[i])
				}
			}
		}
	}
}

func (s *suite) hybridKeywordNeedsEveryTerm(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	var chunks []ports.Chunk
	for i := range 10 {
		content := fmt.Sprintf("zebra stripes item%d", i)
		if i == 9 {
			content = "zebra quokka item9"
		}
		chunks = append(chunks, s.chunk("acme", fmt.Sprintf("n/%d.md", i), 0, content, s.angle(float64(i)*0.15)))
	}
	upsert(t, w, col, chunks...)
	// With k=3 and a multiplier of 1 the vector pool is chunks 0-2. The only
	// chunk with both words is chunk 9, last by vector, so it can arrive
	// only through the keyword branch, and alone: chunks with "zebra" but
	// not "quokka" must not join the keyword pool (they would change the
	// fused scores of chunks 0-2).
	got := hybrid(t, r, col, "acme", "quokka zebra", s.vec(1), 3, ports.HybridOptions{RRFK: 60, CandidateMultiplier: 1, Language: "english"})
	wantIDs, _ := referenceRRF([]string{chunks[0].ID, chunks[1].ID, chunks[2].ID}, []string{chunks[9].ID}, 3, 60, 3)
	if !slices.Equal(ids(got), wantIDs) {
		t.Errorf("got %v, want %v (chunk 9 through the keyword branch only)", ids(got), wantIDs)
	}
	// A term no chunk holds empties the keyword branch.
	opt := ports.HybridOptions{RRFK: 60, CandidateMultiplier: 2, Language: "english"}
	if got := hybrid(t, r, col, "acme", "quokka unicorn", s.vec(1), 2, opt); len(got) != 2 || got[0].ID != chunks[0].ID || math.Abs(got[0].Score-1.0/61) > 1e-12 {
		t.Errorf("a query with an unmatched term still matched by keyword: %+v", got)
	}
}

func (s *suite) hybridWithoutKeywords(t *testing.T) {
	r, w := s.newStore(t)
	col := s.cfg.Collection
	upsert(t, w, col,
		s.chunk("acme", "a.md", 0, "the cat", s.vec(1, 0.1)),
		s.chunk("acme", "b.md", 0, "the dog", s.vec(1, 0.5)),
	)
	// Stopwords only, punctuation only, empty: the keyword branch is empty
	// and the fusion is the vector ranking alone.
	for _, q := range []string{"", "the", "!!! ...", "   "} {
		got := hybrid(t, r, col, "acme", q, s.vec(1), 2, defaultHybrid())
		if len(got) != 2 || got[0].Source != "a.md" || math.Abs(got[0].Score-1.0/61) > 1e-12 || math.Abs(got[1].Score-1.0/62) > 1e-12 {
			t.Errorf("query %q: %+v", q, got)
		}
	}
	// An empty tenant store answers with no hits, not an error.
	if got := hybrid(t, r, col, "nobody", "cat", s.vec(1), 2, defaultHybrid()); len(got) != 0 {
		t.Errorf("unknown tenant: %+v", got)
	}
}
