package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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

func TestPrivateServerStopsStartsAndFreezes(t *testing.T) {
	s := StartServer(t)
	ping := func(wait time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		c, err := pgx.Connect(ctx, s.DSN())
		if err != nil {
			return err
		}
		defer c.Close(context.Background())
		return c.Ping(ctx)
	}
	if err := ping(5 * time.Second); err != nil {
		t.Fatalf("a started server does not answer: %v", err)
	}
	s.Freeze()
	if err := ping(300 * time.Millisecond); err == nil {
		t.Fatal("a frozen server answered")
	}
	s.Thaw()
	if err := ping(5 * time.Second); err != nil {
		t.Fatalf("a thawed server does not answer: %v", err)
	}
	s.Stop()
	if err := ping(time.Second); err == nil {
		t.Fatal("a stopped server answered")
	}
	s.Start()
	if err := ping(5 * time.Second); err != nil {
		t.Fatalf("a restarted server does not answer: %v", err)
	}
}
