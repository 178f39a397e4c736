package migrations_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/internal/pgtest"
	"github.com/arrowhead-go/arrowhead/migrations"
)

func baseConfig() migrations.Config {
	return migrations.Config{Collections: []string{"doc_chunks"}, Columns: migrations.DefaultColumns(), Dimensions: 384, Memory: true}
}

func sqlOf(stmts []migrations.Statement) string {
	var b strings.Builder
	for _, s := range stmts {
		b.WriteString(s.SQL)
		b.WriteString(";\n")
	}
	return b.String()
}

func TestRenderShape(t *testing.T) {
	cfg := baseConfig()
	cfg.Collections = []string{"doc_chunks", "code_chunks"}
	stmts, err := migrations.Render(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, s := range stmts {
		if len(keys) == 0 || keys[len(keys)-1] != s.Migration {
			keys = append(keys, s.Migration)
		}
		if strings.Contains(s.SQL, ";") || strings.Contains(s.SQL, "{{") || strings.Contains(s.SQL, "--") {
			t.Errorf("statement is not one clean statement:\n%s", s.SQL)
		}
		if !strings.HasPrefix(s.SQL, "CREATE ") && !strings.HasPrefix(s.SQL, "ALTER TABLE ") {
			t.Errorf("statement does not start with CREATE or ALTER TABLE:\n%s", s.SQL)
		}
		// Only the memory tables' embedding column waits for pgvector; the
		// chunk tables need it, and the keyword memory tables must not.
		wantRequires := ""
		if s.Migration == "002_memory_vector" {
			wantRequires = migrations.VectorExtension
		}
		if s.Requires != wantRequires {
			t.Errorf("%s requires %q, want %q", s.Migration, s.Requires, wantRequires)
		}
		if s.Migration == "002_memory" && strings.Contains(s.SQL, "vector") {
			t.Errorf("the keyword memory tables need pgvector:\n%s", s.SQL)
		}
		if !strings.Contains(s.SQL, "IF NOT EXISTS") {
			t.Errorf("statement is not idempotent:\n%s", s.SQL)
		}
	}
	if want := []string{"001_chunks/doc_chunks", "001_chunks/code_chunks", "002_memory", "002_memory_vector"}; !slices.Equal(keys, want) {
		t.Errorf("migration order %v, want %v", keys, want)
	}
	all := sqlOf(stmts)
	for _, want := range []string{
		`CREATE TABLE IF NOT EXISTS "doc_chunks"`,
		`"embedding" vector(384) NOT NULL`,
		`to_tsvector('english'::regconfig, "content")`,
		`USING hnsw ("embedding" vector_cosine_ops)`,
		`CREATE UNIQUE INDEX IF NOT EXISTS "doc_chunks_position_key" ON "doc_chunks" ("tenant", "source", "chunk_index")`,
		`USING gin ("content_tsv")`,
		`CREATE TABLE IF NOT EXISTS "memories"`,
		`CREATE TABLE IF NOT EXISTS "memory_owners"`,
		`ALTER TABLE "memories" ADD COLUMN IF NOT EXISTS embedding vector(384)`,
		`PRIMARY KEY (owner, namespace, id)`,
		`CREATE TABLE IF NOT EXISTS "kv"`,
		`PRIMARY KEY (owner, key)`,
		`CREATE EXTENSION IF NOT EXISTS vector`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("rendered SQL lacks %q", want)
		}
	}
	cfg.Memory = false
	stmts, _ = migrations.Render(cfg)
	if strings.Contains(sqlOf(stmts), "memories") {
		t.Error("Memory=false still renders the memory tables")
	}
}

