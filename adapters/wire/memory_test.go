package wire_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/internal/pgtest"
	"github.com/arrowhead-go/arrowhead/migrations"
	"github.com/arrowhead-go/arrowhead/ports"
)

// TestMemoryRecallStaysKeywordWithoutPgvector: with the real (http)
// embedder configured but a memory database without pgvector, the server
// neither embeds memories nor queries (the provider gets no request) and
// labels its recall keyword, as it performed it.
func TestMemoryRecallStaysKeywordWithoutPgvector(t *testing.T) {
	dsn := pgtest.PrivateSchema(t, pgtest.PostgresDSN(t))
	c, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	_, skipped, err := migrations.Apply(t.Context(), c, migrations.Config{Columns: migrations.DefaultColumns(), Dimensions: 8, Memory: true})
	_ = c.Close(context.Background())
	if err != nil || len(skipped) != 1 {
		t.Fatalf("migrate: skipped %v, %v", skipped, err)
	}
	var embeds atomic.Int32
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		embeds.Add(1)
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	t.Cleanup(provider.Close)
	u, _ := url.Parse(provider.URL)
	env := map[string]string{"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_JAIL_ROOT": t.TempDir(), "ARROWHEAD_DOCS_ROOT": t.TempDir(),
		"ARROWHEAD_DATA_DIR": t.TempDir(), "ARROWHEAD_MEMORY_DSN": dsn,
		"ARROWHEAD_EMBEDDING_PROVIDER": "http", "ARROWHEAD_EMBEDDING_DIMENSIONS": "8",
		"ARROWHEAD_EMBEDDING_ENDPOINT": provider.URL + "/v1/embeddings", "ARROWHEAD_LLM_INTERNAL_HOSTS": u.Host,
	}
	s := coretest.Settings(t, env)
	rt, err := wire.Build(t.Context(), s, wire.Options{AuditWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	if _, err := rt.App.Call(t.Context(), ports.Operator(), "memory_store", map[string]any{"namespace": "n", "content": "prefers metric units"}); err != nil {
		t.Fatalf("memory_store: %v", err)
	}
	res, err := rt.App.Call(t.Context(), ports.Operator(), "memory_search", map[string]any{"namespace": "n", "query": "metric"})
	if err != nil {
		t.Fatalf("memory_search: %v", err)
	}
	if res.Structured()["recall"] != "keyword" || embeds.Load() != 0 {
		t.Fatalf("recall %v with %d embedding requests", res.Structured()["recall"], embeds.Load())
	}
}
