package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/internal/pgtest"
	"github.com/arrowhead-go/arrowhead/migrations"
)

// TestMigrateAgainstPgvector applies the schema through the CLI twice on a
// real PostgreSQL with pgvector (PGlite in CI): the second run changes
// nothing.
func TestMigrateAgainstPgvector(t *testing.T) {
	dsn := pgtest.PgvectorDSN(t)
	t.Setenv("ARROWHEAD_VECTOR_WRITE_DSN", dsn)
	t.Setenv("ARROWHEAD_PGVECTOR_COLLECTIONS", "cli_migrate_chunks")
	t.Setenv("ARROWHEAD_EMBEDDING_DIMENSIONS", "8")
	var out1, out2, errb bytes.Buffer
	if code := migrateRetrying(t, &out1, &errb); code != exitOK {
		t.Fatalf("first migrate: %d %s", code, errb.String())
	}
	if code := migrateRetrying(t, &out2, &errb); code != exitOK {
		t.Fatalf("second migrate: %d %s", code, errb.String())
	}
	if !strings.Contains(out1.String()+out2.String(), "schema is current") {
		t.Fatalf("the second run was not a no-op:\n%s\n%s", out1.String(), out2.String())
	}
	if strings.Contains(errb.String(), dsn) {
		t.Fatal("an error printed the DSN")
	}
}

func TestMigrateNeedsATarget(t *testing.T) {
	t.Setenv("ARROWHEAD_PGVECTOR_COLLECTIONS", "")
	t.Setenv("ARROWHEAD_MEMORY_DSN", "")
	var out, errb bytes.Buffer
	if code := run([]string{"migrate"}, nil, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "nothing to migrate") {
		t.Fatalf("%d %s", code, errb.String())
	}
	t.Setenv("ARROWHEAD_PGVECTOR_COLLECTIONS", "doc_chunks")
	t.Setenv("ARROWHEAD_VECTOR_WRITE_DSN", "")
	errb.Reset()
	if code := run([]string{"migrate"}, nil, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), "ARROWHEAD_VECTOR_WRITE_DSN") {
		t.Fatalf("%d %s", code, errb.String())
	}
	out.Reset()
	if code := run([]string{"migrate", "--dry-run"}, nil, &out, &errb); code != exitOK || !strings.Contains(out.String(), "hnsw") {
		t.Fatalf("dry run: %d %s", code, out.String())
	}
}

// migrateRetrying runs migrate, retrying while the database refuses the
// connection: PGlite has a single backend, which another test binary may
// hold, and it refuses a reconnect that comes too soon after a close.
func migrateRetrying(t *testing.T, out, errb *bytes.Buffer) int {
	t.Helper()
	var code int
	pgtest.Retry(pgtest.SlotWait, func() bool {
		out.Reset()
		errb.Reset()
		code = run([]string{"migrate"}, nil, out, errb)
		return code == exitOK || !strings.Contains(errb.String(), "cannot be reached")
	})
	return code
}

// TestMigrateMemoryOnPlainPostgres runs migrate with ARROWHEAD_MEMORY_DSN
// on PostgreSQL 15 without pgvector: the keyword memory tables are applied,
// the embedding column is reported skipped, and a second run is current.
func TestMigrateMemoryOnPlainPostgres(t *testing.T) {
	dsn := pgtest.PrivateSchema(t, pgtest.PostgresDSN(t))
	t.Setenv("ARROWHEAD_MEMORY_DSN", dsn)
	t.Setenv("ARROWHEAD_PGVECTOR_COLLECTIONS", "")
	var out, errb bytes.Buffer
	if code := run([]string{"migrate"}, nil, &out, &errb); code != exitOK {
		t.Fatalf("migrate: %d %s", code, errb.String())
	}
	for _, want := range []string{"ARROWHEAD_MEMORY_DSN: applied 002_memory\n", "ARROWHEAD_MEMORY_DSN: skipped 002_memory_vector: the database does not offer the extension it requires\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("migrate printed %q, want it to contain %q", out.String(), want)
		}
	}
	out.Reset()
	if code := run([]string{"migrate"}, nil, &out, &errb); code != exitOK || !strings.Contains(out.String(), "schema is current") {
		t.Fatalf("second migrate: %d %q %s", code, out.String(), errb.String())
	}
	if strings.Contains(out.String()+errb.String(), dsn) {
		t.Fatal("migrate printed the DSN")
	}
}

