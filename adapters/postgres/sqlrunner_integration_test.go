package postgres

// The SQL runner against a real PostgreSQL (see testdb_test.go). Without
// ARROWHEAD_TEST_POSTGRES_DSN and ARROWHEAD_TEST_POSTGRES_RO_DSN these skip
// loudly, or fail under ARROWHEAD_REQUIRE_INTEGRATION=1.

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arrowhead-go/arrowhead/ports"
)

// correctnessBound is how long an interrupted query may take to come back.
// The queries involved would run for at least five seconds if nothing
// interrupted them; this is a correctness check, not a performance budget.
const correctnessBound = 3 * time.Second

var defaultLimits = ports.SQLLimits{}

// mappingCases are SQL expressions and the JSON-ready value each must come
// back as. They run both as the read-only role and under hostile session
// defaults.
var mappingCases = []struct {
	expr string
	want any
}{
	{"true", true},
	{"false", false},
	{"null::int4", nil},
	{"null::text", nil},
	{"(-32768)::int2", num("-32768")},
	{"42::int4", num("42")},
	{"9223372036854775807::int8", num("9223372036854775807")},
	{"12345::oid", num("12345")},
	{"1.5::float4", num("1.5")},
	{"0.1::float8", num("0.1")},
	{"1e300::float8", num("1e+300")},
	{"'-0'::float8", num("-0")},
	{"'NaN'::float8", "NaN"},
	{"'Infinity'::float8", "Infinity"},
	{"'-Infinity'::float4", "-Infinity"},
	{"123.4500::numeric", num("123.4500")},
	{"123456789012345678901234567890.000000000000000000001::numeric", num("123456789012345678901234567890.000000000000000000001")},
	{"'NaN'::numeric", "NaN"},
	{"'-Infinity'::numeric", "-Infinity"},
	{"'héllo, wörld ✓'::text", "héllo, wörld ✓"},
	{"''::text", ""},
	{"'ab'::char(4)", "ab  "},
	{"'x'::varchar(3)", "x"},
	{"'pg'::name", "pg"},
	{"'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
	{`'\x00ff10'::bytea`, `\x00ff10`},
	{"''::bytea", `\x`},
	{`'{"a": [1, 2.50, 12345678901234567890], "b": null, "c": "x", "d": {"e": true}}'::jsonb`,
		map[string]any{"a": []any{num("1"), num("2.50"), num("12345678901234567890")}, "b": nil, "c": "x", "d": map[string]any{"e": true}}},
	{`'[1, "two", null]'::json`, []any{num("1"), "two", nil}},
	{`'"scalar"'::jsonb`, "scalar"},
	{"'2024-02-29'::date", "2024-02-29"},
	{"'infinity'::date", "infinity"},
	{"'0044-03-15 BC'::date", "0044-03-15 BC"},
	{"'2024-01-02 03:04:05.123456+02'::timestamptz", "2024-01-02T01:04:05.123456Z"},
	{"'2024-01-02 03:04:05+00'::timestamptz", "2024-01-02T03:04:05Z"},
	{"'-infinity'::timestamptz", "-infinity"},
	{"'2024-01-02 03:04:05.5'::timestamp", "2024-01-02T03:04:05.5"},
	{"'10000-01-01'::timestamp", "10000-01-01 00:00:00"},
	{"'13:14:15'::time", "13:14:15"},
	{"'13:14:15+02'::timetz", "13:14:15+02"},
	{"'1 year 2 months 3 days 4 hours 5 minutes 6 seconds'::interval", "1 year 2 mons 3 days 04:05:06"},
	{"'10.0.0.1/8'::inet", "10.0.0.1/8"},
	{"'[1,5)'::int4range", "[1,5)"},
	{"1.5::money", "$1.50"},
	{"point(1, 2)", "(1,2)"},
	{"row(1, 'a b')", `(1,"a b")`},
	{"array[1, 2, null]::int4[]", []any{num("1"), num("2"), nil}},
	{"'{{1,2},{3,4}}'::int4[]", []any{[]any{num("1"), num("2")}, []any{num("3"), num("4")}}},
	{"'[0:1]={7,8}'::int4[]", []any{num("7"), num("8")}},
	{"'{}'::text[]", []any{}},
	{`array['a b', 'c"d', 'e\f', 'NULL', null, '', '{x}', 'plain']`, []any{"a b", `c"d`, `e\f`, "NULL", nil, "", "{x}", "plain"}},
	{"array[true, false]", []any{true, false}},
	{"array[1.50, 'NaN']::numeric[]", []any{num("1.50"), "NaN"}},
	{"array[1.5, 'Infinity']::float8[]", []any{num("1.5"), "Infinity"}},
	{"array['2024-01-02 03:04:05+00'::timestamptz, null]", []any{"2024-01-02T03:04:05Z", nil}},
	{"array['2024-02-29'::date]", []any{"2024-02-29"}},
	{`array['{"a": 1}'::jsonb, '[true]']`, []any{map[string]any{"a": num("1")}, []any{true}}},
	{`array['\x01'::bytea, ''::bytea]`, []any{`\x01`, `\x`}},
	{"array['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid]", []any{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}},
	{"array['1 day'::interval]", []any{"1 day"}},
	// Types this schema defines: the server describes an enum, its array
	// and a composite by their own OIDs (text form); a domain by its base
	// type.
	{"'happy'::mood", "happy"},
	{"array['happy', 'sad']::mood[]", "{happy,sad}"},
	{"7::small_int", num("7")},
	{"row(1, 'x')::pair", "(1,x)"},
}

const mappingSchema = `CREATE TYPE mood AS ENUM ('happy', 'sad');
CREATE DOMAIN small_int AS int4 CHECK (VALUE < 100);
CREATE TYPE pair AS (a int4, b text)`

func checkMappings(t *testing.T, r *SQLRunner) {
	t.Helper()
	for _, tt := range mappingCases {
		res, err := query(r, "select "+tt.expr+" as v", defaultLimits)
		if err != nil {
			t.Errorf("select %s: %v (cause: %v)", tt.expr, err, errors.Unwrap(err))
			continue
		}
		if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
			t.Errorf("select %s: rows = %v", tt.expr, res.Rows)
			continue
		}
		if got := res.Rows[0][0]; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("select %s = %#v, want %#v", tt.expr, got, tt.want)
		}
		if _, err := json.Marshal(res.Rows); err != nil {
			t.Errorf("select %s: the value does not marshal to JSON: %v", tt.expr, err)
		}
	}
}