// TestRenderState renders the shared state tables alone: no vector
// column, so no width is needed, and no extension is created.
func TestRenderState(t *testing.T) {
	stmts, err := migrations.Render(migrations.Config{Columns: migrations.DefaultColumns(), State: true})
	if err != nil {
		t.Fatal(err)
	}
	all := sqlOf(stmts)
	for _, s := range stmts {
		if (s.Migration != "003_state" && s.Migration != "004_killswitch") || !strings.HasPrefix(s.SQL, "CREATE ") || !strings.Contains(s.SQL, "IF NOT EXISTS") {
			t.Errorf("unexpected statement %s:\n%s", s.Migration, s.SQL)
		}
	}
	if !strings.Contains(all, `CREATE TABLE IF NOT EXISTS "`+migrations.WorkingSetsTable+`"`) ||
		!strings.Contains(all, `CREATE TABLE IF NOT EXISTS "`+migrations.KillRulesTable+`"`) || strings.Contains(all, "EXTENSION") {
		t.Errorf("state SQL:\n%s", all)
	}
	cfg := baseConfig()
	cfg.State = true
	stmts, _ = migrations.Render(cfg)
	if last := stmts[len(stmts)-1].Migration; last != "004_killswitch" || stmts[len(stmts)-2].Migration != "003_state" {
		t.Errorf("003_state and 004_killswitch render last, not %s", last)
	}
	cfg.Collections = []string{migrations.WorkingSetsTable}
	if _, err := migrations.Render(cfg); !errors.Is(err, migrations.ErrInvalidConfig) {
		t.Errorf("a collection named like the working set table: %v", err)
	}
}

func TestRenderUsesConfiguredNames(t *testing.T) {
	cfg := baseConfig()
	cfg.Columns = migrations.Columns{
		Tenant: "user", ID: "chunk_key", Content: "body", Embedding: "vec", Source: "order",
		ChunkIndex: "pos", ContentHash: "digest", Tsvector: "fts",
	}
	cfg.Language = "simple"
	cfg.Dimensions = 8
	stmts, err := migrations.Render(cfg)
	if err != nil {
		t.Fatal(err)
	}
	all := sqlOf(stmts)
	for _, want := range []string{`"user" text NOT NULL`, `"order" text NOT NULL`, `"chunk_key" text PRIMARY KEY`, `"vec" vector(8)`, `to_tsvector('simple'::regconfig, "body")`, `("user", "order", "pos")`} {
		if !strings.Contains(all, want) {
			t.Errorf("rendered SQL lacks %q", want)
		}
	}
	chunks := all[:strings.Index(all, "memories")]
	for _, def := range []string{`"tenant"`, `"content"`, `"embedding"`, `"source"`} {
		if strings.Contains(chunks, def) {
			t.Errorf("the chunk table uses the default column %s", def)
		}
	}
}

func TestRenderOmitsHNSWBeyondItsLimit(t *testing.T) {
	cfg := baseConfig()
	cfg.Dimensions = migrations.MaxHNSWDimensions
	stmts, _ := migrations.Render(cfg)
	if n := strings.Count(sqlOf(stmts), "USING hnsw"); n != 1 {
		t.Errorf("%d HNSW indexes at %d dimensions, want 1 (the chunk table's; memories are ranked exactly)", n, cfg.Dimensions)
	}
	cfg.Dimensions = migrations.MaxHNSWDimensions + 1
	stmts, err := migrations.Render(cfg)
	if err != nil {
		t.Fatal(err)
	}
	all := sqlOf(stmts)
	if strings.Contains(all, "hnsw") {
		t.Errorf("HNSW index at %d dimensions", cfg.Dimensions)
	}
	if !strings.Contains(all, "vector(2001)") {
		t.Error("the wide vector column is missing")
	}
}

