package postgres_test

// The SQL runner's one-round-trip pipeline on PGlite (PostgreSQL 18 in
// WASM behind pglite-socket), whose single backend outlives connections:
// nothing a query sets may reach the next one.

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/ports"
)

func TestIntegrationPGliteSQLRunner(t *testing.T) {
	r, err := postgres.NewSQLRunner(testPool(t))
	if err != nil {
		t.Fatal(err)
	}
	type result struct{ Rows [][]any }
	run := func(sql string, lim ports.SQLLimits, args ...any) (result, error) {
		q := ports.VettedQuery{SQL: sql}
		for range args {
			q.Params = append(q.Params, "p")
		}
		res, err := r.Query(context.Background(), q, args, lim)
		if err != nil {
			return result{}, err
		}
		rows, err := postgres.CellValues(res.Rows)
		if err != nil {
			t.Fatal(err)
		}
		return result{rows}, nil
	}
	kind := func(err error) ports.SQLErrorKind {
		var se *ports.SQLError
		if !errors.As(err, &se) {
			t.Fatalf("error %v is not a *ports.SQLError", err)
		}
		return se.Kind
	}
	lim := ports.SQLLimits{Timeout: 5 * time.Second}

	res, err := run("select current_setting('transaction_read_only'), current_setting('statement_timeout'), current_setting('temp_file_limit'), current_setting('work_mem'), $1::int + 1, 'x' || $2",
		lim, json.Number("41"), "'; drop table t; --")
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]any{{"on", "5s", "64MB", "16MB", json.Number("42"), "x'; drop table t; --"}}; !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("rows = %v, want %v", res.Rows, want)
	}

	// A session-level setting made inside the statement is rolled back.
	if _, err := run("select set_config('search_path', 'nowhere', false)", lim); err != nil {
		t.Fatal(err)
	}
	res, err = run("select current_setting('search_path'), current_setting('work_mem')", ports.SQLLimits{WorkMemBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Rows[0][0]; got == "nowhere" {
		t.Errorf("search_path set by an earlier query survived it: %v", res.Rows)
	}

	// No statement timeout case: the WASM backend has no timer signal, so
	// only the in-process deadline ends a long statement there, by closing
	// the one connection PGlite admits.
	for _, tc := range []struct {
		sql  string
		lim  ports.SQLLimits
		want ports.SQLErrorKind
	}{
		{"create table t (x int)", lim, ports.SQLRejected},
		{"select 1; select 2", lim, ports.SQLInvalid},
		{`with recursive r(n, pad) as (select 1, repeat('x', 200) union all select n + 1, pad from r where n < 100000)
select n from r order by pad, n desc limit 1`, ports.SQLLimits{Timeout: 20 * time.Second, TempFileBytes: 1 << 20, WorkMemBytes: 64 << 10}, ports.SQLTempFiles},
	} {
		_, err := run(tc.sql, tc.lim)
		if got := kind(err); got != tc.want {
			t.Errorf("%.40q: kind %q, want %q (cause: %v)", tc.sql, got, tc.want, errors.Unwrap(err))
		}
	}
	// The connection still serves queries, outside any transaction.
	res, err = run("select 1 as one", lim)
	if err != nil || !reflect.DeepEqual(res.Rows, [][]any{{json.Number("1")}}) {
		t.Fatalf("after the refusals: %v, %v", res.Rows, err)
	}
}