func TestIntegrationTypeMapping(t *testing.T) {
	db := requireDB(t)
	s := db.schema(t, mappingSchema)
	r := runner(t, withParams(t, db.roDSN, "search_path", s))
	checkMappings(t, r)
}

// TestIntegrationTypeMappingIgnoresSessionDefaults runs the mappings with
// every setting that shapes the text form set to something else for the
// session: the runner's SET LOCAL must win.
func TestIntegrationTypeMappingIgnoresSessionDefaults(t *testing.T) {
	db := requireDB(t)
	s := db.schema(t, mappingSchema)
	r := runner(t, withParams(t, db.dsn,
		"search_path", s,
		"DateStyle", "SQL,DMY",
		"IntervalStyle", "iso_8601",
		"TimeZone", "Asia/Kolkata",
		"bytea_output", "escape",
		"extra_float_digits", "-3",
	))
	checkMappings(t, r)
}

// TestIntegrationTypeMappingFollowsTheSession changes, between two calls on
// one connection, the session's settings that PostgreSQL reports: the
// runner leaves out those the session already has, so it must see the
// change and set them again.
func TestIntegrationTypeMappingFollowsTheSession(t *testing.T) {
	db := requireDB(t)
	s := db.schema(t, mappingSchema)
	r := runner(t, withParams(t, db.dsn, "search_path", s), WithMaxConns(1))
	res := mustQuery(t, r, "select current_setting('DateStyle') as d, current_setting('TimeZone') as z", defaultLimits)
	if res.Rows[0][0] != "ISO, MDY" || (res.Rows[0][1] != "UTC" && res.Rows[0][1] != "Etc/UTC") {
		t.Fatalf("settings in a call: %v", res.Rows)
	}
	execBehind(t, r, "SET DateStyle = 'SQL, DMY'; SET IntervalStyle = 'iso_8601'; SET TimeZone = 'Asia/Kolkata'")
	checkMappings(t, r)
}