func TestRenderRefusesBadConfig(t *testing.T) {
	mutate := func(f func(*migrations.Config)) migrations.Config {
		c := baseConfig()
		f(&c)
		return c
	}
	many := make([]string, migrations.MaxCollections+1)
	for i := range many {
		many[i] = "c" + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + hex.EncodeToString([]byte{byte(i)})
	}
	for name, cfg := range map[string]migrations.Config{
		"zero dimensions":      mutate(func(c *migrations.Config) { c.Dimensions = 0 }),
		"too many dimensions":  mutate(func(c *migrations.Config) { c.Dimensions = migrations.MaxDimensions + 1 }),
		"injected language":    mutate(func(c *migrations.Config) { c.Language = "english'::regconfig, content)) STORED, x text" }),
		"upper-case language":  mutate(func(c *migrations.Config) { c.Language = "English" }),
		"injected collection":  mutate(func(c *migrations.Config) { c.Collections = []string{"docs (id int); drop table users"} }),
		"quoted collection":    mutate(func(c *migrations.Config) { c.Collections = []string{`a"b`} }),
		"duplicate collection": mutate(func(c *migrations.Config) { c.Collections = []string{"a", "a"} }),
		"reserved collection":  mutate(func(c *migrations.Config) { c.Collections = []string{"memories"} }),
		"bookkeeping":          mutate(func(c *migrations.Config) { c.Collections = []string{migrations.BookkeepingTable} }),
		"memory owners":        mutate(func(c *migrations.Config) { c.Collections = []string{migrations.MemoryOwnersTable} }),
		"injected column":      mutate(func(c *migrations.Config) { c.Columns.Content = "content text, evil" }),
		"empty column":         mutate(func(c *migrations.Config) { c.Columns.Tsvector = "" }),
		"shared column":        mutate(func(c *migrations.Config) { c.Columns.Source = c.Columns.Tenant }),
		"too many collections": mutate(func(c *migrations.Config) { c.Collections = many }),
	} {
		if _, err := migrations.Render(cfg); !errors.Is(err, migrations.ErrInvalidConfig) {
			t.Errorf("%s: got %v, want ErrInvalidConfig", name, err)
		}
	}
}

func TestRenderIndexNamesStayDistinct(t *testing.T) {
	cfg := baseConfig()
	// Two 63-byte table names that differ only past byte 41: "_position_key"
	// appended and cut to 63 bytes would make their index names equal.
	cfg.Collections = []string{strings.Repeat("a", 59) + "_one", strings.Repeat("a", 59) + "_two"}
	stmts, err := migrations.Render(cfg)
	if err != nil {
		t.Fatal(err)
	}
	indexName := regexp.MustCompile(`INDEX IF NOT EXISTS "([^"]+)"`)
	seen := map[string]string{}
	for _, s := range stmts {
		m := indexName.FindStringSubmatch(s.SQL)
		if m == nil {
			continue
		}
		if len(m[1]) > 63 {
			t.Errorf("index name %q is %d bytes", m[1], len(m[1]))
		}
		if prev, dup := seen[m[1]]; dup {
			t.Errorf("index name %q used by %s and %s", m[1], prev, s.Migration)
		}
		seen[m[1]] = s.Migration
	}
	// Three per chunk table, three for the memory tables.
	if len(seen) != 9 {
		t.Errorf("found %d index names, want 9: %v", len(seen), seen)
	}
}

func TestConfigFromSettings(t *testing.T) {
	s := settings.Settings{
		PgvectorCollections: []string{"doc_chunks"}, PgvectorTenantColumn: "t", PgvectorIDColumn: "i",
		PgvectorContentColumn: "c", PgvectorEmbeddingColumn: "e", PgvectorSourceColumn: "s",
		PgvectorChunkIndexColumn: "x", PgvectorContentHashColumn: "h", PgvectorTsvectorColumn: "v",
		EmbeddingDimensions: 768, FTSLanguage: "german",
	}
	got := migrations.ConfigFromSettings(s)
	want := migrations.Columns{Tenant: "t", ID: "i", Content: "c", Embedding: "e", Source: "s", ChunkIndex: "x", ContentHash: "h", Tsvector: "v"}
	if got.Columns != want || got.Dimensions != 768 || got.Language != "german" || !got.Memory || !slices.Equal(got.Collections, []string{"doc_chunks"}) {
		t.Errorf("got %+v", got)
	}
}

// ---- against PostgreSQL with pgvector ----

var (
	sharedOnce sync.Once
	sharedConn *pgx.Conn
	sharedErr  error
)

