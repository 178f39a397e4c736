// Package pgtest is what the tests that need PostgreSQL share: finding the
// test databases (plain PostgreSQL 15, and PostgreSQL with pgvector), and
// waiting for PGlite's connection slot.
//
// PGlite (see .ci/pglite.sh) admits one connection at a time, so a test
// binary keeps one connection for its whole run, and another binary that
// runs at the same time (go test without -p 1) is refused until the first
// one exits. Nothing announces that the slot came free: the only way to
// know is to connect, so Retry backs off instead of polling at a fixed
// rate.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// PgvectorDSNEnv names a database with the vector extension available.
	PgvectorDSNEnv = "ARROWHEAD_TEST_PGVECTOR_DSN"
	// PostgresDSNEnv names a superuser DSN of a plain PostgreSQL 15, without
	// pgvector (.ci/postgres.sh exports it).
	PostgresDSNEnv = "ARROWHEAD_TEST_POSTGRES_DSN"
	// RequireEnv turns a missing database into a failure (.ci/run sets it).
	RequireEnv = "ARROWHEAD_REQUIRE_INTEGRATION"
	// SlotWait bounds the wait for PGlite's connection slot, which another
	// test binary may hold for its whole run.
	SlotWait = 3 * time.Minute

	// firstPause and maxPause bound Retry's backoff: a slot freed soon is
	// taken soon, and a server busy for minutes is asked about once a
	// second, as often as before the backoff.
	firstPause = 50 * time.Millisecond
	maxPause   = time.Second
)

// PgvectorDSN returns the DSN of the test database with pgvector, or skips
// the test with a loud message (fails it under
// ARROWHEAD_REQUIRE_INTEGRATION=1) when none is configured.
func PgvectorDSN(t testing.TB) string {
	t.Helper()
	return dsnFromEnv(t, PgvectorDSNEnv, "PGVECTOR", "Start PGlite with pgvector", ".ci/pglite.sh start /tmp/ahpglite 54329")
}

// PostgresDSN returns the superuser DSN of the plain PostgreSQL test
// database, or skips the test with a loud message (fails it under
// ARROWHEAD_REQUIRE_INTEGRATION=1) when none is configured.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	return dsnFromEnv(t, PostgresDSNEnv, "POSTGRES", "Start PostgreSQL 15", ".ci/postgres.sh start /tmp/ahpg 55432")
}

// dsnFromEnv returns the variable env, or skips (fails) naming what to
// start and how.
func dsnFromEnv(t testing.TB, env, what, start, command string) string {
	t.Helper()
	dsn := os.Getenv(env)
	if dsn != "" {
		return dsn
	}
	msg := env + " is not set"
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("INTEGRATION REQUIRED (%s=1) but unavailable: %s", RequireEnv, msg)
	}
	t.Skipf("\n*** SKIPPING %s INTEGRATION TEST %s: %s\n*** %s (it exports %s): eval \"$(%s)\"\n*** Set %s=1 to make this a failure.",
		what, t.Name(), msg, start, env, command, RequireEnv)
	return ""
}

// PrivateSchema creates a schema of its own for the test in the database
// of the superuser dsn, drops it (and everything in it) when the test
// ends, and returns dsn with that schema as its search_path: the tables a
// test migrates and fills there are invisible to every other test.
func PrivateSchema(t testing.TB, dsn string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "t_" + hex.EncodeToString(b[:])
	exec := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		_, err = c.Exec(ctx, sql)
		return err
	}
	if err := exec("CREATE SCHEMA " + name); err != nil {
		t.Fatalf("creating a private schema with %s: %v", PostgresDSNEnv, err)
	}
	t.Cleanup(func() {
		if err := exec("DROP SCHEMA " + name + " CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", name, err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s is not a URL", PostgresDSNEnv)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// Retry calls try until it reports done or wait has passed, and reports
// whether it was done. Between attempts it pauses 50 ms, doubling up to a
// second, never past the deadline.
func Retry(wait time.Duration, try func() (done bool)) bool {
	deadline := time.Now().Add(wait)
	pause := firstPause
	for !try() {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, maxPause)
	}
	return true
}