func TestIntegrationTransactionSettings(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN)
	const settings = "select current_setting('transaction_read_only'), current_setting('statement_timeout'), current_setting('application_name'), current_user, current_setting('temp_file_limit'), current_setting('work_mem')"
	res := mustQuery(t, r, settings, ports.SQLLimits{Timeout: 1500 * time.Millisecond})
	want := [][]any{{"on", "1500ms", ApplicationName, db.ro, "64MB", "16MB"}}
	if !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("settings = %v, want %v", res.Rows, want)
	}
	res = mustQuery(t, r, settings, ports.SQLLimits{Timeout: time.Second, TempFileBytes: 3 << 20, WorkMemBytes: 100 << 10})
	want = [][]any{{"on", "1s", ApplicationName, db.ro, "3MB", "100kB"}}
	if !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("settings = %v, want %v", res.Rows, want)
	}
}

// spillQuery is the statement that filled the disk before temp_file_limit
// was set: a recursive CTE under ORDER BY, whose sort spills to temporary
// files once it outgrows work_mem (about 40 MB of them here).
const spillQuery = `with recursive r(n, pad) as (
  select 1, repeat('x', 200)
  union all
  select n + 1, pad from r where n < 200000
) select n from r order by pad, n desc limit 1`

func TestIntegrationTempFileLimitRefuses(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN, WithMaxConns(1))
	_, err := query(r, spillQuery, ports.SQLLimits{Timeout: 20 * time.Second, TempFileBytes: 1 << 20, WorkMemBytes: 64 << 10})
	se := wantSQLError(t, err, ports.SQLTempFiles)
	var pe *pgconn.PgError
	if !errors.As(se.Err, &pe) || pe.Code != "53400" {
		t.Errorf("cause = %v, want the server's 53400 temp_file_limit", se.Err)
	}
	// The same statement fits when the limit allows it, and the
	// connection survived the refusal.
	res := mustQuery(t, r, spillQuery, ports.SQLLimits{Timeout: 20 * time.Second, TempFileBytes: 256 << 20, WorkMemBytes: 64 << 10})
	if want := [][]any{{num("200000")}}; !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("rows = %v, want %v", res.Rows, want)
	}
}

// TestIntegrationSessionSettingsRefused: a role that may not set
// temp_file_limit gets every query refused as unavailable, with the
// statement never run, rather than running unbounded.
func TestIntegrationSessionSettingsRefused(t *testing.T) {
	db := requireDB(t)
	role := "t_noset_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	u, err := url.Parse(db.roDSN)
	if err != nil {
		t.Fatal(err)
	}
	const pw = "noset-password"
	dbName := strings.TrimPrefix(u.Path, "/")
	db.exec(t, "CREATE ROLE "+role+" LOGIN PASSWORD '"+pw+"'")
	t.Cleanup(func() {
		db.exec(t, "REVOKE CONNECT ON DATABASE "+dbName+" FROM "+role)
		db.exec(t, "DROP ROLE "+role)
	})
	db.exec(t, "GRANT CONNECT ON DATABASE "+dbName+" TO "+role)
	u.User = url.UserPassword(role, pw)
	r := runner(t, u.String(), WithMaxConns(1))
	_, err = query(r, "select 1", defaultLimits)
	se := wantSQLError(t, err, ports.SQLUnavailable)
	if !errors.Is(se.Err, ErrSessionSettings) {
		t.Errorf("cause = %v, want ErrSessionSettings", se.Err)
	}
	// With the limit left to the role, the same role runs queries.
	res := mustQuery(t, r, "select current_setting('work_mem')", ports.SQLLimits{TempFileBytes: -1})
	if want := [][]any{{"16MB"}}; !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("rows = %v, want %v", res.Rows, want)
	}
}