// connect returns the connection every integration test here shares,
// opened once for the run. PGlite admits one connection at a time and
// handing its slot from one client to the next races (a refused client's
// cancel request then holds the slot for pgx's 15-second timeout), so the
// tests keep one connection rather than open one each.
func connect(t *testing.T) *pgx.Conn {
	t.Helper()
	dsn := pgtest.PgvectorDSN(t)
	sharedOnce.Do(func() {
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			sharedErr = fmt.Errorf("%s does not parse", pgtest.PgvectorDSNEnv)
			return
		}
		// Unnamed statements only: PGlite keeps named prepared statements
		// across connections, so a cached name from an earlier run collides.
		cfg.DefaultQueryExecMode = pgx.QueryExecModeDescribeExec
		// Another test process may hold the slot: wait for it.
		pgtest.Retry(pgtest.SlotWait, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			sharedConn, sharedErr = pgx.ConnectConfig(ctx, cfg)
			return sharedErr == nil
		})
	})
	if sharedErr != nil {
		t.Fatalf("connecting to %s: %v", pgtest.PgvectorDSNEnv, sharedErr)
	}
	return sharedConn
}

func suffix(t *testing.T) string {
	t.Helper()
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// TestIntegrationApplyIsIdempotent applies the chunk migration twice, then
// checks what the schema does: the generated tsvector, the vector width,
// the position index, and that a changed configuration is refused.
func TestIntegrationApplyIsIdempotent(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	table := "mt_chunks_" + suffix(t)
	t.Cleanup(func() {
		_, _ = c.Exec(context.Background(), "DROP TABLE IF EXISTS "+table)
		_, _ = c.Exec(context.Background(), "DELETE FROM "+migrations.BookkeepingTable+" WHERE migration = '001_chunks/"+table+"'")
	})
	cfg := migrations.Config{Collections: []string{table}, Columns: migrations.DefaultColumns(), Dimensions: 8}

	applied, _, err := migrations.Apply(ctx, c, cfg)
	if err != nil {
		t.Fatalf("first Apply: %v", err)
	}
	if !slices.Equal(applied, []string{"001_chunks/" + table}) {
		t.Errorf("first Apply applied %v", applied)
	}
	applied, _, err = migrations.Apply(ctx, c, cfg)
	if err != nil {
		t.Fatalf("second Apply: %v", err)
	}
	if len(applied) != 0 {
		t.Errorf("second Apply applied %v, want nothing", applied)
	}
	// Bookkeeping lost (say, the table predates it): the statements are
	// idempotent, so applying again only records them.
	if _, err := c.Exec(ctx, "DELETE FROM "+migrations.BookkeepingTable+" WHERE migration = $1", "001_chunks/"+table); err != nil {
		t.Fatal(err)
	}
	if applied, _, err = migrations.Apply(ctx, c, cfg); err != nil || len(applied) != 1 {
		t.Fatalf("Apply over an existing table without bookkeeping: %v, %v", applied, err)
	}

	// The schema works as the vector store expects.
	_, err = c.Exec(ctx, "INSERT INTO "+table+" (id, tenant, source, chunk_index, content, content_hash, embedding) VALUES ('a', 't', 's', 0, 'Refunds take thirty days', 'h', '[1,0,0,0,0,0,0,0]')")
	if err != nil {
		t.Fatal(err)
	}
	var matches bool
	if err := c.QueryRow(ctx, "SELECT content_tsv @@ websearch_to_tsquery('english', 'refund') FROM "+table+" WHERE id = 'a'").Scan(&matches); err != nil || !matches {
		t.Errorf("generated tsvector: %v, %v", matches, err)
	}
	var typ string
	if err := c.QueryRow(ctx, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '"+table+"'::regclass AND attname = 'embedding'").Scan(&typ); err != nil || typ != "vector(8)" {
		t.Errorf("embedding type %q, %v", typ, err)
	}
	_, err = c.Exec(ctx, "INSERT INTO "+table+" (id, tenant, source, chunk_index, content, content_hash, embedding) VALUES ('b', 't', 's', 0, 'x', 'h', '[1,0,0,0,0,0,0,0]')")
	var pe interface{ SQLState() string }
	if !errors.As(err, &pe) || pe.SQLState() != "23505" {
		t.Errorf("a second chunk at a held position: %v, want a unique violation", err)
	}
	var idx int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_indexes WHERE tablename = '"+table+"' AND indexdef LIKE '%hnsw%'").Scan(&idx); err != nil || idx != 1 {
		t.Errorf("HNSW indexes: %d, %v", idx, err)
	}

	// Another width for the same table is refused, not silently ignored.
	cfg.Dimensions = 16
	_, _, err = migrations.Apply(ctx, c, cfg)
	if !errors.Is(err, migrations.ErrChanged) {
		t.Errorf("Apply with other dimensions: %v, want ErrChanged", err)
	}
}

