package postgres_test

// Integration tests of the pgvector store against a real PostgreSQL with
// the real pgvector extension. Locally that is PGlite over the wire:
//
//	eval "$(.ci/pglite.sh start /tmp/ahpglite 54329)"
//	go test -p 1 ./adapters/postgres/ ./migrations/
//	.ci/pglite.sh stop /tmp/ahpglite
//
// PGlite has one backend and admits one connection at a time, so the tests
// share one pool of one connection (see testPool), readers, writers and
// fixtures alike, and packages using it should run with -p 1 (a process
// waits for the slot while another holds it). Production uses normal
// pools.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/adapters/vectortest"
	"github.com/arrowhead-go/arrowhead/internal/pgtest"
	"github.com/arrowhead-go/arrowhead/migrations"
	"github.com/arrowhead-go/arrowhead/ports"
)

const (
	// pgvectorFixtureTimeout bounds one fixture statement.
	pgvectorFixtureTimeout = 2 * time.Minute

	contractDims = 8
	contractMaxK = 20
)

var (
	sharedPoolOnce sync.Once
	sharedPool     *postgres.Pool
	sharedPoolErr  error
)

// testPool returns the pool every test in this package shares: one
// connection, opened once and kept for the whole run. PGlite admits one
// connection at a time, and handing its slot from one client to the next
// races: a client that connects while the last one is still leaving is
// refused, pgx then sends a cancel request on a new connection, and PGlite
// (which cannot parse it) holds that connection, and the slot, for pgx's
// 15-second cancel timeout. So the tests never hand the slot over.
func testPool(t testing.TB) *postgres.Pool {
	t.Helper()
	dsn := pgtest.PgvectorDSN(t)
	sharedPoolOnce.Do(func() {
		sharedPool, sharedPoolErr = postgres.NewPool(context.Background(), dsn, postgres.WithMaxConns(1))
		if sharedPoolErr != nil {
			return
		}
		// Another test process may hold the slot: wait for it.
		pgtest.Retry(pgtest.SlotWait, func() bool {
			sharedPoolErr = sharedPool.WithConnForTest(context.Background(), func(c *pgx.Conn) error {
				return c.Ping(context.Background())
			})
			return sharedPoolErr == nil
		})
	})
	if sharedPoolErr != nil {
		t.Fatalf("connecting to %s: %v", pgtest.PgvectorDSNEnv, sharedPoolErr)
	}
	return sharedPool
}