// TestMigrateDryRunMarksTheConditionalStep: the dry run cannot know what
// the database offers, so it says which statements depend on it.
func TestMigrateDryRunMarksTheConditionalStep(t *testing.T) {
	t.Setenv("ARROWHEAD_PGVECTOR_COLLECTIONS", "")
	t.Setenv("ARROWHEAD_MEMORY_DSN", "postgres://u@127.0.0.1:1/db")
	var out, errb bytes.Buffer
	if code := run([]string{"migrate", "--dry-run"}, nil, &out, &errb); code != exitOK {
		t.Fatalf("dry run: %d %s", code, errb.String())
	}
	got := out.String()
	plain, vector, found := strings.Cut(got, "-- 002_memory_vector (applied only if the vector extension is available)\n")
	if !found || strings.Contains(plain, "vector") || !strings.Contains(vector, "CREATE EXTENSION IF NOT EXISTS vector;") {
		t.Fatalf("dry run output:\n%s", got)
	}
}

// TestMigrateStateAgainstPostgres applies the shared state tables through
// the CLI to a plain PostgreSQL 15 (no pgvector), twice.
func TestMigrateStateAgainstPostgres(t *testing.T) {
	dsn := pgtest.PrivateSchema(t, pgtest.PostgresDSN(t))
	t.Setenv("ARROWHEAD_PGVECTOR_COLLECTIONS", "")
	t.Setenv("ARROWHEAD_MEMORY_DSN", "")
	t.Setenv("ARROWHEAD_STATE_DSN", dsn)
	var out, errb bytes.Buffer
	if code := run([]string{"migrate"}, nil, &out, &errb); code != exitOK {
		t.Fatalf("first migrate: %d %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "ARROWHEAD_STATE_DSN: applied 003_state\n") || !strings.Contains(out.String(), "ARROWHEAD_STATE_DSN: applied river/001_") {
		t.Fatalf("first run:\n%s", out.String())
	}
	out.Reset()
	if code := run([]string{"migrate"}, nil, &out, &errb); code != exitOK || !strings.Contains(out.String(), "ARROWHEAD_STATE_DSN: schema is current") {
		t.Fatalf("second migrate: %d %s %s", code, out.String(), errb.String())
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var present bool
	for _, table := range []string{migrations.WorkingSetsTable, migrations.TasksTable, "river_job"} {
		if err := conn.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", table).Scan(&present); err != nil || !present {
			t.Fatalf("table %s is missing: %v", table, err)
		}
	}
}

func TestMigrateTargetsShareADatabase(t *testing.T) {
	s := settings.Settings{PgvectorCollections: []string{"doc_chunks"}, VectorWriteDSN: "postgres://u@h/a",
		MemoryDSN: "postgres://u@h/b", StateDSN: "postgres://u@h/b", EmbeddingDimensions: 8}
	targets := migrateTargets(s)
	if len(targets) != 2 {
		t.Fatalf("%d targets, want 2: %+v", len(targets), targets)
	}
	if c := targets[0].cfg; targets[0].variable != "ARROWHEAD_VECTOR_WRITE_DSN" || len(c.Collections) != 1 || c.Memory || c.State {
		t.Errorf("chunk target: %+v", targets[0])
	}
	if c := targets[1].cfg; targets[1].variable != "ARROWHEAD_MEMORY_DSN" || len(c.Collections) != 0 || !c.Memory || !c.State {
		t.Errorf("memory and state target: %+v", targets[1])
	}
	s.StateDSN = s.VectorWriteDSN
	if targets = migrateTargets(s); len(targets) != 2 || !targets[0].cfg.State || targets[1].cfg.State {
		t.Errorf("state with the chunks: %+v", targets)
	}
}

func TestMigrateDryRunShowsTheStateTables(t *testing.T) {
	t.Setenv("ARROWHEAD_PGVECTOR_COLLECTIONS", "")
	t.Setenv("ARROWHEAD_MEMORY_DSN", "")
	t.Setenv("ARROWHEAD_STATE_DSN", "postgres://u@127.0.0.1:1/db")
	var out, errb bytes.Buffer
	if code := run([]string{"migrate", "--dry-run"}, nil, &out, &errb); code != exitOK || !strings.Contains(out.String(), migrations.WorkingSetsTable) ||
		!strings.Contains(out.String(), "-- river/001_") {
		t.Fatalf("dry run: %d %s %s", code, out.String(), errb.String())
	}
}
