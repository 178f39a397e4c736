package data_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/fs"
	"github.com/arrowhead-go/arrowhead/adapters/sqlguard"
	"github.com/arrowhead-go/arrowhead/adapters/vectorindex"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/authz"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/embed"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/data"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

const hostile = "'; DROP TABLE users; -- CANARY-sql-77"

var (
	alice = ports.NewPrincipal("alice", "sql:read", "vector:search", "vector:write")
	bob   = ports.NewPrincipal("bob", "sql:read", "vector:search", "vector:write")
)

// countingEmbedder counts texts embedded.
type countingEmbedder struct {
	inner ports.Embedder
	texts atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.inner.Embed(ctx, texts)
}
func (c *countingEmbedder) Dimensions() int { return c.inner.Dimensions() }
func (c *countingEmbedder) Semantic() bool  { return false }

// fakeSQL records what it was asked to run.
type fakeSQL struct {
	got  ports.VettedQuery
	args []any
	res  ports.SQLResult
	err  error
}

func (f *fakeSQL) Query(_ context.Context, q ports.VettedQuery, args []any, _ ports.SQLLimits) (ports.SQLResult, error) {
	f.got, f.args = q, args
	return f.res, f.err
}

type env struct {
	app      *core.App
	root     string
	emb      *countingEmbedder
	sql      *fakeSQL
	settings *settings.Settings
	index    *vectorindex.VectorIndex
}

const policy = `{"grants":[
 {"subject":"*","actions":["read"],"prefix":""},
 {"subject":"*","actions":["query","ingest"],"kinds":["table"],"prefix":"doc_chunks"},
 {"subject":"*","actions":["query"],"kinds":["table"],"prefix":"orders"}]}`

func newEnv(t *testing.T, pol string, files map[string]string) env {
	t.Helper()
	return newEnvWriting(t, pol, files, nil)
}

