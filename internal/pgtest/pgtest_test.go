package pgtest

import (
	"testing"
	"time"
)

func TestRetryStopsWhenDone(t *testing.T) {
	calls := 0
	if !Retry(time.Minute, func() bool { calls++; return calls == 4 }) {
		t.Fatal("Retry reported not done")
	}
	if calls != 4 {
		t.Fatalf("try ran %d times, want 4", calls)
	}
}

func TestRetryGivesUpAtTheDeadline(t *testing.T) {
	calls := 0
	if Retry(0, func() bool { calls++; return false }) {
		t.Fatal("Retry reported done")
	}
	if calls != 1 {
		t.Fatalf("try ran %d times past a deadline already reached, want 1", calls)
	}
}

func TestPgvectorDSNFromTheEnvironment(t *testing.T) {
	t.Setenv(PgvectorDSNEnv, "postgres://u@h/db")
	if got := PgvectorDSN(t); got != "postgres://u@h/db" {
		t.Fatalf("PgvectorDSN = %q", got)
	}
}