// TestIntegrationApplyRefusesATableOfAnotherWidth: a chunk table created
// outside Apply (an older schema file, say) with another vector width is
// not silently adopted.
func TestIntegrationApplyRefusesATableOfAnotherWidth(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	table := "mt_width_" + suffix(t)
	t.Cleanup(func() { _, _ = c.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) })
	if _, err := c.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector; CREATE TABLE "+table+" (id text PRIMARY KEY, tenant text, source text, chunk_index int, content text, content_hash text, content_tsv tsvector, embedding vector(4))"); err != nil {
		t.Fatal(err)
	}
	_, _, err := migrations.Apply(ctx, c, migrations.Config{Collections: []string{table}, Columns: migrations.DefaultColumns(), Dimensions: 8})
	if !errors.Is(err, migrations.ErrChanged) || !strings.Contains(err.Error(), "vector(4)") {
		t.Fatalf("got %v, want ErrChanged naming vector(4)", err)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM "+migrations.BookkeepingTable+" WHERE migration = $1", "001_chunks/"+table).Scan(&n); err != nil || n != 0 {
		t.Errorf("the refused migration was recorded (%d rows, %v)", n, err)
	}
}

// memoryTestDimensions is the embedding width every test that migrates the
// memory tables on the shared PGlite server uses.
const memoryTestDimensions = 8

// TestIntegrationApplyMemorySchema applies the memory tables with pgvector
// (shared by every test on the server, hence created once and checked, not
// dropped): the vector step is applied, and the embedding column is there.
func TestIntegrationApplyMemorySchema(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	cfg := migrations.Config{Columns: migrations.DefaultColumns(), Dimensions: memoryTestDimensions, Memory: true}
	if _, skipped, err := migrations.Apply(ctx, c, cfg); err != nil || len(skipped) != 0 {
		if errors.Is(err, migrations.ErrChanged) {
			t.Skip("the memory tables were migrated with another width on this server")
		}
		t.Fatalf("Apply: %v (skipped %v on a server with pgvector)", err, skipped)
	}
	if applied, skipped, err := migrations.Apply(ctx, c, cfg); err != nil || len(applied) != 0 || len(skipped) != 0 {
		t.Fatalf("second Apply: %v, %v, %v", applied, skipped, err)
	}
	owner := "owner-" + suffix(t)
	t.Cleanup(func() {
		_, _ = c.Exec(context.Background(), "DELETE FROM memories WHERE owner = $1", owner)
		_, _ = c.Exec(context.Background(), "DELETE FROM kv WHERE owner = $1", owner)
	})
	if _, err := c.Exec(ctx, `INSERT INTO memories (owner, namespace, id, content, content_hash, terms, created_at, updated_at,
written_by_tool, written_by_caller, written_at, embedding) VALUES ($1, 'ns', 'm1', 'remember', 'h', '{remember}', now(), now(),
'memory_store', $1, now(), '[1,0,0,0,0,0,0,0]')`, owner); err != nil {
		t.Fatalf("memory with an embedding: %v", err)
	}
	var typ string
	if err := c.QueryRow(ctx, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'memories'::regclass AND attname = 'embedding'").Scan(&typ); err != nil || typ != "vector(8)" {
		t.Errorf("embedding type %q, %v", typ, err)
	}
	var bookkept int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM "+migrations.BookkeepingTable+" WHERE migration IN ('002_memory', '002_memory_vector')").Scan(&bookkept); err != nil || bookkept != 2 {
		t.Errorf("bookkeeping holds %d memory migrations, %v", bookkept, err)
	}
}

