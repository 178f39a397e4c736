package postgres

// BenchmarkSQLRunnerVsDirect100Rows compares one sql_query store call
// returning 100 rows with the same statement on a persistent pgx
// connection straight to PostgreSQL, interleaved call by call so both see
// the same machine load. It reports each side's median and their ratio:
//
//	go test -run '^$' -bench SQLRunnerVsDirect -benchtime 2000x ./adapters/postgres/

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/ports"
)

const hundredRows = "select g, 'row ' || g as label from generate_series(1, $1::int) g"

func BenchmarkSQLRunnerVsDirect100Rows(b *testing.B) {
	db := requireDB(b)
	r := runner(b, db.roDSN, WithMaxConns(1))
	ctx := context.Background()
	direct, err := pgx.Connect(ctx, db.roDSN)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close(ctx)
	runDirect := func() {
		rows, err := direct.Query(ctx, hundredRows, 100)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for rows.Next() {
			_ = rows.RawValues()
			n++
		}
		if rows.Close(); rows.Err() != nil || n != 100 {
			b.Fatalf("direct: %d rows, %v", n, rows.Err())
		}
	}
	// The store call alone, as sql_query makes it; its cells are checked
	// once, outside the timing.
	q, args := ports.VettedQuery{SQL: hundredRows, Params: []string{"n"}}, []any{100}
	runRunner := func() {
		res, err := r.Query(ctx, q, args, ports.SQLLimits{})
		if err != nil || len(res.Rows) != 100 {
			b.Fatalf("runner: %d rows, %v", len(res.Rows), err)
		}
	}
	runDirect()
	if res := mustQuery(b, r, hundredRows, ports.SQLLimits{}, 100); len(res.Rows) != 100 || res.Rows[99][1] != "row 100" {
		b.Fatalf("runner: %v", res.Rows)
	}
	var dr, rr []time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		runRunner()
		t1 := time.Now()
		runDirect()
		dr, rr = append(dr, time.Since(t1)), append(rr, t1.Sub(t0))
	}
	b.StopTimer()
	slices.Sort(dr)
	slices.Sort(rr)
	pd, pr := dr[len(dr)/2], rr[len(rr)/2]
	b.ReportMetric(float64(pr.Microseconds())/1000, "runner-p50-ms")
	b.ReportMetric(float64(pd.Microseconds())/1000, "direct-p50-ms")
	b.ReportMetric(float64(pr)/float64(pd), "ratio")
}