// pgvectorExec runs fixture SQL on the shared connection.
func pgvectorExec(t testing.TB, sqls ...string) {
	t.Helper()
	err := testPool(t).WithConnForTest(context.Background(), func(c *pgx.Conn) error {
		for _, sql := range sqls {
			ctx, cancel := context.WithTimeout(context.Background(), pgvectorFixtureTimeout)
			_, err := c.Exec(ctx, sql)
			cancel()
			if err != nil {
				return fmt.Errorf("%w\n%s", err, sql)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("fixture SQL failed: %v", err)
	}
}

// withSettings applies session settings ("enable_seqscan = off") on the
// shared connection until the test ends.
func withSettings(t testing.TB, settings ...string) {
	t.Helper()
	for _, s := range settings {
		name, _, _ := strings.Cut(s, "=")
		pgvectorExec(t, "SET "+s)
		t.Cleanup(func() { pgvectorExec(t, "RESET "+strings.TrimSpace(name)) })
	}
}

func uniqueTable(t testing.TB, prefix string) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return prefix + "_" + hex.EncodeToString(b[:])
}

// migrateTables creates chunk tables through the migrations package and
// drops them when the test ends.
func migrateTables(t testing.TB, dims int, cols migrations.Columns, tables ...string) {
	t.Helper()
	err := testPool(t).WithConnForTest(context.Background(), func(c *pgx.Conn) error {
		ctx, cancel := context.WithTimeout(context.Background(), pgvectorFixtureTimeout)
		defer cancel()
		_, _, err := migrations.Apply(ctx, c, migrations.Config{Collections: tables, Columns: cols, Dimensions: dims})
		return err
	})
	if err != nil {
		t.Fatalf("migrations.Apply: %v", err)
	}
	t.Cleanup(func() {
		for _, tb := range tables {
			pgvectorExec(t,
				"DROP TABLE IF EXISTS "+pgx.Identifier{tb}.Sanitize(),
				"DELETE FROM "+migrations.BookkeepingTable+" WHERE migration = '001_chunks/"+tb+"'")
		}
	})
}

func toVectorColumns(c migrations.Columns) postgres.VectorColumns {
	return postgres.VectorColumns{
		Tenant: c.Tenant, ID: c.ID, Content: c.Content, Embedding: c.Embedding, Source: c.Source,
		ChunkIndex: c.ChunkIndex, ContentHash: c.ContentHash, Tsvector: c.Tsvector,
	}
}

// pgvectorStores returns a store on the shared pool, as the reader and the
// writer.
func pgvectorStores(t testing.TB, cfg postgres.VectorConfig) (r, w *postgres.VectorStore) {
	t.Helper()
	s, err := postgres.NewVectorStore(cfg, testPool(t))
	if err != nil {
		t.Fatal(err)
	}
	return s, s
}

func runPgvectorContract(t *testing.T, cols migrations.Columns, settings ...string) {
	table := uniqueTable(t, "vt_contract")
	migrateTables(t, contractDims, cols, table)
	withSettings(t, settings...)
	cfg := postgres.VectorConfig{Collections: []string{table}, Columns: toVectorColumns(cols), Dimensions: contractDims, MaxK: contractMaxK}
	vectortest.Run(t, vectortest.Config{Collection: table, Disallowed: "not_listed", Dimensions: contractDims, MaxK: contractMaxK},
		func(t *testing.T) (ports.VectorReader, ports.VectorWriter) {
			pgvectorExec(t, "TRUNCATE "+pgx.Identifier{table}.Sanitize())
			return pgvectorStores(t, cfg)
		})
}

func TestIntegrationPgvectorContract(t *testing.T) {
	runPgvectorContract(t, migrations.DefaultColumns())
}

// TestIntegrationPgvectorContractCustomColumns runs the contract on a table
// whose every column is renamed, two of them to reserved words, so any
// place that ignored the configuration or forgot to quote would fail.
func TestIntegrationPgvectorContractCustomColumns(t *testing.T) {
	cols := migrations.Columns{
		Tenant: "user", ID: "chunk_key", Content: "body", Embedding: "vec", Source: "order",
		ChunkIndex: "pos", ContentHash: "digest", Tsvector: "fts",
	}
	runPgvectorContract(t, cols)
}

// TestIntegrationPgvectorContractIndexScans runs the contract with
// sequential scans and sorts priced out, so the planner takes the HNSW,
// GIN and btree indexes wherever it can.
func TestIntegrationPgvectorContractIndexScans(t *testing.T) {
	runPgvectorContract(t, migrations.DefaultColumns(), "enable_seqscan = off", "enable_sort = off")
}

// TestIntegrationPgvectorFilteredHNSWReturnsK: a small tenant among a large
// one, searched through the HNSW index. An index scan finds ef_search
// candidates across all tenants before the tenant filter applies; without
// pgvector 0.8's iterative scan, which the reader turns on, the small
// tenant's rows are rarely among them and the result comes back short
// (measured on PGlite's pgvector 0.8.7 with data like this: 0 of 5 rows
// without it, 5 of 5 with it).
func TestIntegrationPgvectorFilteredHNSWReturnsK(t *testing.T) {
	table := uniqueTable(t, "vt_hnsw")
	migrateTables(t, contractDims, migrations.DefaultColumns(), table)
	cfg := postgres.VectorConfig{Collections: []string{table}, Columns: postgres.DefaultVectorColumns(), Dimensions: contractDims, MaxK: contractMaxK}
	withSettings(t, "enable_seqscan = off", "enable_sort = off", "enable_bitmapscan = off")
	r, w := pgvectorStores(t, cfg)
	ctx := context.Background()
	rng := mathrand.New(mathrand.NewPCG(42, 7))
	randVec := func() []float32 {
		v := make([]float32, contractDims)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	vec := func(x, y float32) []float32 { v := make([]float32, contractDims); v[0], v[1] = x, y; return v }
	var chunks []ports.Chunk
	for i := range 2000 {
		chunks = append(chunks, ports.Chunk{
			ID: fmt.Sprintf("big-%d", i), Tenant: "big", Source: fmt.Sprintf("b/%d.md", i), Content: "big",
			Hash: "h", Embedding: randVec(),
		})
	}
	for i := range 5 {
		chunks = append(chunks, ports.Chunk{
			ID: fmt.Sprintf("small-%d", i), Tenant: "small", Source: fmt.Sprintf("s/%d.md", i), Content: "small",
			Hash: "h", Embedding: randVec(),
		})
	}
	if err := w.Upsert(ctx, table, chunks); err != nil {
		t.Fatal(err)
	}
	hits, err := r.Search(ctx, table, "small", vec(1, 0), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 5 {
		t.Fatalf("the small tenant got %d of its 5 chunks through the index", len(hits))
	}
	for _, h := range hits {
		if !strings.HasPrefix(h.ID, "small-") {
			t.Fatalf("another tenant's chunk: %+v", h)
		}
	}
	hy, err := r.Hybrid(ctx, table, "small", "small", vec(1, 0), 5, ports.HybridOptions{RRFK: 60, CandidateMultiplier: 2})
	if err != nil || len(hy) != 5 {
		t.Fatalf("hybrid: %d hits, %v", len(hy), err)
	}
}

// TestIntegrationPgvectorUsesHNSW checks the plan of the search statement
// under the index-forcing settings: the HNSW index serves the ORDER BY.
func TestIntegrationPgvectorUsesHNSW(t *testing.T) {
	table := uniqueTable(t, "vt_plan")
	migrateTables(t, contractDims, migrations.DefaultColumns(), table)
	withSettings(t, "enable_seqscan = off", "enable_sort = off")
	var plan []string
	err := testPool(t).WithConnForTest(context.Background(), func(c *pgx.Conn) error {
		rows, err := c.Query(context.Background(), "EXPLAIN SELECT id FROM "+table+" WHERE tenant = 'a' ORDER BY embedding <=> '[1,0,0,0,0,0,0,0]' LIMIT 5", pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), table+"_hnsw_idx") {
		t.Errorf("the HNSW index is not used:\n%s", strings.Join(plan, "\n"))
	}
}

func TestIntegrationPgvectorHealth(t *testing.T) {
	table := uniqueTable(t, "vt_health")
	migrateTables(t, contractDims, migrations.DefaultColumns(), table)
	cfg := postgres.VectorConfig{Collections: []string{table}, Columns: postgres.DefaultVectorColumns(), Dimensions: contractDims}
	r, w := pgvectorStores(t, cfg)
	ctx := context.Background()
	if h := r.Health(ctx); h != ports.HealthOK {
		t.Errorf("reader health %q", h)
	}
	if h := w.Health(ctx); h != ports.HealthOK {
		t.Errorf("writer health %q", h)
	}
}

func TestIntegrationPgvectorMissingTableIsDegraded(t *testing.T) {
	cfg := postgres.VectorConfig{Collections: []string{"never_migrated_here"}, Columns: postgres.DefaultVectorColumns(), Dimensions: contractDims}
	r, _ := pgvectorStores(t, cfg)
	if h := r.Health(context.Background()); h != ports.HealthDegraded {
		t.Errorf("health with a missing table = %q, want degraded", h)
	}
	_, err := r.Search(context.Background(), "never_migrated_here", "t", make([]float32, contractDims-1), 1)
	var ve *ports.VectorError
	if !errors.As(err, &ve) || ve.Kind != ports.VectorDimension {
		t.Errorf("width check: %v", err)
	}
	v := make([]float32, contractDims)
	v[0] = 1
	_, err = r.Search(context.Background(), "never_migrated_here", "t", v, 1)
	if !errors.As(err, &ve) || ve.Kind != ports.VectorFailed || err.Error() != "vector store failed" {
		t.Errorf("missing table: %v", err)
	}
	if cause := errors.Unwrap(err); cause == nil || !strings.Contains(cause.Error(), "sqlstate 42P01") || strings.Contains(cause.Error(), "never_migrated") {
		t.Errorf("cause %v: want the SQLSTATE and no driver text", cause)
	}
}

// TestIntegrationPgvectorTableWidthMismatch: a store configured narrower
// than its table gets pgvector's dimension error, reported as such.
func TestIntegrationPgvectorTableWidthMismatch(t *testing.T) {
	table := uniqueTable(t, "vt_width")
	migrateTables(t, contractDims, migrations.DefaultColumns(), table)
	cfg := postgres.VectorConfig{Collections: []string{table}, Columns: postgres.DefaultVectorColumns(), Dimensions: 4}
	r, w := pgvectorStores(t, cfg)
	ctx := context.Background()
	pgvectorExec(t, "INSERT INTO "+table+" (id, tenant, source, chunk_index, content, content_hash, embedding) VALUES ('x', 't', 's', 0, 'c', 'h', '[1,0,0,0,0,0,0,0]')")
	emb := []float32{1, 0, 0, 0}
	var ve *ports.VectorError
	err := w.Upsert(ctx, table, []ports.Chunk{{ID: "a", Tenant: "t", Source: "s", Index: 1, Content: "c", Hash: "h", Embedding: emb}})
	if !errors.As(err, &ve) || ve.Kind != ports.VectorDimension {
		t.Errorf("upsert: %v", err)
	}
	_, err = r.Search(ctx, table, "t", emb, 1)
	if !errors.As(err, &ve) || ve.Kind != ports.VectorDimension {
		t.Errorf("search: %v", err)
	}
}

func TestIntegrationPgvectorUnknownLanguage(t *testing.T) {
	table := uniqueTable(t, "vt_lang")
	migrateTables(t, contractDims, migrations.DefaultColumns(), table)
	cfg := postgres.VectorConfig{Collections: []string{table}, Columns: postgres.DefaultVectorColumns(), Dimensions: contractDims}
	r, w := pgvectorStores(t, cfg)
	ctx := context.Background()
	emb := make([]float32, contractDims)
	emb[0] = 1
	if err := w.Upsert(ctx, table, []ports.Chunk{{ID: "a", Tenant: "t", Source: "s", Content: "refund window", Hash: "h", Embedding: emb}}); err != nil {
		t.Fatal(err)
	}
	_, err := r.Hybrid(ctx, table, "t", "refund", emb, 1, ports.HybridOptions{RRFK: 60, CandidateMultiplier: 4, Language: "klingon"})
	var ve *ports.VectorError
	if !errors.As(err, &ve) || ve.Kind != ports.VectorFailed || err.Error() != "vector store failed" {
		t.Fatalf("got %v", err)
	}
	if cause := errors.Unwrap(err).Error(); !strings.Contains(cause, "sqlstate 42704") || strings.Contains(cause, "klingon") {
		t.Errorf("cause %q", cause)
	}
	// Another installed configuration works: the language is a parameter.
	hits, err := r.Hybrid(ctx, table, "t", "refund", emb, 1, ports.HybridOptions{RRFK: 0, CandidateMultiplier: 1, Language: "simple"})
	if err != nil || len(hits) != 1 || hits[0].Score != 2 {
		t.Errorf("simple configuration: %+v, %v", hits, err)
	}
}

func TestIntegrationPgvectorExpiredContext(t *testing.T) {
	table := uniqueTable(t, "vt_ctx")
	migrateTables(t, contractDims, migrations.DefaultColumns(), table)
	cfg := postgres.VectorConfig{Collections: []string{table}, Columns: postgres.DefaultVectorColumns(), Dimensions: contractDims}
	r, _ := pgvectorStores(t, cfg)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	emb := make([]float32, contractDims)
	emb[0] = 1
	_, err := r.Search(ctx, table, "t", emb, 1)
	var ve *ports.VectorError
	if !errors.As(err, &ve) || ve.Kind != ports.VectorTimeout {
		t.Errorf("got %v, want timeout", err)
	}
	// The pool recovers for the next call.
	if _, err := r.Search(context.Background(), table, "t", emb, 1); err != nil {
		t.Errorf("after a timeout: %v", err)
	}
}
