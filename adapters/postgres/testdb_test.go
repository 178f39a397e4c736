package postgres

// Helpers for the tests that need a real PostgreSQL. Start one with
//
//	eval "$(.ci/postgres.sh start /tmp/ahpg 55432)"
//
// which exports the two DSNs below; stop it with .ci/postgres.sh stop /tmp/ahpg.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/ports"
)

const (
	// envDSN is a superuser DSN, used to create fixtures.
	envDSN = "ARROWHEAD_TEST_POSTGRES_DSN"
	// envRODSN is the DSN of a read-only role (LOGIN,
	// default_transaction_read_only on, SELECT on schema fixture only).
	envRODSN = "ARROWHEAD_TEST_POSTGRES_RO_DSN"
	// envRequire turns a missing database into a failure (.ci/run sets it).
	envRequire = "ARROWHEAD_REQUIRE_INTEGRATION"

	// adminTimeout bounds one fixture statement.
	adminTimeout = 30 * time.Second
)

// testDB is the database the integration tests run against.
type testDB struct {
	dsn   string // superuser
	roDSN string // read-only role
	ro    string // the read-only role's name
}

// skipOrFail skips the test with a loud message, or fails it when
// integration tests are required.
func skipOrFail(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv(envRequire) == "1" {
		t.Fatalf("INTEGRATION REQUIRED (%s=1) but unavailable: %s", envRequire, msg)
	}
	t.Skipf("\n*** SKIPPING POSTGRES INTEGRATION TEST %s: %s\n*** Start one with: eval \"$(.ci/postgres.sh start /tmp/ahpg 55432)\"\n*** Set %s=1 to make this a failure.",
		t.Name(), msg, envRequire)
}

// requireDB returns the database from the environment, or skips (fails
// under ARROWHEAD_REQUIRE_INTEGRATION=1) when it is not configured. A
// configured database that does not answer is a failure.
func requireDB(t testing.TB) testDB {
	t.Helper()
	db := testDB{dsn: os.Getenv(envDSN), roDSN: os.Getenv(envRODSN)}
	if db.dsn == "" || db.roDSN == "" {
		skipOrFail(t, envDSN+" and "+envRODSN+" are not both set")
	}
	u, err := url.Parse(db.roDSN)
	if err != nil || u.User == nil || u.User.Username() == "" {
		t.Fatalf("%s must be a URL naming its user", envRODSN)
	}
	db.ro = u.User.Username()
	c := db.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("the database in %s does not answer: %v", envDSN, err)
	}
	return db
}

// admin returns a superuser connection closed when the test ends.
func (db testDB) admin(t testing.TB) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	c, err := pgx.Connect(ctx, db.dsn)
	if err != nil {
		t.Fatalf("connecting with %s: %v", envDSN, err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

// exec runs fixture SQL as the superuser.
func (db testDB) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	c := db.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("fixture SQL failed: %v\n%s", err, sql)
	}
}

// schema creates a schema private to the test, readable by the read-only
// role, and drops it when the test ends. setup runs in it as the superuser
// (its tables, types and rows).
func (db testDB) schema(t testing.TB, setup string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "t_" + hex.EncodeToString(b[:])
	ro := pgx.Identifier{db.ro}.Sanitize()
	db.exec(t, fmt.Sprintf("CREATE SCHEMA %s; GRANT USAGE ON SCHEMA %s TO %s", name, name, ro))
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), db.dsn)
		if err != nil {
			t.Errorf("dropping schema %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", name, err)
		}
	})
	if setup != "" {
		db.exec(t, "SET search_path = "+name+"; "+setup+"; GRANT SELECT ON ALL TABLES IN SCHEMA "+name+" TO "+ro)
	}
	return name
}

// withParams returns dsn with the query parameters kv (name, value, ...)
// set: pgx sends unknown ones to the server as session settings.
func withParams(t testing.TB, dsn string, kv ...string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal("unparsable test DSN")
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// runner returns a runner on a pool of its own over dsn, closed when the
// test ends.
func runner(t testing.TB, dsn string, opts ...Option) *SQLRunner {
	t.Helper()
	pool, err := NewPool(context.Background(), dsn, opts...)
	if err != nil {
		t.Fatalf("NewPool: %v", err)
	}
	t.Cleanup(pool.Close)
	r, err := NewSQLRunner(pool)
	if err != nil {
		t.Fatalf("NewSQLRunner: %v", err)
	}
	return r
}

// execBehind runs sql on one of r's pooled connections outside the
// runner, as another client of the session (a pooler, DISCARD ALL) would,
// and returns the connection to the pool.
func execBehind(t testing.TB, r *SQLRunner, sql string) {
	t.Helper()
	c, err := r.pool.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if _, err := c.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}

// result is a ports.SQLResult with its cells decoded (cellValues), the
// form the tests state their expectations in.
type result struct {
	Columns   []string
	Rows      [][]any
	Truncated []string
}

// query runs sql with args through r under lim; the statement's parameter
// names are invented, one per argument.
func query(r *SQLRunner, sql string, lim ports.SQLLimits, args ...any) (result, error) {
	return queryCtx(context.Background(), r, sql, lim, args...)
}

// queryCtx is query under ctx. Every cell is checked to be the JSON
// encoding/json writes for its value; a cell that is not panics, which
// fails the test or benchmark that ran it.
func queryCtx(ctx context.Context, r *SQLRunner, sql string, lim ports.SQLLimits, args ...any) (result, error) {
	q := ports.VettedQuery{SQL: sql}
	for i := range args {
		q.Params = append(q.Params, fmt.Sprintf("p%d", i+1))
	}
	res, err := r.Query(ctx, q, args, lim)
	if err != nil {
		return result{}, err
	}
	rows, err := cellValues(res.Rows)
	if err != nil {
		panic(err)
	}
	return result{Columns: res.Columns, Rows: rows, Truncated: res.Truncated}, nil
}

// mustQuery is query that fails the test on error.
func mustQuery(t testing.TB, r *SQLRunner, sql string, lim ports.SQLLimits, args ...any) result {
	t.Helper()
	res, err := query(r, sql, lim, args...)
	if err != nil {
		t.Fatalf("query failed: %v (cause: %v)\n%s", err, errors.Unwrap(err), sql)
	}
	return res
}

// wantSQLError checks that err is a *ports.SQLError of kind whose text is
// the fixed "sql <kind>": no driver text, statement, value or DSN.
func wantSQLError(t testing.TB, err error, kind ports.SQLErrorKind) *ports.SQLError {
	t.Helper()
	var se *ports.SQLError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T) is not a *ports.SQLError", err, err)
	}
	if se.Kind != kind {
		t.Fatalf("kind = %q, want %q (cause: %v)", se.Kind, kind, se.Err)
	}
	if got, want := err.Error(), "sql "+string(kind); got != want {
		t.Fatalf("error text = %q, want %q", got, want)
	}
	return se
}
