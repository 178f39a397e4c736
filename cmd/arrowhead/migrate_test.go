package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/internal/pgtest"
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