func TestIntegrationColumnNames(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN)
	long := strings.Repeat("é", 40) // 80 bytes: PostgreSQL keeps 63 bytes, whole characters
	res := mustQuery(t, r, `select 1 as "Mixed Case", 2, 3 as "`+long+`", 4 as "a""b"`, defaultLimits)
	want := []string{"Mixed Case", "?column?", strings.Repeat("é", 31), `a"b`}
	if !reflect.DeepEqual(res.Columns, want) {
		t.Errorf("columns = %q, want %q", res.Columns, want)
	}
}

func TestIntegrationTruncation(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN)
	tests := []struct {
		name      string
		sql       string
		lim       ports.SQLLimits
		wantCols  []string
		wantRows  [][]any
		wantTrunc []string
	}{
		{
			name: "rows", sql: "select g from generate_series(1, 10) g", lim: ports.SQLLimits{MaxRows: 3},
			wantCols: []string{"g"}, wantRows: [][]any{{num("1")}, {num("2")}, {num("3")}}, wantTrunc: []string{"rows"},
		},
		{
			name: "exactly max rows", sql: "select g from generate_series(1, 3) g", lim: ports.SQLLimits{MaxRows: 3},
			wantCols: []string{"g"}, wantRows: [][]any{{num("1")}, {num("2")}, {num("3")}},
		},
		{
			name: "columns", sql: "select 1 as a, 2 as b, 3 as c", lim: ports.SQLLimits{MaxColumns: 2},
			wantCols: []string{"a", "b"}, wantRows: [][]any{{num("1"), num("2")}}, wantTrunc: []string{"columns"},
		},
		{
			name: "cell bytes on a character boundary", sql: "select repeat('é', 10) as s, 'ok' as t", lim: ports.SQLLimits{MaxCellBytes: 5},
			wantCols: []string{"s", "t"}, wantRows: [][]any{{"éé", "ok"}}, wantTrunc: []string{"cell_bytes"},
		},
		{
			name: "cell bytes of json", sql: `select '{"k": "0123456789"}'::jsonb as j`, lim: ports.SQLLimits{MaxCellBytes: 8},
			wantCols: []string{"j"}, wantRows: [][]any{{`{"k": "0`}}, wantTrunc: []string{"cell_bytes"},
		},
		{
			name: "cell bytes of an array", sql: "select array[1000, 2000, 3000] as a", lim: ports.SQLLimits{MaxCellBytes: 8},
			wantCols: []string{"a"}, wantRows: [][]any{{"{1000,20"}}, wantTrunc: []string{"cell_bytes"},
		},
		{
			name: "total bytes", sql: "select repeat('x', 10) as s from generate_series(1, 5)", lim: ports.SQLLimits{MaxTotalBytes: 25},
			wantCols: []string{"s"}, wantRows: [][]any{{"xxxxxxxxxx"}, {"xxxxxxxxxx"}}, wantTrunc: []string{"total_bytes"},
		},
		{
			name: "several bounds", sql: "select repeat('y', 9) as a, 2 as b from generate_series(1, 4)", lim: ports.SQLLimits{MaxRows: 2, MaxColumns: 1, MaxCellBytes: 3},
			wantCols: []string{"a"}, wantRows: [][]any{{"yyy"}, {"yyy"}}, wantTrunc: []string{"rows", "columns", "cell_bytes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := mustQuery(t, r, tt.sql, tt.lim)
			if !reflect.DeepEqual(res.Columns, tt.wantCols) {
				t.Errorf("columns = %q, want %q", res.Columns, tt.wantCols)
			}
			if !reflect.DeepEqual(res.Rows, tt.wantRows) {
				t.Errorf("rows = %#v, want %#v", res.Rows, tt.wantRows)
			}
			if !reflect.DeepEqual(res.Truncated, tt.wantTrunc) {
				t.Errorf("truncated = %q, want %q", res.Truncated, tt.wantTrunc)
			}
		})
	}
}

