package postgres_test

// The memory backend against real databases: the contract suite on plain
// PostgreSQL 15 (no extension: keyword recall) and on PGlite with pgvector
// (semantic recall), each test in a schema of its own.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/adapters/memorytest"
	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/internal/pgtest"
	"github.com/arrowhead-go/arrowhead/migrations"
	"github.com/arrowhead-go/arrowhead/ports"
)

// memoryDims is the embedding width of the memory tests' tables.
const memoryDims = 8

// plainMemoryDSN migrates the memory tables into a private schema of the
// plain PostgreSQL 15 test database and returns a DSN whose search_path is
// that schema.
func plainMemoryDSN(t testing.TB) string {
	t.Helper()
	dsn := pgtest.PrivateSchema(t, pgtest.PostgresDSN(t))
	ctx, cancel := context.WithTimeout(context.Background(), pgvectorFixtureTimeout)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	applied, skipped, err := migrations.Apply(ctx, c, migrations.Config{Columns: migrations.DefaultColumns(), Dimensions: memoryDims, Memory: true})
	if err != nil || len(applied) != 1 || len(skipped) != 1 {
		t.Fatalf("migrating the memory tables: applied %v, skipped %v, %v", applied, skipped, err)
	}
	return dsn
}

// plainMemoryStore opens a memory store on its own pool over dsn.
func plainMemoryStore(t testing.TB, dsn string) *postgres.MemoryStore {
	t.Helper()
	pool, err := postgres.NewPool(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	m, err := postgres.NewMemoryStore(context.Background(), pool, postgres.MemoryConfig{Dimensions: memoryDims})
	if err != nil {
		t.Fatalf("NewMemoryStore: %v", err)
	}
	return m
}

// pgvectorMemoryStore migrates the memory tables, with the embedding
// column, into a private schema on the shared PGlite connection, which
// keeps that schema first on its search_path until the test ends.
func pgvectorMemoryStore(t testing.TB) *postgres.MemoryStore {
	t.Helper()
	pool := testPool(t)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	schema := "m_" + hex.EncodeToString(b[:])
	// The extension stays in public whichever test installs it first, so
	// dropping a test's schema never drops it.
	pgvectorExec(t, "CREATE EXTENSION IF NOT EXISTS vector SCHEMA public", "CREATE SCHEMA "+schema)
	t.Cleanup(func() { pgvectorExec(t, "DROP SCHEMA "+schema+" CASCADE") })
	withSettings(t, "search_path = "+schema+", public")
	err := pool.WithConnForTest(context.Background(), func(c *pgx.Conn) error {
		ctx, cancel := context.WithTimeout(context.Background(), pgvectorFixtureTimeout)
		defer cancel()
		applied, skipped, err := migrations.Apply(ctx, c, migrations.Config{Columns: migrations.DefaultColumns(), Dimensions: memoryDims, Memory: true})
		if err == nil && (len(applied) != 2 || len(skipped) != 0) {
			err = fmt.Errorf("applied %v, skipped %v with pgvector", applied, skipped)
		}
		return err
	})
	if err != nil {
		t.Fatalf("migrating the memory tables: %v", err)
	}
	m, err := postgres.NewMemoryStore(context.Background(), pool, postgres.MemoryConfig{Dimensions: memoryDims})
	if err != nil {
		t.Fatalf("NewMemoryStore: %v", err)
	}
	return m
}

func TestIntegrationMemoryContractOnPlainPostgres(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) ports.MemoryBackend {
		m := plainMemoryStore(t, plainMemoryDSN(t))
		if m.Semantic() {
			t.Fatal("semantic recall on a PostgreSQL without pgvector")
		}
		return m
	})
}

func TestIntegrationMemoryContractOnPgvector(t *testing.T) {
	memorytest.Run(t, func(t *testing.T) ports.MemoryBackend {
		m := pgvectorMemoryStore(t)
		if !m.Semantic() {
			t.Fatal("no semantic recall where the embedding column exists")
		}
		return m
	})
}

