package postgres

// Benchmarks of the SQL runner against a real PostgreSQL (see
// testdb_test.go); they skip without one:
//
//	go test -run '^$' -bench SQLRunner ./adapters/postgres/

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
)

// benchStatement reads the three fixture rows with one bound parameter:
// the shape of a typical sql_query call.
const benchStatement = "SELECT id, name FROM fixture.items WHERE id >= $1 ORDER BY id"

// BenchmarkSQLRunnerQuery is one sql_query store call at a time: acquire a
// pooled connection, BEGIN READ ONLY, the SET LOCALs, the statement, the
// rows, ROLLBACK, release.
func BenchmarkSQLRunnerQuery(b *testing.B) {
	db := requireDB(b)
	r := runner(b, db.roDSN)
	mustQuery(b, r, benchStatement, defaultLimits, 1) // connect outside the timing
	b.ResetTimer()
	for b.Loop() {
		res, err := query(r, benchStatement, defaultLimits, 1)
		if err != nil || len(res.Rows) != 3 {
			b.Fatalf("query: %d rows, %v", len(res.Rows), err)
		}
	}
}

// BenchmarkSQLRunnerQueryParallel is the same from several goroutines
// sharing the runner's pool (DefaultMaxConns connections).
func BenchmarkSQLRunnerQueryParallel(b *testing.B) {
	db := requireDB(b)
	r := runner(b, db.roDSN)
	mustQuery(b, r, benchStatement, defaultLimits, 1)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := query(r, benchStatement, ports.SQLLimits{}, 1)
			if err != nil || len(res.Rows) != 3 {
				b.Errorf("query: %d rows, %v", len(res.Rows), err)
				return
			}
		}
	})
}