// TestIntegrationApplyMemorySchemaWithoutPgvector migrates the memory
// tables on plain PostgreSQL 15, which does not offer the vector
// extension: the keyword tables are created and work, the vector step is
// skipped, not recorded and not attempted (the transaction would have
// aborted), and a second run is a no-op that skips it again.
func TestIntegrationApplyMemorySchemaWithoutPgvector(t *testing.T) {
	dsn := pgtest.PrivateSchema(t, pgtest.PostgresDSN(t))
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var offered bool
	if err := c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')").Scan(&offered); err != nil || offered {
		t.Fatalf("this test needs a PostgreSQL without pgvector (offered=%v, %v)", offered, err)
	}
	cfg := migrations.Config{Columns: migrations.DefaultColumns(), Dimensions: 384, Memory: true}
	applied, skipped, err := migrations.Apply(ctx, c, cfg)
	if err != nil || !slices.Equal(applied, []string{"002_memory"}) || !slices.Equal(skipped, []string{"002_memory_vector"}) {
		t.Fatalf("Apply: applied %v, skipped %v, %v", applied, skipped, err)
	}
	applied, skipped, err = migrations.Apply(ctx, c, cfg)
	if err != nil || len(applied) != 0 || !slices.Equal(skipped, []string{"002_memory_vector"}) {
		t.Fatalf("second Apply: applied %v, skipped %v, %v", applied, skipped, err)
	}
	var recorded []string
	rows, err := c.Query(ctx, "SELECT migration FROM "+migrations.BookkeepingTable+" ORDER BY migration")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			t.Fatal(err)
		}
		recorded = append(recorded, m)
	}
	if rows.Err() != nil || !slices.Equal(recorded, []string{"002_memory"}) {
		t.Fatalf("recorded %v (%v)", recorded, rows.Err())
	}
	for _, table := range []string{migrations.MemoriesTable, migrations.KVTable, migrations.MemoryOwnersTable} {
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped", table).Scan(&n); err != nil || n == 0 {
			t.Errorf("table %s: %d columns, %v", table, n, err)
		}
	}
	var hasEmbedding bool
	if err := c.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('memories') AND attname = 'embedding')").Scan(&hasEmbedding); err != nil || hasEmbedding {
		t.Errorf("embedding column on plain PostgreSQL: %v, %v", hasEmbedding, err)
	}
	// A NUL byte is content a caller may store: the column takes it.
	if _, err := c.Exec(ctx, `INSERT INTO memories (owner, namespace, id, content, content_hash, terms, created_at, updated_at,
written_by_tool, written_by_caller, written_at) VALUES ('o', 'ns', 'm1', $1, 'h', '{a}', now(), now(), 'memory_store', 'o', now())`, []byte("a\x00b")); err != nil {
		t.Fatalf("memory on plain PostgreSQL: %v", err)
	}
}

func TestIntegrationApplyUnknownLanguage(t *testing.T) {
	c := connect(t)
	table := "mt_lang_" + suffix(t)
	_, _, err := migrations.Apply(context.Background(), c, migrations.Config{Collections: []string{table}, Columns: migrations.DefaultColumns(), Dimensions: 8, Language: "klingon"})
	if !errors.Is(err, migrations.ErrApply) || !strings.Contains(err.Error(), "sqlstate 42704") || strings.Contains(err.Error(), "does not exist") {
		t.Errorf("got %v", err)
	}
	// The transaction rolled back: no table, no bookkeeping row.
	var n int
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM pg_tables WHERE tablename = '"+table+"'").Scan(&n); err != nil || n != 0 {
		t.Errorf("a failed Apply left %d tables (%v)", n, err)
	}
}