// newEnvWriting is newEnv with doc_index writing through wrap(index) when
// wrap is not nil.
// Settings in extra override the environment's own.
func newEnvWriting(t *testing.T, pol string, files map[string]string, wrap func(ports.VectorWriter) ports.VectorWriter, extra ...map[string]string) env {
	t.Helper()
	root := t.TempDir()
	coretest.WriteFiles(t, root, files)
	vars := map[string]string{
		"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_RATE_LIMIT_ENABLED": "false",
		"ARROWHEAD_PGVECTOR_COLLECTIONS": "doc_chunks", "ARROWHEAD_EMBEDDING_DIMENSIONS": "64",
		"ARROWHEAD_VECTOR_INDEX_CHUNK_MAX_CHARS": "200", "ARROWHEAD_VECTOR_INDEX_CHUNK_OVERLAP": "20",
	}
	for _, m := range extra {
		maps.Copy(vars, m)
	}
	s := coretest.Settings(t, vars)
	store, err := fs.OpenDocuments(fs.DocumentsConfig{Root: root, Extensions: s.DocAllowedExtensions})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := vectorindex.OpenVectorIndex(t.Context(), vectorindex.VectorIndexConfig{Collections: s.PgvectorCollections, Dimensions: 64})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	p, err := authz.Parse([]byte(pol))
	if err != nil {
		t.Fatal(err)
	}
	e := env{root: root, emb: &countingEmbedder{inner: embed.NewDeterministic(64)}, sql: &fakeSQL{}, settings: s, index: idx}
	var writer ports.VectorWriter = idx
	if wrap != nil {
		writer = wrap(idx)
	}
	family := data.Family.With(data.Ports{Authorizer: p, Vetter: sqlguard.New(sqlguard.Config{}), SQL: e.sql,
		Vectors: idx, Writer: writer, Embedder: e.emb, Documents: store})
	e.app, err = core.New(core.Deps{Settings: s, Authorizer: p, Rates: &portstest.Counter{}, Audit: &portstest.Audit{},
		Tracer: nop.Tracer{}, Metrics: nop.Metrics{}, Clock: ports.SystemClock{},
		Families: []core.Member{family}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSQLQueryGuards(t *testing.T) {
	e := newEnv(t, policy, nil)
	e.sql.res = ports.SQLResult{Columns: []string{"id", "na\u202eme"}, Rows: [][]json.RawMessage{{json.RawMessage("1"), json.RawMessage(`"a\u001b[31mb"`)}}}
	res, te := coretest.Call(t, e.app, alice, "sql_query", map[string]any{"query": "select id, name from orders where org = :org and id > :min", "params": map[string]any{"org": hostile, "min": 3}})
	if te != nil {
		t.Fatal(te)
	}
	if strings.Contains(e.sql.got.SQL, "DROP") || len(e.sql.args) != 2 || e.sql.args[0] != hostile {
		t.Fatalf("params not bound: %q %v", e.sql.got.SQL, e.sql.args)
	}
	cols := res.Structured()["columns"].([]any)
	if cols[1] != "name" || strings.Contains(res.Text, "\x1b") || !strings.Contains(res.Text, "UNTRUSTED-DATA-BEGIN") {
		t.Fatalf("not sanitized and framed: %v %q", cols, res.Text)
	}
	for name, args := range map[string]map[string]any{
		"write":          {"query": "delete from orders"},
		"stacked":        {"query": "select 1 from orders; drop table orders"},
		"denied table":   {"query": "select * from users"},
		"tableless":      {"query": "select 1"},
		"pg_sleep":       {"query": "select pg_sleep(10) from orders"},
		"missing param":  {"query": "select * from orders where id = :id"},
		"unused param":   {"query": "select * from orders", "params": map[string]any{"x": 1}},
		"object param":   {"query": "select * from orders where id = :id", "params": map[string]any{"id": map[string]any{"a": 1}}},
		"hostile string": {"query": hostile},
	} {
		_, te := coretest.Call(t, e.app, alice, "sql_query", args)
		if te == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(te.Message, "CANARY") || strings.Contains(te.Message, "users") || strings.Contains(te.Message, "pg_sleep") {
			t.Errorf("%s: refusal echoes the input: %s", name, te.Message)
		}
	}
	e.sql.err = &ports.SQLError{Kind: ports.SQLTimeout}
	if _, te := coretest.Call(t, e.app, alice, "sql_query", map[string]any{"query": "select id from orders"}); te == nil || !strings.Contains(te.Message, "timeout") {
		t.Fatalf("timeout: %v", te)
	}
}

func TestVectorToolsAuthorizeBeforeEmbedding(t *testing.T) {
	e := newEnv(t, `{"grants":[{"subject":"*","actions":["read"],"prefix":""}]}`, nil)
	for _, tool := range []string{"vector_query", "hybrid_query"} {
		if _, te := coretest.Call(t, e.app, alice, tool, map[string]any{"collection": "doc_chunks", "query": "refunds"}); te == nil || te.Kind != catalog.KindAuthorization {
			t.Fatalf("%s: %v", tool, te)
		}
	}
	if n := e.emb.texts.Load(); n != 0 {
		t.Fatalf("a denied caller triggered %d embeddings", n)
	}
	if _, te := coretest.Call(t, e.app, alice, "vector_query", map[string]any{"collection": "secret_table", "query": "x"}); te == nil || strings.Contains(te.Message, "secret_table") {
		t.Fatalf("collection allow-list: %v", te)
	}
}

func TestIndexingIsDiffAwareAndTenantScoped(t *testing.T) {
	long := strings.Repeat("Refunds are issued within fourteen days of the request. ", 12)
	e := newEnv(t, policy, map[string]string{
		"handbook/refunds.md":  "# Refunds\n\n" + long,
		"handbook/shipping.md": "# Shipping\n\nParcels leave the warehouse daily and arrive in three days.",
		"other/notes.txt":      "unrelated",
	})
	index := func(p ports.Principal) map[string]any {
		t.Helper()
		res, te := coretest.Call(t, e.app, p, "doc_index", map[string]any{"collection": "doc_chunks", "path_prefix": "handbook/"})
		if te != nil {
			t.Fatal(te)
		}
		return res.Structured()
	}
	first := index(alice)
	if first["documents_indexed"] != float64(2) || first["chunks_embedded"].(float64) < 3 || first["chunks_unchanged"] != float64(0) {
		t.Fatalf("first run: %v", first)
	}
	res, _ := coretest.Call(t, e.app, alice, "doc_index", map[string]any{"collection": "doc_chunks", "path_prefix": "handbook/"})
	if want := fmt.Sprintf("Indexed 2 documents: 0 chunks embedded, %v unchanged; 0 documents removed.", first["chunks_total"]); res.Text != want {
		t.Fatalf("a whole run's text %q, want %q", res.Text, want)
	}
	// A run cut by its chunk cap says so, and that it removed nothing.
	capped := newEnvWriting(t, policy, map[string]string{"handbook/refunds.md": "# Refunds\n\n" + long},
		nil, map[string]string{"ARROWHEAD_VECTOR_INDEX_MAX_CHUNKS": "1"})
	res, _ = coretest.Call(t, capped.app, alice, "doc_index", map[string]any{"collection": "doc_chunks", "path_prefix": "handbook/"})
	if !strings.HasPrefix(res.Text, "Indexed 0 documents: 0 chunks embedded, 0 unchanged; 0 documents removed. The run did not finish: "+
		"the next document would have passed ARROWHEAD_VECTOR_INDEX_MAX_CHUNKS (1), the chunks one run may write.") ||
		!strings.Contains(res.Text, "removed from the index only by a run that finishes") {
		t.Fatalf("a capped run's text %q", res.Text)
	}
	before := e.emb.texts.Load()
	second := index(alice)
	if second["chunks_embedded"] != float64(0) || e.emb.texts.Load() != before || second["chunks_unchanged"] != first["chunks_total"] {
		t.Fatalf("second run re-embedded: %v", second)
	}
	// Edit one document's tail: only its changed chunks are re-embedded.
	coretest.WriteFiles(t, e.root, map[string]string{"handbook/shipping.md": "# Shipping\n\nParcels leave the warehouse twice a day."})
	third := index(alice)
	if third["chunks_embedded"] != float64(1) {
		t.Fatalf("edit re-embedded %v chunks", third["chunks_embedded"])
	}
	// Retrieval cites source and chunk index, within the caller's tenant.
	res, te := coretest.Call(t, e.app, alice, "hybrid_query", map[string]any{"collection": "doc_chunks", "query": "refunds fourteen days", "k": 3})
	if te != nil {
		t.Fatal(te)
	}
	hits := res.Structured()["results"].([]any)
	if len(hits) == 0 || hits[0].(map[string]any)["source"] != "handbook/refunds.md" {
		t.Fatalf("hybrid: %v", hits)
	}
	if !strings.HasSuffix(res.Text, "so these scores rank shared words, not meaning.\n") {
		t.Errorf("the deterministic embedder's answer does not say its scores are not semantic:\n%s", res.Text)
	}
	res, te = coretest.Call(t, e.app, bob, "vector_query", map[string]any{"collection": "doc_chunks", "query": "refunds fourteen days", "k": 10})
	if te != nil || len(res.Structured()["results"].([]any)) != 0 {
		t.Fatalf("bob sees alice's chunks: %v %v", res.Structured(), te)
	}
	if !strings.HasSuffix(res.Text, "No results: the collection holds no chunk you may read. doc_index adds the corpus's documents to a collection.\n") {
		t.Errorf("an empty answer does not say what it means:\n%s", res.Text)
	}
	// Deleting a document removes its chunks on the next run.
	if err := os.Remove(filepath.Join(e.root, "handbook", "shipping.md")); err != nil {
		t.Fatal(err)
	}
	fourth := index(alice)
	if fourth["documents_removed"] != float64(1) {
		t.Fatalf("deleted document kept: %v", fourth)
	}
	res, _ = coretest.Call(t, e.app, alice, "vector_query", map[string]any{"collection": "doc_chunks", "query": "parcels warehouse", "k": 10})
	for _, h := range res.Structured()["results"].([]any) {
		if h.(map[string]any)["source"] == "handbook/shipping.md" {
			t.Fatal("chunks of a deleted document are still retrievable")
		}
	}
}

func TestIngestDeniedByDefaultPolicy(t *testing.T) {
	e := newEnv(t, `{"grants":[{"subject":"*","actions":["read","search","scan"],"prefix":""}]}`, map[string]string{"a.md": "x"})
	if _, te := coretest.Call(t, e.app, alice, "doc_index", map[string]any{"collection": "doc_chunks"}); te == nil || te.Kind != catalog.KindAuthorization {
		t.Fatalf("ingest without the ingest action: %v", te)
	}
	if e.emb.texts.Load() != 0 {
		t.Fatal("a denied ingestion embedded text")
	}
}

func TestVectorSearchValidatesEmbeddings(t *testing.T) {
	e := newEnv(t, policy, nil)
	vec := make([]any, 64)
	for i := range vec {
		vec[i] = 0.1
	}
	if _, te := coretest.Call(t, e.app, alice, "vector_search", map[string]any{"collection": "doc_chunks", "embedding": vec, "k": 5}); te != nil {
		t.Fatal(te)
	}
	for name, args := range map[string]map[string]any{
		"wrong width": {"collection": "doc_chunks", "embedding": []any{0.1, 0.2}},
		"huge k":      {"collection": "doc_chunks", "embedding": vec, "k": 100000},
		"not numbers": {"collection": "doc_chunks", "embedding": []any{"a"}},
	} {
		if _, te := coretest.Call(t, e.app, alice, "vector_search", args); te == nil || te.Kind != catalog.KindValidation {
			t.Errorf("%s: %v", name, te)
		}
	}
}

// TestUnsetConnectorsServeNotConfigured: with no optional connector, every
// tool is still listed, and a valid call is refused as unavailable naming
// what to set; the listing's bounds come from the family's Config.
func TestUnsetConnectorsServeNotConfigured(t *testing.T) {
	s := coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "full", "ARROWHEAD_SQL_QUERY_MAX_LENGTH": "5000"})
	store, err := fs.OpenDocuments(fs.DocumentsConfig{Root: t.TempDir(), Extensions: s.DocAllowedExtensions})
	if err != nil {
		t.Fatal(err)
	}
	app, err := core.New(coretest.Deps(s, portstest.AllowAll{}, data.Family.With(data.Ports{Authorizer: portstest.AllowAll{},
		Vetter: sqlguard.New(sqlguard.Config{}), Embedder: embed.NewDeterministic(64), Documents: store})))
	if err != nil {
		t.Fatal(err)
	}
	const noVectors = "Vector retrieval is not configured: the embedded index serves it while neither ARROWHEAD_SQL_DSN nor " +
		"ARROWHEAD_VECTOR_WRITE_DSN is set; with PostgreSQL, ARROWHEAD_PGVECTOR_COLLECTIONS names the collections."
	for tool, c := range map[string]struct {
		args map[string]any
		want string
	}{
		"sql_query":     {map[string]any{"query": "select 1"}, "The SQL connector is not configured (ARROWHEAD_SQL_DSN)."},
		"vector_search": {map[string]any{"collection": "docs", "embedding": []any{0.1}}, noVectors},
		"vector_query":  {map[string]any{"collection": "docs", "query": "q"}, noVectors},
		"hybrid_query":  {map[string]any{"collection": "docs", "query": "q"}, noVectors},
		"doc_index": {map[string]any{"collection": "docs"}, "Ingestion is not configured: the embedded index takes it while neither ARROWHEAD_SQL_DSN nor " +
			"ARROWHEAD_VECTOR_WRITE_DSN is set; with PostgreSQL, it needs ARROWHEAD_VECTOR_WRITE_DSN and ARROWHEAD_PGVECTOR_COLLECTIONS."},
	} {
		_, te := coretest.Call(t, app, alice, tool, c.args)
		if te == nil || te.Kind != catalog.KindUnavailable || te.Message != c.want {
			t.Errorf("%s: %v, want unavailable %q", tool, te, c.want)
		}
	}
	listed := data.Family.Declare(s)
	if len(listed.Tools) != 5 {
		t.Fatalf("%d tools declared", len(listed.Tools))
	}
	if m := listed.Tools[0].Input().Properties["query"].MaxLength; listed.Tools[0].Name() != "sql_query" || m == nil || *m != 5000 {
		t.Errorf("sql_query's query bound %v, want ARROWHEAD_SQL_QUERY_MAX_LENGTH", m)
	}
}
