package postgres

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestIntegrationPreparedStatementLost drops the connection's prepared
// statements behind the runner's back (as a transaction pooler or DISCARD
// ALL would): the call still answers, and the runner goes on with unnamed
// statements.
func TestIntegrationPreparedStatementLost(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN, WithMaxConns(1))
	const sql = "select id from fixture.items where id >= $1 order by id"
	mustQuery(t, r, sql, defaultLimits, 1)
	execBehind(t, r, "DEALLOCATE ALL")
	if res := mustQuery(t, r, sql, defaultLimits, 1); len(res.Rows) != 3 {
		t.Fatalf("%d rows after the statements were lost", len(res.Rows))
	}
	if !r.unnamed.Load() {
		t.Error("the runner still names its statements on a server that loses them")
	}
	if res := mustQuery(t, r, sql, defaultLimits, 2); len(res.Rows) != 2 {
		t.Fatalf("%d rows unnamed", len(res.Rows))
	}
}

// TestIntegrationPreparedStatementReplannedAfterATableChanges reads a
// table, changes its columns and reads it again on the same connection:
// the second read has the new shape (PostgreSQL refuses a cached plan
// whose result type changed; the runner prepares it again).
func TestIntegrationPreparedStatementReplannedAfterATableChanges(t *testing.T) {
	db := requireDB(t)
	schema := db.schema(t, "CREATE TABLE shape (a int); INSERT INTO shape VALUES (1)")
	r := runner(t, db.roDSN, WithMaxConns(1))
	sql := "select * from " + schema + ".shape"
	if res := mustQuery(t, r, sql, defaultLimits); !slices.Equal(res.Columns, []string{"a"}) {
		t.Fatalf("columns %v", res.Columns)
	}
	db.exec(t, "ALTER TABLE "+schema+".shape ADD COLUMN b text DEFAULT 'x'")
	res := mustQuery(t, r, sql, defaultLimits)
	if !slices.Equal(res.Columns, []string{"a", "b"}) || len(res.Rows) != 1 || res.Rows[0][1] != "x" {
		t.Fatalf("after the change: columns %v rows %v", res.Columns, res.Rows)
	}
	if r.unnamed.Load() {
		t.Error("a changed plan turned named statements off")
	}
}

// TestIntegrationPreparedStatementsAreBounded runs more distinct
// statements than a connection keeps prepared: the server holds at most
// the cache's worth (plus the settings).
func TestIntegrationPreparedStatementsAreBounded(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN, WithMaxConns(1))
	last := ""
	for i := range stmtCacheSize + 10 {
		last = "select " + strconv.Itoa(i) + " as n"
		mustQuery(t, r, last, defaultLimits)
	}
	// An evicted statement is deallocated with the next call.
	mustQuery(t, r, last, defaultLimits)
	c, err := r.pool.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	var n int
	if err := c.QueryRow(t.Context(), "select count(*) from pg_prepared_statements where name like 'arrowhead_%'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != stmtCacheSize+3 {
		t.Errorf("%d statements prepared on the connection, want %d, BEGIN, ROLLBACK and the settings", n, stmtCacheSize)
	}
}

// TestIntegrationClosedConnectionReleasesItsStatements closes a pool whose
// connection holds the runner's statements: they are deallocated, in one
// turn of Close messages and a Sync, before the connection goes (on
// PGlite, whose one backend outlives every connection, they would stay).
func TestIntegrationClosedConnectionReleasesItsStatements(t *testing.T) {
	db := requireDB(t)
	p, dsn := proxied(t, db.roDSN)
	pool, err := NewPool(context.Background(), dsn, WithMaxConns(1))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewSQLRunner(pool)
	if err != nil {
		t.Fatal(err)
	}
	mustQuery(t, r, "select 1", defaultLimits)
	mustQuery(t, r, "select 2", defaultLimits)
	m := p.mark()
	pool.Close()
	// BEGIN, ROLLBACK, the settings and both statements.
	want := []string{"CCCCCS"}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := p.since(m, true)
		if len(got) > 0 && got[len(got)-1] == "X" {
			got = got[:len(got)-1]
		}
		if slices.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("client turns while closing = %q, want %q then Terminate", p.since(m, true), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