// TestIntegrationTruncatedHugeResult stops reading a result of a hundred
// million rows: it comes back without reading them, and the runner (one
// connection) keeps working.
func TestIntegrationTruncatedHugeResult(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN, WithMaxConns(1))
	for _, tt := range []struct {
		sql       string
		lim       ports.SQLLimits
		wantTrunc string
	}{
		// A set-returning function in the select list streams its rows.
		{"select generate_series(1, 100000000) as g", ports.SQLLimits{MaxRows: 5, Timeout: time.Minute}, "rows"},
		{"select repeat('x', 1000) as s, generate_series(1, 100000000) as g", ports.SQLLimits{MaxTotalBytes: 10000, Timeout: time.Minute}, "total_bytes"},
	} {
		start := time.Now()
		res := mustQuery(t, r, tt.sql, tt.lim)
		if d := time.Since(start); d > correctnessBound {
			t.Errorf("%s: took %v; the unread rows were not abandoned", tt.sql, d)
		}
		if !reflect.DeepEqual(res.Truncated, []string{tt.wantTrunc}) {
			t.Errorf("%s: truncated = %q", tt.sql, res.Truncated)
		}
		if got := mustQuery(t, r, "select 1 as one", defaultLimits).Rows; !reflect.DeepEqual(got, [][]any{{num("1")}}) {
			t.Errorf("the next query returned %v", got)
		}
	}
}

// TestIntegrationTruncationKeepsTheConnection: a few unread rows are
// drained rather than costing the connection.
func TestIntegrationTruncationKeepsTheConnection(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN, WithMaxConns(1))
	before := mustQuery(t, r, "select pg_backend_pid() as pid", defaultLimits).Rows
	res := mustQuery(t, r, "select pg_backend_pid() as pid, generate_series(1, 200) as g", ports.SQLLimits{MaxRows: 2})
	if !reflect.DeepEqual(res.Truncated, []string{"rows"}) || len(res.Rows) != 2 {
		t.Fatalf("rows = %v, truncated = %q", res.Rows, res.Truncated)
	}
	after := mustQuery(t, r, "select pg_backend_pid() as pid", defaultLimits).Rows
	if !reflect.DeepEqual(before, after) || !reflect.DeepEqual(res.Rows[0][0], before[0][0]) {
		t.Errorf("backend %v, then %v, then %v: the connection was not kept", before, res.Rows[0][0], after)
	}
}

func TestIntegrationStatementTimeoutInterrupts(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN, WithMaxConns(1))
	start := time.Now()
	_, err := query(r, "select pg_sleep(5)", ports.SQLLimits{Timeout: 300 * time.Millisecond})
	elapsed := time.Since(start)
	se := wantSQLError(t, err, ports.SQLTimeout)
	if elapsed > correctnessBound {
		t.Errorf("pg_sleep(5) under a 300ms timeout returned after %v", elapsed)
	}
	// The server's statement_timeout fired (query_canceled), not only the
	// in-process deadline.
	var pe *pgconn.PgError
	if !errors.As(se.Err, &pe) || pe.Code != "57014" {
		t.Errorf("cause = %v, want the server's 57014 query_canceled", se.Err)
	}
	// The connection survived it.
	if got := mustQuery(t, r, "select 2 as two", defaultLimits).Rows; !reflect.DeepEqual(got, [][]any{{num("2")}}) {
		t.Errorf("the next query returned %v", got)
	}
}

func TestIntegrationCallerDeadlineInterrupts(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN, WithMaxConns(1))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := queryCtx(ctx, r, "select pg_sleep(5)", ports.SQLLimits{Timeout: 10 * time.Second})
	elapsed := time.Since(start)
	wantSQLError(t, err, ports.SQLTimeout)
	if elapsed > correctnessBound {
		t.Errorf("pg_sleep(5) under a 300ms caller deadline returned after %v", elapsed)
	}
	if got := mustQuery(t, r, "select 3 as three", defaultLimits).Rows; !reflect.DeepEqual(got, [][]any{{num("3")}}) {
		t.Errorf("the next query returned %v", got)
	}
}