// TestIntegrationMemorySemanticRecall: with embeddings, recall ranks by
// cosine similarity and says semantic; records stored without one are not
// ranked; without a query embedding it is keyword recall again.
func TestIntegrationMemorySemanticRecall(t *testing.T) {
	m := pgvectorMemoryStore(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	axis := func(i int) []float32 {
		v := make([]float32, memoryDims)
		v[i] = 1
		return v
	}
	for i, c := range []string{"prefers metric units", "coffee black", "tabs over spaces"} {
		w := memorytest.Write("p", c, at.Add(time.Duration(i)*time.Second))
		w.Embedding = axis(i)
		if _, _, err := m.Store(ctx, "alice", w, ports.MemoryLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := m.Store(ctx, "alice", memorytest.Write("p", "no embedding here, coffee", at), ports.MemoryLimits{}); err != nil {
		t.Fatal(err)
	}
	q := axis(1)
	q[0] = 0.5
	hits, recall, err := m.Search(ctx, "alice", "p", "drinks", q, 5)
	if err != nil || recall != ports.RecallSemantic {
		t.Fatalf("semantic search: %v %q", err, recall)
	}
	if len(hits) != 3 || hits[0].Record.Content != "coffee black" || hits[1].Record.Content != "prefers metric units" || hits[0].Score <= hits[1].Score {
		t.Fatalf("semantic ranking: %+v", hits)
	}
	if h, _, _ := m.Search(ctx, "bob", "p", "drinks", q, 5); len(h) != 0 {
		t.Fatalf("bob recalls %d of alice's memories", len(h))
	}
	if _, _, err := m.Search(ctx, "alice", "p", "drinks", make([]float32, memoryDims), 5); err == nil {
		t.Fatal("a zero query vector was ranked")
	}
	hits, recall, err = m.Search(ctx, "alice", "p", "coffee", nil, 5)
	if err != nil || recall != ports.RecallKeyword || len(hits) != 2 {
		t.Fatalf("keyword search beside semantic: %+v %q %v", hits, recall, err)
	}
}

// TestIntegrationMemoryBoundsAcrossReplicas: two stores on two pools (two
// replicas) writing for one owner at once never overshoot a bound.
func TestIntegrationMemoryBoundsAcrossReplicas(t *testing.T) {
	dsn := plainMemoryDSN(t)
	replicas := []*postgres.MemoryStore{plainMemoryStore(t, dsn), plainMemoryStore(t, dsn)}
	ctx := context.Background()
	lim := ports.MemoryLimits{MaxEntriesPerNamespace: 7, MaxNamespaces: 3, QuotaBytes: 1 << 20, MaxKeys: 5}
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := map[string]int{}
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := replicas[i%2]
			for j := range 6 {
				_, _, err := m.Store(ctx, "alice", memorytest.Write(fmt.Sprintf("ns%d", j%4), fmt.Sprintf("w%d-%d", i, j), time.Now()), lim)
				kvErr := m.KVSet(ctx, "alice", ports.KVEntry{Key: fmt.Sprintf("k%d-%d", i, j), Value: "v", UpdatedAt: time.Now()}, lim)
				mu.Lock()
				for _, e := range []error{err, kvErr} {
					var le *ports.MemoryLimitError
					switch {
					case errors.As(e, &le):
						refused[le.Var]++
					case e != nil:
						t.Errorf("write: %v", e)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	namespaces := 0
	for j := range 4 {
		list, _, err := replicas[j%2].List(ctx, "alice", fmt.Sprintf("ns%d", j), 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) > 0 {
			namespaces++
		}
		if len(list) > lim.MaxEntriesPerNamespace {
			t.Errorf("ns%d holds %d entries under a bound of %d", j, len(list), lim.MaxEntriesPerNamespace)
		}
	}
	if namespaces != lim.MaxNamespaces {
		t.Errorf("%d namespaces under a bound of %d", namespaces, lim.MaxNamespaces)
	}
	keys := 0
	for i := range 8 {
		for j := range 6 {
			if _, err := replicas[0].KVGet(ctx, "alice", fmt.Sprintf("k%d-%d", i, j), time.Now()); err == nil {
				keys++
			}
		}
	}
	if keys != lim.MaxKeys {
		t.Errorf("%d keys under a bound of %d", keys, lim.MaxKeys)
	}
	if refused["ARROWHEAD_KV_MAX_KEYS"] != 8*6-lim.MaxKeys || refused["ARROWHEAD_MEMORY_MAX_NAMESPACES"] == 0 {
		t.Errorf("refusals: %v", refused)
	}
}

// TestIntegrationMemoryStoreRefusesAMissingSchema: start-up fails closed
// on a database without the memory tables, and on one that does not
// answer, and neither error quotes the DSN.
func TestIntegrationMemoryStoreRefusesAMissingSchema(t *testing.T) {
	dsn := pgtest.PrivateSchema(t, pgtest.PostgresDSN(t))
	pool, err := postgres.NewPool(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := postgres.NewMemoryStore(context.Background(), pool, postgres.MemoryConfig{Dimensions: memoryDims}); !errors.Is(err, postgres.ErrMemorySchema) {
		t.Fatalf("no tables: %v, want ErrMemorySchema", err)
	}
	down, err := postgres.NewPool(context.Background(), "postgres://u:secret@127.0.0.1:1/db?sslmode=disable", postgres.WithConnectTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	if _, err := postgres.NewMemoryStore(context.Background(), down, postgres.MemoryConfig{Dimensions: memoryDims}); !errors.Is(err, postgres.ErrMemoryUnreachable) {
		t.Fatalf("no database: %v, want ErrMemoryUnreachable", err)
	}
}
