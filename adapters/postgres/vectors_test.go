package postgres_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// These tests need no database: they cover configuration and the checks
// made before any connection. The store itself runs against pgvector in
// vectors_integration_test.go.

// deadDSN names a loopback port nothing listens on.
func deadDSN(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return "postgres://reader:hunter2@127.0.0.1:" + strconv.Itoa(port) + "/db?sslmode=disable&connect_timeout=2"
}

// deadPool is a pool of one connection on deadDSN, closed when the test
// ends.
func deadPool(t *testing.T) *postgres.Pool {
	t.Helper()
	pool, err := postgres.NewPool(context.Background(), deadDSN(t), postgres.WithMaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// deadVectorStores returns a store for the read side and one for the
// write side, both on deadPool.
func deadVectorStores(t *testing.T, cfg postgres.VectorConfig) (r, w *postgres.VectorStore) {
	t.Helper()
	pool := deadPool(t)
	r, err := postgres.NewVectorStore(cfg, pool)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Name = postgres.VectorWriterName
	w, err = postgres.NewVectorStore(cfg, pool)
	if err != nil {
		t.Fatal(err)
	}
	return r, w
}

func vecCfg() postgres.VectorConfig {
	return postgres.VectorConfig{Collections: []string{"doc_chunks"}, Columns: postgres.DefaultVectorColumns(), Dimensions: 4, MaxK: 10}
}

func TestVectorConfigRefusesBadIdentifiers(t *testing.T) {
	pool := deadPool(t)
	mutate := func(f func(*postgres.VectorConfig)) postgres.VectorConfig {
		c := vecCfg()
		f(&c)
		return c
	}
	for name, cfg := range map[string]postgres.VectorConfig{
		"injected collection":   mutate(func(c *postgres.VectorConfig) { c.Collections = []string{"docs; drop table docs"} }),
		"quoted collection":     mutate(func(c *postgres.VectorConfig) { c.Collections = []string{`docs"`} }),
		"upper-case collection": mutate(func(c *postgres.VectorConfig) { c.Collections = []string{"Docs"} }),
		"schema collection":     mutate(func(c *postgres.VectorConfig) { c.Collections = []string{"public.docs"} }),
		"duplicate collection":  mutate(func(c *postgres.VectorConfig) { c.Collections = []string{"a", "a"} }),
		"long collection":       mutate(func(c *postgres.VectorConfig) { c.Collections = []string{strings.Repeat("a", 64)} }),
		"injected column":       mutate(func(c *postgres.VectorConfig) { c.Columns.Tenant = "tenant or true" }),
		"empty column":          mutate(func(c *postgres.VectorConfig) { c.Columns.Embedding = "" }),
		"shared column":         mutate(func(c *postgres.VectorConfig) { c.Columns.Content = c.Columns.Source }),
		"zero dimensions":       mutate(func(c *postgres.VectorConfig) { c.Dimensions = 0 }),
		"too many dimensions":   mutate(func(c *postgres.VectorConfig) { c.Dimensions = postgres.MaxVectorDimensions + 1 }),
		"negative max k":        mutate(func(c *postgres.VectorConfig) { c.MaxK = -1 }),
		"huge max k":            mutate(func(c *postgres.VectorConfig) { c.MaxK = ports.MaxVectorK + 1 }),
		"negative timeout":      mutate(func(c *postgres.VectorConfig) { c.StatementTimeout = -time.Second }),
	} {
		if _, err := postgres.NewVectorStore(cfg, pool); !errors.Is(err, ports.ErrVectorConfig) {
			t.Errorf("%s: got %v, want ErrVectorConfig", name, err)
		}
	}
	if _, err := postgres.NewVectorStore(vecCfg(), nil); !errors.Is(err, ports.ErrVectorConfig) {
		t.Errorf("nil pool: %v", err)
	}
}

func TestVectorConfigFromSettings(t *testing.T) {
	s := settings.Settings{
		PgvectorCollections: []string{"doc_chunks"}, PgvectorTenantColumn: "t", PgvectorIDColumn: "i",
		PgvectorContentColumn: "c", PgvectorEmbeddingColumn: "e", PgvectorSourceColumn: "s",
		PgvectorChunkIndexColumn: "x", PgvectorContentHashColumn: "h", PgvectorTsvectorColumn: "v",
		EmbeddingDimensions: 384, PgvectorMaxK: 25, SQLTimeoutSeconds: 2.5,
	}
	got := postgres.VectorConfigFromSettings(s)
	want := postgres.VectorColumns{Tenant: "t", ID: "i", Content: "c", Embedding: "e", Source: "s", ChunkIndex: "x", ContentHash: "h", Tsvector: "v"}
	if got.Columns != want || got.Dimensions != 384 || got.MaxK != 25 || got.StatementTimeout != 2500*time.Millisecond ||
		len(got.Collections) != 1 || got.Collections[0] != "doc_chunks" {
		t.Errorf("got %+v", got)
	}
}

// TestVectorChecksBeforeConnecting: refusals that need no database are
// made without one (the pool points at a closed port).
func TestVectorChecksBeforeConnecting(t *testing.T) {
	r, w := deadVectorStores(t, vecCfg())
	ctx := context.Background()
	emb := []float32{1, 0, 0, 0}
	kind := func(err error) ports.VectorErrorKind {
		var ve *ports.VectorError
		if !errors.As(err, &ve) {
			return "not a VectorError: " + ports.VectorErrorKind(err.Error())
		}
		return ve.Kind
	}
	checks := []struct {
		name string
		err  error
		want ports.VectorErrorKind
	}{
		{"unlisted collection", func() error { _, err := r.Search(ctx, "users", "acme", emb, 1); return err }(), ports.VectorFailed},
		{"unlisted collection (writer)", w.Upsert(ctx, "users", []ports.Chunk{{ID: "x", Tenant: "t", Source: "s", Embedding: emb}}), ports.VectorFailed},
		{"k too large", func() error { _, err := r.Search(ctx, "doc_chunks", "acme", emb, 11); return err }(), ports.VectorLimit},
		{"k zero", func() error {
			_, err := r.Hybrid(ctx, "doc_chunks", "acme", "q", emb, 0, ports.HybridOptions{CandidateMultiplier: 4})
			return err
		}(), ports.VectorLimit},
		{"width", func() error { _, err := r.Search(ctx, "doc_chunks", "acme", emb[:3], 1); return err }(), ports.VectorDimension},
		{"empty tenant", func() error { _, err := r.Search(ctx, "doc_chunks", "", emb, 1); return err }(), ports.VectorFailed},
		{"bad language", func() error {
			_, err := r.Hybrid(ctx, "doc_chunks", "acme", "q", emb, 1, ports.HybridOptions{CandidateMultiplier: 4, Language: "english'::regconfig"})
			return err
		}(), ports.VectorFailed},
		{"multiplier", func() error {
			_, err := r.Hybrid(ctx, "doc_chunks", "acme", "q", emb, 1, ports.HybridOptions{CandidateMultiplier: 101})
			return err
		}(), ports.VectorLimit},
		{"content too large", w.Upsert(ctx, "doc_chunks", []ports.Chunk{{ID: "x", Tenant: "t", Source: "s", Content: strings.Repeat("x", ports.MaxVectorContentBytes+1), Embedding: emb}}), ports.VectorLimit},
		{"negative keep", w.Truncate(ctx, "doc_chunks", "t", "s", -1), ports.VectorFailed},
		{"long source", func() error {
			_, err := w.Hashes(ctx, "doc_chunks", "t", strings.Repeat("s", ports.MaxVectorSourceBytes+1))
			return err
		}(), ports.VectorFailed},
	}
	for _, c := range checks {
		if got := kind(c.err); got != c.want {
			t.Errorf("%s: kind %q, want %q", c.name, got, c.want)
		}
	}
}

func TestVectorDatabaseDownIsUnavailable(t *testing.T) {
	r, w := deadVectorStores(t, vecCfg())
	ctx := context.Background()
	_, err := r.Search(ctx, "doc_chunks", "acme", []float32{1, 0, 0, 0}, 1)
	var ve *ports.VectorError
	if !errors.As(err, &ve) || ve.Kind != ports.VectorUnavailable {
		t.Fatalf("got %v, want unavailable", err)
	}
	if err.Error() != "vector store unavailable" {
		t.Errorf("error text %q", err.Error())
	}
	for e := error(ve); e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), "hunter2") || strings.Contains(e.Error(), "127.0.0.1") || strings.Contains(e.Error(), "reader") {
			t.Errorf("error chain leaks connection details: %q", e.Error())
		}
	}
	if h := r.Health(ctx); h != ports.HealthDown {
		t.Errorf("reader health %q, want down", h)
	}
	if h := w.Health(ctx); h != ports.HealthDown {
		t.Errorf("writer health %q, want down", h)
	}
	if r.Name() != "pgvector" || w.Name() != "pgvector_write" {
		t.Errorf("names %q %q", r.Name(), w.Name())
	}
}

func TestVectorClosedPoolIsUnavailable(t *testing.T) {
	pool := deadPool(t)
	w, err := postgres.NewVectorStore(vecCfg(), pool)
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	err = w.Truncate(context.Background(), "doc_chunks", "t", "s", 0)
	var ve *ports.VectorError
	if !errors.As(err, &ve) || ve.Kind != ports.VectorUnavailable {
		t.Errorf("after Close: %v", err)
	}
}