func itemCount(t *testing.T, db testDB) int {
	t.Helper()
	var n int
	if err := db.admin(t).QueryRow(context.Background(), "select count(*) from fixture.items").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestIntegrationReadOnlyRoleCannotWrite: a write that reached the runner
// as the read-only role is refused, and the role itself cannot write even
// in a read-write transaction outside the runner.
func TestIntegrationReadOnlyRoleCannotWrite(t *testing.T) {
	db := requireDB(t)
	before := itemCount(t, db)
	r := runner(t, db.roDSN)
	for _, sql := range []string{
		"insert into fixture.items values (100, 'x')",
		"update fixture.items set name = 'x'",
		"delete from fixture.items",
		"create table fixture.evil (x int)",
		"with d as (delete from fixture.items returning id) select * from d",
	} {
		_, err := query(r, sql, defaultLimits)
		wantSQLError(t, err, ports.SQLRejected)
	}

	c, err := pgx.Connect(context.Background(), db.roDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for _, sql := range []string{
		"insert into fixture.items values (100, 'x')",
		"create table fixture.evil (x int)",
		"select * from pg_catalog.pg_authid",
	} {
		tx, err := c.BeginTx(context.Background(), pgx.TxOptions{AccessMode: pgx.ReadWrite})
		if err != nil {
			t.Fatal(err)
		}
		_, err = tx.Exec(context.Background(), sql)
		_ = tx.Rollback(context.Background())
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42501" {
			t.Errorf("%s as the read-only role in a read-write transaction: %v, want 42501 insufficient_privilege", sql, err)
		}
	}
	if after := itemCount(t, db); after != before {
		t.Errorf("fixture.items went from %d to %d rows", before, after)
	}
}

// TestIntegrationSuperuserStillReadOnly: even a superuser DSN writes
// nothing through the runner, because the transaction is read-only.
func TestIntegrationSuperuserStillReadOnly(t *testing.T) {
	db := requireDB(t)
	s := db.schema(t, "CREATE SEQUENCE seq; CREATE TABLE t (x int); INSERT INTO t VALUES (1)")
	before := itemCount(t, db)
	r := runner(t, withParams(t, db.dsn, "search_path", s, "default_transaction_read_only", "off"))
	for _, sql := range []string{
		"insert into fixture.items values (100, 'x') returning id",
		"insert into t values (2)",
		"update t set x = 5",
		"delete from t",
		"truncate t",
		"create table evil (x int)",
		"drop table t",
		"select nextval('seq')",
		"with d as (delete from t returning x) select * from d",
	} {
		_, err := query(r, sql, defaultLimits)
		se := wantSQLError(t, err, ports.SQLRejected)
		var pe *pgconn.PgError
		if !errors.As(se.Err, &pe) || pe.Code != "25006" {
			t.Errorf("%s: cause %v, want 25006 read_only_sql_transaction", sql, se.Err)
		}
	}
	if after := itemCount(t, db); after != before {
		t.Errorf("fixture.items went from %d to %d rows", before, after)
	}
	var n int
	if err := db.admin(t).QueryRow(context.Background(), "select count(*) from "+s+".t where x = 1").Scan(&n); err != nil || n != 1 {
		t.Errorf("table t changed: count=%d err=%v", n, err)
	}
}

func TestIntegrationParametersAreData(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN)
	payload := "'; drop table fixture.items; --"
	res := mustQuery(t, r, "select $1::text as v, $1 = $2 as same", defaultLimits, payload, payload)
	if want := [][]any{{payload, true}}; !reflect.DeepEqual(res.Rows, want) {
		t.Errorf("rows = %#v, want %#v", res.Rows, want)
	}
	tests := []struct {
		sql  string
		args []any
		want [][]any
	}{
		{"select count(*) as n from fixture.items where name = $1", []any{"alpha' or '1'='1"}, [][]any{{num("0")}}},
		{"select count(*) as n from fixture.items where name = $1", []any{"alpha"}, [][]any{{num("1")}}},
		{"select name from fixture.items where id = $1", []any{json.Number("2")}, [][]any{{"beta"}}},
		{"select name from fixture.items where id = $1", []any{float64(3)}, [][]any{{"gamma"}}},
		{"select name from fixture.items where id = $1", []any{"1"}, [][]any{{"alpha"}}},
		{"select name from fixture.items where id = $1", []any{int64(1)}, [][]any{{"alpha"}}},
		{"select name from fixture.items where id in ($1, $2) order by id", []any{1, 3}, [][]any{{"alpha"}, {"gamma"}}},
		{"select $1::int is null as n", []any{nil}, [][]any{{true}}},
		{"select $1::bool as b, $2::numeric as n, $3::float8 as f", []any{true, json.Number("12.50"), 1.5}, [][]any{{true, num("12.50"), num("1.5")}}},
		{"select $1 as untyped", []any{"x"}, [][]any{{"x"}}},
		{"select name from fixture.items where name like $1 order by id", []any{"%a"}, [][]any{{"alpha"}, {"beta"}, {"gamma"}}},
	}
	for _, tt := range tests {
		res, err := query(r, tt.sql, defaultLimits, tt.args...)
		if err != nil {
			t.Errorf("%s %v: %v (cause: %v)", tt.sql, tt.args, err, errors.Unwrap(err))
			continue
		}
		if !reflect.DeepEqual(res.Rows, tt.want) {
			t.Errorf("%s %v = %#v, want %#v", tt.sql, tt.args, res.Rows, tt.want)
		}
	}
	// A value the placeholder's type cannot read is invalid, not an error
	// quoting it.
	_, err := query(r, "select $1::int as i", defaultLimits, "not a number")
	wantSQLError(t, err, ports.SQLInvalid)
	_, err = query(r, "select $1::text as t", defaultLimits, "nul\x00byte")
	wantSQLError(t, err, ports.SQLInvalid)
	if itemCount(t, db) == 0 {
		t.Error("fixture.items was emptied")
	}
}

