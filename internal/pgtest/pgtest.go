// Package pgtest is what the tests that need PostgreSQL with pgvector share:
// finding the test database, and waiting for PGlite's connection slot.
//
// PGlite (see .ci/pglite.sh) admits one connection at a time, so a test
// binary keeps one connection for its whole run, and another binary that
// runs at the same time (go test without -p 1) is refused until the first
// one exits. Nothing announces that the slot came free: the only way to
// know is to connect, so Retry backs off instead of polling at a fixed
// rate.
package pgtest

import (
	"os"
	"testing"
	"time"
)

const (
	// PgvectorDSNEnv names a database with the vector extension available.
	PgvectorDSNEnv = "ARROWHEAD_TEST_PGVECTOR_DSN"
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
	dsn := os.Getenv(PgvectorDSNEnv)
	if dsn != "" {
		return dsn
	}
	msg := PgvectorDSNEnv + " is not set"
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("INTEGRATION REQUIRED (%s=1) but unavailable: %s", RequireEnv, msg)
	}
	t.Skipf("\n*** SKIPPING PGVECTOR INTEGRATION TEST %s: %s\n*** Start PGlite with pgvector (it exports %s): eval \"$(.ci/pglite.sh start /tmp/ahpglite 54329)\"\n*** Set %s=1 to make this a failure.",
		t.Name(), msg, PgvectorDSNEnv, RequireEnv)
	return ""
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
