package integration_test

import (
	"os"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/fs"
	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/adapters/sqlguard"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/authz"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/embed"
	"github.com/arrowhead-go/arrowhead/core/tools/data"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// sqlApp runs sql_query end to end against the real PostgreSQL 15 that
// .ci/postgres.sh starts, connected as its read-only role.
func sqlApp(t *testing.T, kv ...string) *core.App {
	t.Helper()
	dsn := os.Getenv("ARROWHEAD_TEST_POSTGRES_RO_DSN")
	if dsn == "" {
		skipOrFail(t, "ARROWHEAD_TEST_POSTGRES_RO_DSN is not set; start PostgreSQL with: eval \"$(.ci/postgres.sh start /tmp/ahpg 55432)\"")
	}
	vars := map[string]string{"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_SQL_DSN": dsn, "ARROWHEAD_SQL_TIMEOUT_SECONDS": "0.5",
		"ARROWHEAD_SQL_MAX_ROWS": "2", "ARROWHEAD_RATE_LIMIT_ENABLED": "false"}
	for i := 0; i+1 < len(kv); i += 2 {
		vars[kv[i]] = kv[i+1]
	}
	s := coretest.Settings(t, vars)
	pool, err := postgres.NewPool(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	runner, err := postgres.NewSQLRunner(pool)
	if err != nil {
		t.Fatal(err)
	}
	corpus, err := fs.OpenDocuments(fs.DocumentsConfig{Root: t.TempDir(), Extensions: s.DocAllowedExtensions})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := authz.Parse([]byte(`{"grants":[{"subject":"*","actions":["query"],"kinds":["table"],"prefix":"fixture.items"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	app, err := core.New(core.Deps{Settings: s, Authorizer: pol, Rates: &portstest.Counter{}, Audit: &portstest.Audit{},
		Tracer: nop.Tracer{}, Metrics: nop.Metrics{}, Clock: ports.SystemClock{},
		Families: []core.Member{data.Family.With(data.Ports{Authorizer: pol,
			Vetter: sqlguard.New(sqlguard.Config{MaxLength: s.SQLQueryMaxLength}), SQL: runner,
			Embedder: embed.NewDeterministic(s.EmbeddingDimensions), Documents: corpus})}})
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func TestSQLQueryEndToEnd(t *testing.T) {
	app := sqlApp(t)
	analyst := ports.NewPrincipal("analyst", "sql:read")
	res, err := app.Call(t.Context(), analyst, "sql_query", map[string]any{
		"query":  "select id, name from fixture.items where id >= :min order by id",
		"params": map[string]any{"min": 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := res.Structured()["rows"].([]any)
	if len(rows) != 2 || res.Structured()["truncated"].([]any)[0] != "rows" {
		t.Fatalf("rows bounded at 2 with truncation reported: %v", res.Structured())
	}
	if first := rows[0].([]any); first[1] != "alpha" {
		t.Fatalf("first row %v", first)
	}
	refusals := map[string]catalog.RefusalKind{
		"delete from fixture.items":                                         catalog.KindValidation,
		"select 1 from fixture.items; delete from fixture.items":            catalog.KindValidation,
		"select pg_sleep(5) from fixture.items":                             catalog.KindValidation,
		"select pg_read_file('/etc/passwd') from fixture.items":             catalog.KindValidation,
		"select * into fixture.copy from fixture.items":                     catalog.KindValidation,
		"select * from fixture.items for update":                            catalog.KindValidation,
		"with d as (delete from fixture.items returning *) select * from d": catalog.KindValidation,
		"select usename, passwd from pg_catalog.pg_shadow":                  catalog.KindAuthorization,
		"select 1": catalog.KindAuthorization,
		"select name from fixture.items where name = $1": catalog.KindValidation,
	}
	for q, want := range refusals {
		_, err := app.Call(t.Context(), analyst, "sql_query", map[string]any{"query": q})
		te, _ := catalog.AsToolError(err)
		if te == nil || te.Kind != want {
			t.Errorf("%q: got %v, want %s", q, err, want)
			continue
		}
		if strings.Contains(te.Message, "fixture") || strings.Contains(te.Message, "pg_") {
			t.Errorf("%q: the refusal echoes the statement: %s", q, te.Message)
		}
	}
	// The server-side statement timeout interrupts a query that would run
	// for a very long time (3^16 rows).
	long := "select count(*) from fixture.items a, fixture.items b, fixture.items c, fixture.items d, fixture.items e, fixture.items f, fixture.items g, fixture.items h, " +
		"fixture.items i, fixture.items j, fixture.items k, fixture.items l, fixture.items m, fixture.items n, fixture.items o, fixture.items p"
	_, err = app.Call(t.Context(), analyst, "sql_query", map[string]any{"query": long})
	te, _ := catalog.AsToolError(err)
	if te == nil || !strings.Contains(te.Message, "timeout") {
		t.Fatalf("long query: %v", err)
	}
	// The rows are still there: nothing above wrote.
	res, err = app.Call(t.Context(), analyst, "sql_query", map[string]any{"query": "select count(*) as n from fixture.items"})
	if err != nil || !strings.Contains(res.Text, "3") {
		t.Fatalf("count: %v %v", res.Structured(), err)
	}
}

// TestSQLQueryTempFileLimit: a query whose sort spills past
// ARROWHEAD_SQL_TEMP_FILE_LIMIT_MB is refused, naming the limit, where it
// used to fill the disk until its timeout.
func TestSQLQueryTempFileLimit(t *testing.T) {
	app := sqlApp(t, "ARROWHEAD_SQL_TEMP_FILE_LIMIT_MB", "1", "ARROWHEAD_SQL_WORK_MEM_MB", "1", "ARROWHEAD_SQL_TIMEOUT_SECONDS", "30")
	analyst := ports.NewPrincipal("analyst", "sql:read")
	spill := "with recursive r(n, pad) as (select id, '" + strings.Repeat("x", 200) + "' from fixture.items where id = 1" +
		" union all select n + 1, pad from r where n < 200000) select n from r order by pad, n desc limit 1"
	_, err := app.Call(t.Context(), analyst, "sql_query", map[string]any{"query": spill})
	te, _ := catalog.AsToolError(err)
	if te == nil || !strings.Contains(te.Message, "temp_file_limit") || !strings.Contains(te.Message, "ARROWHEAD_SQL_TEMP_FILE_LIMIT_MB") {
		t.Fatalf("spilling query: %v", err)
	}
	// Within the limit, the same app answers.
	res, err := app.Call(t.Context(), analyst, "sql_query", map[string]any{"query": "select count(*) as n from fixture.items"})
	if err != nil || !strings.Contains(res.Text, "3") {
		t.Fatalf("count: %v %v", res.Structured(), err)
	}
}