// TestIntegrationStackedStatementsRefused: even if a guard let two
// statements through, the extended protocol's Parse refuses them, also
// when the DSN asks pgx for the simple protocol.
func TestIntegrationStackedStatementsRefused(t *testing.T) {
	db := requireDB(t)
	before := itemCount(t, db)
	runners := map[string]*SQLRunner{
		"read-only role":           runner(t, db.roDSN),
		"superuser, simple in DSN": runner(t, withParams(t, db.dsn, "default_query_exec_mode", "simple_protocol")),
	}
	for name, r := range runners {
		for _, tt := range []struct {
			sql  string
			args []any
		}{
			{"select 1; select 2", nil},
			{"select 1; insert into fixture.items values (200, 'stacked')", nil},
			{"select 1; commit; insert into fixture.items values (201, 'stacked')", nil},
			{"select $1::int; insert into fixture.items values (202, 'stacked')", []any{1}},
		} {
			_, err := query(r, tt.sql, defaultLimits, tt.args...)
			se := wantSQLError(t, err, ports.SQLInvalid)
			var pe *pgconn.PgError
			if !errors.As(se.Err, &pe) || pe.Code != "42601" {
				t.Errorf("%s: %q: cause %v, want 42601 (cannot insert multiple commands into a prepared statement)", name, tt.sql, se.Err)
			}
		}
	}
	if after := itemCount(t, db); after != before {
		t.Errorf("fixture.items went from %d to %d rows", before, after)
	}
}

// TestIntegrationNothingOutlivesTheCall: the runner always rolls back, and
// PostgreSQL reverts even session-level settings made in a rolled-back
// transaction, so one call cannot change the next one's session.
func TestIntegrationNothingOutlivesTheCall(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN, WithMaxConns(1))
	mustQuery(t, r, "select pg_backend_pid() as pid", defaultLimits)
	pid := mustQuery(t, r, "select pg_backend_pid() as pid", defaultLimits).Rows
	mustQuery(t, r, "select set_config('search_path', 'evil', false) as a, set_config('statement_timeout', '0', false) as b", defaultLimits)
	res := mustQuery(t, r, "select pg_backend_pid() as pid, current_setting('search_path') as sp", defaultLimits)
	if !reflect.DeepEqual(res.Rows[0][0], pid[0][0]) {
		t.Fatalf("the pool did not reuse its one connection (pid %v then %v)", pid[0][0], res.Rows[0][0])
	}
	if got := res.Rows[0][1]; got != `"$user", public` {
		t.Errorf("search_path after a call changed it = %v", got)
	}
}

