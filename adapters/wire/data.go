package wire

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/bolt"
	"github.com/arrowhead-go/arrowhead/adapters/httpx"
	"github.com/arrowhead-go/arrowhead/adapters/postgres"
	"github.com/arrowhead-go/arrowhead/adapters/sqlite"
	"github.com/arrowhead-go/arrowhead/adapters/vectorindex"
	"github.com/arrowhead-go/arrowhead/core/embed"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// connectors are the data family's adapters; a connector the settings do
// not configure stays nil, which the data family serves as not configured.
type connectors struct {
	embedder ports.Embedder
	sql      ports.SQLRunner
	vectors  ports.VectorReader
	writer   ports.VectorWriter
}

// openData opens the data connectors the settings configure: the SQL runner
// (ARROWHEAD_SQL_DSN), the vector reader and writer (pgvector over the SQL
// and write DSNs, or the embedded index when no Postgres is configured),
// and the embedder. Each DSN gets one connection pool, shared by the
// adapters on it.
func (rt *Runtime) openData(ctx context.Context, s *settings.Settings, egress ports.Egress) (fd connectors, err error) {
	fd.embedder, err = openEmbedder(s, egress)
	if err != nil {
		return fd, err
	}

	var readPool *postgres.Pool
	if s.SQLDSN != "" {
		readPool, err = rt.openPool(ctx, s.SQLDSN)
		if err != nil {
			return fd, fmt.Errorf("ARROWHEAD_SQL_DSN: %w", err)
		}
		runner, err := postgres.NewSQLRunner(readPool)
		if err != nil {
			return fd, fmt.Errorf("ARROWHEAD_SQL_DSN: %w", err)
		}
		rt.Health = append(rt.Health, runner)
		fd.sql = runner
	}

	if s.SQLDSN == "" && s.VectorWriteDSN == "" {
		// The single-machine default: an embedded index under the data
		// directory serves both retrieval and ingestion, with a default
		// collection when none is named.
		if len(s.VectorCollections()) == 0 {
			return fd, nil
		}
		// The index lives in the store every process on the data
		// directory shares; each keeps it in memory and follows the
		// others' writes (adapters/vectorindex/vectors_persist.go).
		store, err := rt.sharedStore(ctx, s)
		if err != nil {
			return fd, err
		}
		cfg := vectorindex.VectorIndexConfigFromSettings(*s)
		cfg.Persist = sqlite.NewVectorStore(store)
		idx, err := vectorindex.OpenVectorIndex(ctx, cfg)
		if err != nil {
			return fd, fmt.Errorf("ARROWHEAD_DATA_DIR: the embedded vector index cannot be opened: %w", err)
		}
		rt.closers = append(rt.closers, func(context.Context) error { return idx.Close() })
		fd.vectors, fd.writer = idx, idx
		return fd, nil
	}
	cfg := postgres.VectorConfigFromSettings(*s)
	if readPool != nil && len(s.PgvectorCollections) > 0 {
		reader, err := postgres.NewVectorStore(cfg, readPool)
		if err != nil {
			return fd, fmt.Errorf("ARROWHEAD_PGVECTOR_COLLECTIONS: %w", err)
		}
		rt.Health = append(rt.Health, reader)
		fd.vectors = reader
	}
	if s.VectorWriteDSN != "" && len(s.PgvectorCollections) > 0 {
		pool, err := rt.openPool(ctx, s.VectorWriteDSN)
		if err != nil {
			return fd, fmt.Errorf("ARROWHEAD_VECTOR_WRITE_DSN: %w", err)
		}
		cfg.Name = postgres.VectorWriterName
		writer, err := postgres.NewVectorStore(cfg, pool)
		if err != nil {
			return fd, fmt.Errorf("ARROWHEAD_PGVECTOR_COLLECTIONS: %w", err)
		}
		rt.Health = append(rt.Health, writer)
		fd.writer = writer
	}
	return fd, nil
}

// openPool returns the PostgreSQL connection pool over dsn, opening it on
// first use; it is closed with the runtime. Variables that name the same
// database (ARROWHEAD_STATE_DSN and ARROWHEAD_MEMORY_DSN, say) share it;
// opts apply when this call opens it.
func (rt *Runtime) openPool(ctx context.Context, dsn string, opts ...postgres.Option) (*postgres.Pool, error) {
	if pool, ok := rt.pools[dsn]; ok {
		return pool, nil
	}
	pool, err := postgres.NewPool(ctx, dsn, opts...)
	if err != nil {
		return nil, err
	}
	if rt.pools == nil {
		rt.pools = map[string]*postgres.Pool{}
	}
	rt.pools[dsn] = pool
	rt.closers = append(rt.closers, func(context.Context) error { pool.Close(); return nil })
	return pool, nil
}

// previousStoreLockWait bounds the wait for the previous release's bbolt
// file while another process holds it: a server starting beside us that
// is importing it holds it for seconds at most; a previous-release server
// still running on the directory holds it for good, and is named.
const previousStoreLockWait = 30 * time.Second

// withPreviousStore opens the previous release's bbolt file under
// ARROWHEAD_DATA_DIR, runs fn on it, and closes it, so its lock is held
// only while an import reads it and never keeps another server process
// out. A data directory left by a build before that (a vectors/ directory
// of log and snapshot files) is refused rather than silently ignored.
func withPreviousStore(s *settings.Settings, fn func(*bolt.Store) error) error {
	if _, err := os.Stat(filepath.Join(s.DataDir, "vectors", "LOCK")); err == nil {
		return errors.New("ARROWHEAD_DATA_DIR holds an embedded vector index in the format of an earlier build (its vectors directory); remove that directory and run doc_index again")
	}
	cfg := bolt.ConfigFromSettings(*s)
	cfg.LockTimeout = previousStoreLockWait
	store, err := bolt.Open(cfg)
	if err != nil {
		if errors.Is(err, bolt.ErrLocked) {
			return fmt.Errorf("%w (a server of the previous release may still be running on it: stop it, and this one imports its data)", err)
		}
		if errors.Is(err, bolt.ErrCorrupt) {
			return err // names ARROWHEAD_DATA_DIR
		}
		return fmt.Errorf("ARROWHEAD_DATA_DIR: the previous release's store cannot be opened: %w", err)
	}
	return errors.Join(fn(store), store.Close())
}

// openEmbedder builds the configured embedder.
func openEmbedder(s *settings.Settings, egress ports.Egress) (ports.Embedder, error) {
	switch s.EmbeddingProvider {
	case "http":
		e, err := httpx.NewHTTPEmbedder(httpx.EmbedderConfig{
			Endpoint:         s.EmbeddingEndpoint,
			Model:            s.EmbeddingModel,
			APIKey:           s.EmbeddingAPIKey,
			Dimensions:       s.EmbeddingDimensions,
			BatchSize:        s.EmbeddingBatchSize,
			MaxTexts:         s.EmbeddingMaxTexts,
			MaxResponseBytes: int64(s.EmbeddingMaxResponseBytes),
			Timeout:          settings.Seconds(s.EmbeddingTimeoutSeconds),
			Internal:         httpx.InternalEndpoint(s.EmbeddingEndpoint, s.LLMInternalHosts),
		}, egress)
		if err != nil {
			return nil, errors.New("ARROWHEAD_EMBEDDING_ENDPOINT: the embedding client cannot be configured")
		}
		return e, nil
	default:
		return embed.NewDeterministic(s.EmbeddingDimensions).WithMaxTexts(s.EmbeddingMaxTexts), nil
	}
}
