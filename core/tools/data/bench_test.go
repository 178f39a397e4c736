package data_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/adapters/fs"
	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/adapters/sqlguard"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/adapters/vectorindex"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/authz"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/embed"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/data"
	"github.com/arrowhead-go/arrowhead/internal/pgtest"
	"github.com/arrowhead-go/arrowhead/migrations"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// benchCorpus writes about totalBytes of Markdown documents.
func benchCorpus(b *testing.B, root string, totalBytes int) {
	b.Helper()
	words := strings.Fields("refund shipping order invoice customer warehouse parcel tracking express standard delivery return policy window approval payment method store credit gift card final sale security key rotation incident report")
	rng := rand.New(rand.NewSource(7))
	written := 0
	for i := 0; written < totalBytes; i++ {
		var sb strings.Builder
		fmt.Fprintf(&sb, "# Document %d\n\n", i)
		for sb.Len() < 10_000 {
			for w := 0; w < 12; w++ {
				sb.WriteString(words[rng.Intn(len(words))])
				sb.WriteByte(' ')
			}
			sb.WriteString(".\n")
			if rng.Intn(6) == 0 {
				sb.WriteString("\n")
			}
		}
		p := filepath.Join(root, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("doc%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		written += sb.Len()
	}
}

// BenchmarkDocIndex10MBEmbedded indexes a 10 MB corpus into the embedded
// index with the deterministic embedder (384 dimensions) and reports
// chunks per second.
func BenchmarkDocIndex10MBEmbedded(b *testing.B) {
	benchDocIndex(b, func(b *testing.B, s *settings.Settings) (ports.VectorReader, ports.VectorWriter, func()) {
		store, err := sqlite.Open(sqlite.Config{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		idx, err := vectorindex.OpenVectorIndex(context.Background(), vectorindex.VectorIndexConfig{Collections: s.PgvectorCollections, Dimensions: 384, Persist: sqlite.NewVectorStore(store)})
		if err != nil {
			b.Fatal(err)
		}
		return idx, idx, func() { _ = idx.Close(); _ = store.Close() }
	})
}

// BenchmarkDocIndex10MBPgvector is the same into pgvector (PGlite in CI;
// needs ARROWHEAD_TEST_PGVECTOR_DSN). Each iteration indexes into a freshly
// emptied table.
func BenchmarkDocIndex10MBPgvector(b *testing.B) {
	dsn := os.Getenv("ARROWHEAD_TEST_PGVECTOR_DSN")
	if dsn == "" {
		b.Skip("ARROWHEAD_TEST_PGVECTOR_DSN is not set; start PGlite with: eval \"$(.ci/pglite.sh start /tmp/ahpglite 54329)\"")
	}
	pool, err := postgres.NewPool(context.Background(), dsn, postgres.WithMaxConns(1))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	norm, err := postgres.NormalizeDSN(dsn)
	if err != nil {
		b.Fatal(err)
	}
	benchDocIndex(b, func(b *testing.B, s *settings.Settings) (ports.VectorReader, ports.VectorWriter, func()) {
		cfg := postgres.VectorConfigFromSettings(*s)
		conn, err := pgx.Connect(context.Background(), norm)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := migrations.Apply(context.Background(), conn, migrations.Config{Collections: s.PgvectorCollections, Columns: cfg.Columns, Dimensions: 384}); err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Exec(context.Background(), "DELETE FROM doc_chunks_bench"); err != nil {
			b.Fatal(err)
		}
		_ = conn.Close(context.Background())
		store, err := postgres.NewVectorStore(cfg, pool)
		if err != nil {
			b.Fatal(err)
		}
		// PGlite refuses a connection that comes while the one above is
		// still leaving: wait until the pool holds its slot.
		if !pgtest.Retry(pgtest.SlotWait, func() bool { return store.Health(context.Background()) == ports.HealthOK }) {
			b.Fatal("the pgvector pool cannot connect")
		}
		return store, store, func() {}
	})
}

type openStore func(b *testing.B, s *settings.Settings) (ports.VectorReader, ports.VectorWriter, func())

func benchDocIndex(b *testing.B, open openStore) {
	root := b.TempDir()
	benchCorpus(b, root, 10<<20)
	vars := map[string]string{
		"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_RATE_LIMIT_ENABLED": "false",
		"ARROWHEAD_PGVECTOR_COLLECTIONS": "doc_chunks_bench", "ARROWHEAD_EMBEDDING_DIMENSIONS": "384",
		"ARROWHEAD_VECTOR_INDEX_MAX_FILES": "5000", "ARROWHEAD_VECTOR_INDEX_MAX_CHUNKS": "100000",
		"ARROWHEAD_VECTOR_INDEX_TIMEOUT_SECONDS": "600",
	}
	s := coretest.Settings(b, vars)
	store, err := fs.OpenDocuments(fs.DocumentsConfig{Root: root, Extensions: s.DocAllowedExtensions})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	chunks := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		reader, writer, done := open(b, s)
		app, err := core.New(core.Deps{Settings: s, Authorizer: authz.AllowAll{}, Rates: &portstest.Counter{}, Audit: &portstest.Audit{},
			Tracer: nop.Tracer{}, Metrics: nop.Metrics{}, Clock: ports.SystemClock{},
			Families: []core.Member{data.Family.With(data.Ports{Authorizer: authz.AllowAll{}, Vetter: sqlguard.New(sqlguard.Config{}),
				Vectors: reader, Writer: writer, Embedder: embed.NewDeterministic(384), Documents: store})}})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := app.Call(context.Background(), ports.Operator(), "doc_index", map[string]any{"collection": "doc_chunks_bench"})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if tr := res.Structured()["truncated"].([]any); len(tr) > 0 {
			b.Fatalf("indexing was cut short: %v", tr)
		}
		chunks += int(res.Structured()["chunks_embedded"].(float64))
		done()
		b.StartTimer()
	}
	b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
}