// TestIntegrationRecoversFromAKilledConnection: a pooled connection the
// server terminated costs at most the call that finds it dead.
func TestIntegrationRecoversFromAKilledConnection(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN, WithMaxConns(1))
	pid := mustQuery(t, r, "select pg_backend_pid() as pid", defaultLimits).Rows[0][0]
	var killed bool
	if err := db.admin(t).QueryRow(context.Background(), "select pg_terminate_backend($1::int)", string(pid.(json.Number))).Scan(&killed); err != nil || !killed {
		t.Fatalf("terminating backend %v: %v %v", pid, killed, err)
	}
	if _, err := query(r, "select 1 as one", defaultLimits); err != nil {
		// The call that finds the connection dead fails cleanly.
		wantSQLError(t, err, ports.SQLUnavailable)
	}
	res := mustQuery(t, r, "select pg_backend_pid() as pid", defaultLimits)
	if res.Rows[0][0] == pid {
		t.Errorf("still on the terminated backend %v", pid)
	}
}

func TestIntegrationInvalidAndRejected(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN)
	for _, tt := range []struct {
		sql  string
		kind ports.SQLErrorKind
	}{
		{"select nosuchcolumn from fixture.items", ports.SQLInvalid},
		{"select * from nosuchtable", ports.SQLInvalid},
		{"select nosuchfunction(1)", ports.SQLInvalid},
		{"selec 1", ports.SQLInvalid},
		{"select 1/0 as x", ports.SQLInvalid},
		{"select * from pg_catalog.pg_authid", ports.SQLRejected},
		{"select pg_read_file('/etc/passwd')", ports.SQLRejected},
	} {
		_, err := query(r, tt.sql, defaultLimits)
		wantSQLError(t, err, tt.kind)
	}
}

func TestIntegrationDatabaseDown(t *testing.T) {
	db := requireDB(t)
	// The same credentials on a port nothing listens on.
	u, err := url.Parse(db.roDSN)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = deadAddr(t)
	down := u.String()
	r := runner(t, down)
	start := time.Now()
	_, err = query(r, "select 1", defaultLimits)
	elapsed := time.Since(start)
	se := wantSQLError(t, err, ports.SQLUnavailable)
	if elapsed > correctnessBound {
		t.Errorf("a refused connection took %v to report", elapsed)
	}
	for _, secret := range []string{passwordOf(t, db.roDSN), u.Host, db.ro} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error text %q quotes the DSN", err)
		}
	}
	var ce *pgconn.ConnectError
	if !errors.As(se.Err, &ce) {
		t.Errorf("cause %v is not the driver's connect error (kept for operators)", se.Err)
	}
	if got := r.Health(context.Background()); got != ports.HealthDown {
		t.Errorf("Health = %q, want down", got)
	}
	if got := runner(t, db.roDSN).Health(context.Background()); got != ports.HealthOK {
		t.Errorf("Health of the real database = %q, want ok", got)
	}

	// Wrong password: the server answers, but the connection fails.
	bad := strings.Replace(db.roDSN, ":"+passwordOf(t, db.roDSN)+"@", ":wrong-password@", 1)
	_, err = query(runner(t, bad), "select 1", defaultLimits)
	wantSQLError(t, err, ports.SQLUnavailable)
}

func passwordOf(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil || cfg.Password == "" {
		t.Fatal("the read-only DSN must carry a password")
	}
	return cfg.Password
}

// TestIntegrationConcurrentCallsShareABoundedPool runs many calls at once
// over two connections.
func TestIntegrationConcurrentCallsShareABoundedPool(t *testing.T) {
	db := requireDB(t)
	r := runner(t, db.roDSN, WithMaxConns(2))
	var (
		mu   sync.Mutex
		pids = map[any]bool{}
		wg   sync.WaitGroup
	)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				res, err := query(r, "select pg_backend_pid() as pid, $1::int * 2 as twice", defaultLimits, g*10+i)
				if err != nil {
					t.Errorf("concurrent query: %v (cause: %v)", err, errors.Unwrap(err))
					return
				}
				if want := num(strconv.Itoa((g*10 + i) * 2)); res.Rows[0][1] != want {
					t.Errorf("twice = %v, want %v", res.Rows[0][1], want)
				}
				mu.Lock()
				pids[res.Rows[0][0]] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(pids) > 2 {
		t.Errorf("%d server sessions served the calls; the pool allows 2", len(pids))
	}
}
