package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgvector/pgvector-go"

	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/migrations"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The pgvector store: VectorStore, a ports.VectorReader and
// ports.VectorWriter over chunk tables created by the migrations package.
// Production builds one on the read-only ARROWHEAD_SQL_DSN's pool for the
// read tools and one on the separate write-capable
// ARROWHEAD_VECTOR_WRITE_DSN's pool for ingestion.
//
// Every statement is built once, at construction, from identifiers that
// passed a strict guard (^[a-z_][a-z0-9_]{0,62}$) and are quoted anyway;
// only allow-listed collections get statements at all. Every value (tenant,
// embedding, query text, language, limits) is a bound parameter. The tenant
// is whatever the core passes, which is the authenticated caller; every
// statement filters on it.

// Defaults and limits of the pgvector store.
const (
	// DefaultVectorStatementTimeout bounds one statement on the server.
	DefaultVectorStatementTimeout = 10 * time.Second
	// MaxVectorDimensions is the widest vector pgvector stores.
	MaxVectorDimensions = 16000
	// MaxVectorSources bounds one Sources listing.
	MaxVectorSources = 100_000

	// The per-argument bounds (tenant, id, source, content, query, k,
	// fusion options) are every vector store's: ports/vectorcheck.go.

	// upsertBatch is how many INSERTs one pipelined round trip carries.
	upsertBatch = 256
	// maxEFSearch is pgvector's ceiling for hnsw.ef_search.
	maxEFSearch = 1000

	// VectorReaderName and VectorWriterName are the health reporter names
	// of the store on the read DSN and of the one on the write DSN.
	VectorReaderName = "pgvector"
	VectorWriterName = "pgvector_write"
)

// VectorColumns names the columns of a chunk table
// (ARROWHEAD_PGVECTOR_*_COLUMN): the columns the migrations create.
type VectorColumns = migrations.Columns

// DefaultVectorColumns returns the seed's default column names.
func DefaultVectorColumns() VectorColumns { return migrations.DefaultColumns() }

// VectorConfig configures a VectorStore.
type VectorConfig struct {
	// Name is the store's health reporter name; empty means
	// VectorReaderName.
	Name string
	// Collections is the allow-list (ARROWHEAD_PGVECTOR_COLLECTIONS).
	Collections []string
	// Columns are the chunk tables' column names.
	Columns VectorColumns
	// Dimensions is the embedding width (ARROWHEAD_EMBEDDING_DIMENSIONS),
	// the width the tables were migrated with.
	Dimensions int
	// MaxK bounds k (ARROWHEAD_PGVECTOR_MAX_K); 0 means DefaultVectorMaxK.
	MaxK int
	// StatementTimeout is each statement's server-side timeout; 0 means
	// DefaultVectorStatementTimeout.
	StatementTimeout time.Duration
}

// VectorConfigFromSettings maps the settings onto a store configuration;
// the statement timeout is ARROWHEAD_SQL_TIMEOUT_SECONDS.
func VectorConfigFromSettings(s settings.Settings) VectorConfig {
	return VectorConfig{
		Collections:      slices.Clone(s.PgvectorCollections),
		Columns:          migrations.ConfigFromSettings(s).Columns,
		Dimensions:       s.EmbeddingDimensions,
		MaxK:             s.PgvectorMaxK,
		StatementTimeout: time.Duration(s.SQLTimeoutSeconds * float64(time.Second)),
	}
}

// ---- statements ----

// vectorTable holds one collection's statements, built from guarded,
// quoted identifiers.
type vectorTable struct {
	search, hybrid, hashes, upsert, truncate, sources string
}

func buildTable(collection string, c VectorColumns) vectorTable {
	q := func(s string) string { return pgx.Identifier{s}.Sanitize() }
	t, id, tenant, content, emb := q(collection), q(c.ID), q(c.Tenant), q(c.Content), q(c.Embedding)
	source, idx, hash, tsv := q(c.Source), q(c.ChunkIndex), q(c.ContentHash), q(c.Tsvector)
	// Aliases and CTE names are quoted mixed-case identifiers, which no
	// guarded (lower-case) table or column name can equal or shadow.
	return vectorTable{
		search: `SELECT ` + id + `, ` + source + `, ` + idx + `, ` + content + `, 1 - (` + emb + ` <=> $2)
FROM ` + t + `
WHERE ` + tenant + ` = $1
ORDER BY ` + emb + ` <=> $2
LIMIT $3`,
		// $1 tenant, $2 embedding, $3 query text, $4 pool per branch,
		// $5 language, $6 RRF k, $7 k.
		hybrid: `WITH "Vec" AS (
  SELECT "Id", row_number() OVER (ORDER BY "Dist") AS "Rank"
  FROM (
    SELECT ` + id + ` AS "Id", ` + emb + ` <=> $2 AS "Dist"
    FROM ` + t + `
    WHERE ` + tenant + ` = $1
    ORDER BY ` + emb + ` <=> $2
    LIMIT $4
  ) AS "V"
), "Query" AS (
  SELECT websearch_to_tsquery($5::regconfig, $3) AS "Q"
), "Kw" AS (
  SELECT "Id", row_number() OVER (ORDER BY "TextRank" DESC, "Id" COLLATE "C") AS "Rank"
  FROM (
    SELECT ` + id + ` AS "Id", ts_rank_cd(` + tsv + `, "Query"."Q") AS "TextRank"
    FROM ` + t + `, "Query"
    WHERE ` + tenant + ` = $1 AND ` + tsv + ` @@ "Query"."Q"
    ORDER BY "TextRank" DESC, ` + id + ` COLLATE "C"
    LIMIT $4
  ) AS "K"
), "Fused" AS (
  SELECT COALESCE("Vec"."Id", "Kw"."Id") AS "Id",
         COALESCE(1.0::float8 / ($6::int8 + "Vec"."Rank"), 0) + COALESCE(1.0::float8 / ($6::int8 + "Kw"."Rank"), 0) AS "Score"
  FROM "Vec" FULL OUTER JOIN "Kw" ON "Vec"."Id" = "Kw"."Id"
)
SELECT "C".` + id + `, "C".` + source + `, "C".` + idx + `, "C".` + content + `, "Fused"."Score"
FROM "Fused" JOIN ` + t + ` AS "C" ON "C".` + id + ` = "Fused"."Id"
WHERE "C".` + tenant + ` = $1
ORDER BY "Fused"."Score" DESC, "Fused"."Id" COLLATE "C"
LIMIT $7`,
		hashes: `SELECT ` + idx + `, ` + hash + ` FROM ` + t + ` WHERE ` + tenant + ` = $1 AND ` + source + ` = $2`,
		// The WHERE makes a conflict on an id held by another tenant update
		// nothing; the writer then refuses the batch.
		upsert: `INSERT INTO ` + t + ` AS "C" (` + id + `, ` + tenant + `, ` + source + `, ` + idx + `, ` + content + `, ` + hash + `, ` + emb + `)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (` + id + `) DO UPDATE SET
  ` + source + ` = EXCLUDED.` + source + `, ` + idx + ` = EXCLUDED.` + idx + `, ` + content + ` = EXCLUDED.` + content + `,
  ` + hash + ` = EXCLUDED.` + hash + `, ` + emb + ` = EXCLUDED.` + emb + `
WHERE "C".` + tenant + ` = EXCLUDED.` + tenant,
		truncate: `DELETE FROM ` + t + ` WHERE ` + tenant + ` = $1 AND ` + source + ` = $2 AND ` + idx + ` >= $3`,
		sources: `SELECT "S" FROM (
  SELECT DISTINCT ` + source + ` AS "S" FROM ` + t + `
  WHERE ` + tenant + ` = $1 AND ` + source + ` LIKE $2 ESCAPE E'\\'
) AS "D"
ORDER BY "S" COLLATE "C"
LIMIT $3`,
	}
}

// likePrefix makes prefix a LIKE pattern matching exactly the strings that
// start with it: the pattern characters and the escape are escaped.
func likePrefix(prefix string) string {
	var b strings.Builder
	b.Grow(len(prefix) + 8)
	for i := 0; i < len(prefix); i++ {
		switch c := prefix[i]; c {
		case '\\', '%', '_':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('%')
	return b.String()
}

// ---- store ----

// VectorStore is a ports.VectorReader and ports.VectorWriter over pgvector,
// and a ports.HealthReporter (VectorConfig.Name). Each call is one
// transaction (read-only unless it writes) under a server-side statement
// timeout. It is safe for concurrent use.
type VectorStore struct {
	pool    *Pool
	name    string
	tables  map[string]vectorTable
	names   []string
	dim     int
	maxK    int
	timeout time.Duration
	// hnsw records which HNSW settings the server's pgvector knows, probed
	// on first use: 0 unknown, 1 none, 2 ef_search, 3 ef_search and
	// iterative_scan (pgvector 0.8+).
	hnsw atomic.Int32
}

var (
	_ ports.VectorReader   = (*VectorStore)(nil)
	_ ports.VectorWriter   = (*VectorStore)(nil)
	_ ports.HealthReporter = (*VectorStore)(nil)
)

// NewVectorStore returns a store on pool for the allow-listed collections
// of cfg, with every statement built here. The pool should be on the
// read-only ARROWHEAD_SQL_DSN for the read tools and on
// ARROWHEAD_VECTOR_WRITE_DSN for ingestion.
func NewVectorStore(cfg VectorConfig, pool *Pool) (*VectorStore, error) {
	if pool == nil {
		return nil, fmt.Errorf("%w: no connection pool", ports.ErrVectorConfig)
	}
	if cfg.Dimensions < 1 || cfg.Dimensions > MaxVectorDimensions {
		return nil, fmt.Errorf("%w: dimensions must be between 1 and %d", ports.ErrVectorConfig, MaxVectorDimensions)
	}
	maxK, err := ports.CheckVectorMaxK(cfg.MaxK)
	if err != nil {
		return nil, err
	}
	timeout := cfg.StatementTimeout
	if timeout == 0 {
		timeout = DefaultVectorStatementTimeout
	}
	if timeout < time.Millisecond || timeout.Milliseconds() > math.MaxInt32 {
		return nil, fmt.Errorf("%w: statement timeout out of range", ports.ErrVectorConfig)
	}
	c := cfg.Columns
	named := []struct{ what, name string }{
		{"tenant", c.Tenant}, {"id", c.ID}, {"content", c.Content}, {"embedding", c.Embedding},
		{"source", c.Source}, {"chunk index", c.ChunkIndex}, {"content hash", c.ContentHash}, {"tsvector", c.Tsvector},
	}
	seen := map[string]bool{}
	for _, n := range named {
		if !ports.ValidVectorIdentifier(n.name) {
			return nil, fmt.Errorf("%w: the %s column name must be a lowercase identifier", ports.ErrVectorConfig, n.what)
		}
		if seen[n.name] {
			return nil, fmt.Errorf("%w: two columns share the name %q", ports.ErrVectorConfig, n.name)
		}
		seen[n.name] = true
	}
	name := cfg.Name
	if name == "" {
		name = VectorReaderName
	}
	s := &VectorStore{pool: pool, name: name, tables: map[string]vectorTable{}, dim: cfg.Dimensions, maxK: maxK, timeout: timeout}
	for i, name := range cfg.Collections {
		if !ports.ValidVectorIdentifier(name) {
			return nil, fmt.Errorf("%w: collection %d is not a lowercase identifier", ports.ErrVectorConfig, i+1)
		}
		if _, dup := s.tables[name]; dup {
			return nil, fmt.Errorf("%w: collection %q is listed twice", ports.ErrVectorConfig, name)
		}
		s.tables[name] = buildTable(name, c)
		s.names = append(s.names, name)
	}
	return s, nil
}

// table returns the statements of an allow-listed collection. The core
// checked the allow-list already; this is the second lock on the door.
func (s *VectorStore) table(collection string) (vectorTable, error) {
	t, ok := s.tables[collection]
	if !ok {
		return t, vectorErr(ports.VectorFailed, ports.ErrVectorCollection)
	}
	return t, nil
}

// Name implements ports.HealthReporter.
func (s *VectorStore) Name() string { return s.name }

// Health is ok when the database answers and every allow-listed table
// exists, degraded when a table is missing, down otherwise.
func (s *VectorStore) Health(ctx context.Context) ports.HealthState {
	return s.pool.health(ctx, s.tablesPresent)
}

// tablesPresent is the health check: every allow-listed table exists.
func (s *VectorStore) tablesPresent(ctx context.Context, conn *pgx.Conn) error {
	var missing int
	err := conn.QueryRow(ctx, `SELECT count(*) FROM unnest($1::text[]) AS n WHERE to_regclass(quote_ident(n)) IS NULL`, s.names).Scan(&missing)
	if err != nil {
		return err
	}
	if missing > 0 {
		return errors.New("an allow-listed collection table is missing")
	}
	return nil
}

// inTx runs fn in one transaction, read-only or not, under SET LOCAL
// statement_timeout plus the settings extra returns (name, value pairs for
// set_config), and commits when fn succeeds.
func (s *VectorStore) inTx(ctx context.Context, readOnly bool, extra func(context.Context, pgx.Tx) ([]string, error), fn func(pgx.Tx) error) error {
	mode := pgx.ReadWrite
	if readOnly {
		mode = pgx.ReadOnly
	}
	return s.pool.inTx(ctx, mode, true, func(tx pgx.Tx) error {
		kv := []string{"statement_timeout", strconv.FormatInt(max(s.timeout.Milliseconds(), 1), 10)}
		if extra != nil {
			more, err := extra(ctx, tx)
			if err != nil {
				return err
			}
			kv = append(kv, more...)
		}
		var sql strings.Builder
		args := make([]any, 0, len(kv))
		sql.WriteString("SELECT ")
		for i := 0; i+1 < len(kv); i += 2 {
			if i > 0 {
				sql.WriteString(", ")
			}
			fmt.Fprintf(&sql, "set_config($%d, $%d, true)", i+1, i+2)
			args = append(args, kv[i], kv[i+1])
		}
		if _, err := tx.Exec(ctx, sql.String(), args...); err != nil {
			return err
		}
		return fn(tx)
	})
}

// ---- reads ----

// hnswSettings returns the set_config pairs that make an HNSW scan return
// the pool it is asked for: ef_search at least the pool, and (pgvector
// 0.8+) an iterative scan in strict order, so a tenant filter cannot
// starve the result below k.
func (s *VectorStore) hnswSettings(pool int) func(context.Context, pgx.Tx) ([]string, error) {
	return func(ctx context.Context, tx pgx.Tx) ([]string, error) {
		level := s.hnsw.Load()
		if level == 0 {
			var version string
			err := tx.QueryRow(ctx, `SELECT COALESCE((SELECT extversion FROM pg_extension WHERE extname = 'vector'), '')`).Scan(&version)
			if err != nil {
				return nil, err
			}
			level = hnswLevel(version)
			s.hnsw.Store(level)
		}
		ef := strconv.Itoa(min(max(pool, 40), maxEFSearch))
		switch level {
		case 3:
			return []string{"hnsw.ef_search", ef, "hnsw.iterative_scan", "strict_order"}, nil
		case 2:
			return []string{"hnsw.ef_search", ef}, nil
		}
		return nil, nil
	}
}

// hnswLevel reads pgvector's version: HNSW (and hnsw.ef_search) arrived
// in 0.5.0, iterative index scans in 0.8.0.
func hnswLevel(version string) int32 {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return 1
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	switch {
	case err1 != nil || err2 != nil:
		return 1
	case major > 0 || minor >= 8:
		return 3
	case minor >= 5:
		return 2
	}
	return 1
}

// Search returns tenant's k chunks nearest to embedding by cosine
// distance, best first, scored 1 - distance (cosine similarity).
func (s *VectorStore) Search(ctx context.Context, collection, tenant string, embedding []float32, k int) ([]ports.VectorHit, error) {
	t, err := s.table(collection)
	if err != nil {
		return nil, err
	}
	if err := ports.CheckVectorQuery(tenant, embedding, k, s.maxK, s.dim); err != nil {
		return nil, err
	}
	var hits []ports.VectorHit
	err = s.inTx(ctx, true, s.hnswSettings(k), func(tx pgx.Tx) error {
		var err error
		hits, err = collectHits(tx.Query(ctx, t.search, tenant, pgvector.NewVector(embedding), k))
		return err
	})
	if err != nil {
		return nil, classifyVector("searching", err)
	}
	return hits, nil
}

// Hybrid fuses, in one statement, the vector ranking (cosine distance) and
// the full-text ranking (ts_rank_cd of websearch_to_tsquery in
// opt.Language) of tenant's chunks by reciprocal rank fusion: each branch
// contributes its top k*CandidateMultiplier, a chunk scores the sum of
// 1/(RRFK + rank) over the branches that ranked it, and the best k are
// returned (ties by id).
func (s *VectorStore) Hybrid(ctx context.Context, collection, tenant, query string, embedding []float32, k int, opt ports.HybridOptions) ([]ports.VectorHit, error) {
	t, err := s.table(collection)
	if err != nil {
		return nil, err
	}
	if err := ports.CheckVectorQuery(tenant, embedding, k, s.maxK, s.dim); err != nil {
		return nil, err
	}
	lang, err := ports.CheckHybridOptions(query, opt)
	if err != nil {
		return nil, err
	}
	pool := k * opt.CandidateMultiplier
	var hits []ports.VectorHit
	err = s.inTx(ctx, true, s.hnswSettings(pool), func(tx pgx.Tx) error {
		var err error
		hits, err = collectHits(tx.Query(ctx, t.hybrid, tenant, pgvector.NewVector(embedding), query, pool, lang, opt.RRFK, k))
		return err
	})
	if err != nil {
		return nil, classifyVector("hybrid searching", err)
	}
	return hits, nil
}

func collectHits(rows pgx.Rows, err error) ([]ports.VectorHit, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	hits := []ports.VectorHit{}
	for rows.Next() {
		var h ports.VectorHit
		if err := rows.Scan(&h.ID, &h.Source, &h.Index, &h.Content, &h.Score); err != nil {
			return nil, err
		}
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

// ---- ingestion ----

// Hashes returns the stored content hash of each chunk of source, by index.
func (s *VectorStore) Hashes(ctx context.Context, collection, tenant, source string) (map[int]string, error) {
	t, err := s.table(collection)
	if err != nil {
		return nil, err
	}
	if err := ports.CheckVectorSource(tenant, source); err != nil {
		return nil, err
	}
	out := map[int]string{}
	err = s.inTx(ctx, true, nil, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, t.hashes, tenant, source)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var idx int
			var hash *string // a row written without a hash is re-embedded
			if err := rows.Scan(&idx, &hash); err != nil {
				return err
			}
			if hash != nil {
				out[idx] = *hash
			} else {
				out[idx] = ""
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, classifyVector("reading hashes", err)
	}
	return out, nil
}

// Upsert inserts or replaces chunks by id, in order, in one transaction:
// all or nothing. A chunk whose id belongs to another tenant refuses the
// call, and so does one whose position (tenant, source, index) another id
// holds (the position index of the migrated schema).
func (s *VectorStore) Upsert(ctx context.Context, collection string, chunks []ports.Chunk) error {
	t, err := s.table(collection)
	if err != nil {
		return err
	}
	if len(chunks) == 0 {
		return nil
	}
	for _, ch := range chunks {
		if err := ports.CheckVectorChunk(ch, s.dim); err != nil {
			return err
		}
	}
	err = s.inTx(ctx, false, nil, func(tx pgx.Tx) error {
		for start := 0; start < len(chunks); start += upsertBatch {
			part := chunks[start:min(start+upsertBatch, len(chunks))]
			b := &pgx.Batch{}
			for _, ch := range part {
				b.Queue(t.upsert, ch.ID, ch.Tenant, ch.Source, ch.Index, ch.Content, ch.Hash, pgvector.NewVector(ch.Embedding))
			}
			br := tx.SendBatch(ctx, b)
			for range part {
				tag, err := br.Exec()
				if err != nil {
					br.Close()
					return err
				}
				if tag.RowsAffected() != 1 {
					br.Close()
					return vectorErr(ports.VectorFailed, ports.ErrVectorIDConflict)
				}
			}
			if err := br.Close(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return classifyVector("upserting", err)
	}
	return nil
}

// Truncate removes source's chunks with index >= keep.
func (s *VectorStore) Truncate(ctx context.Context, collection, tenant, source string, keep int) error {
	t, err := s.table(collection)
	if err != nil {
		return err
	}
	keep, err = ports.CheckVectorTruncate(tenant, source, keep)
	if err != nil {
		return err
	}
	err = s.inTx(ctx, false, nil, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, t.truncate, tenant, source, keep)
		return err
	})
	if err != nil {
		return classifyVector("truncating", err)
	}
	return nil
}

// Sources lists tenant's sources that start with prefix, taken literally
// (LIKE's %, _ and \ are escaped), in byte order.
func (s *VectorStore) Sources(ctx context.Context, collection, tenant, prefix string) ([]string, error) {
	t, err := s.table(collection)
	if err != nil {
		return nil, err
	}
	if err := ports.CheckVectorPrefix(tenant, prefix); err != nil {
		return nil, err
	}
	out := []string{}
	err = s.inTx(ctx, true, nil, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, t.sources, tenant, likePrefix(prefix), MaxVectorSources+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var src string
			if err := rows.Scan(&src); err != nil {
				return err
			}
			out = append(out, src)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, classifyVector("listing sources", err)
	}
	if len(out) > MaxVectorSources {
		return nil, vectorErr(ports.VectorLimit, ports.ErrVectorTooLarge)
	}
	return out, nil
}

// ---- errors ----

func vectorErr(kind ports.VectorErrorKind, err error) error {
	return &ports.VectorError{Kind: kind, Err: err}
}

// classifyVector maps a failure to a caller-safe *ports.VectorError. The
// cause keeps the operation and, for a server error, its SQLSTATE; the
// driver's message, which can quote values, is dropped.
func classifyVector(op string, err error) error {
	var ve *ports.VectorError
	if errors.As(err, &ve) {
		return ve
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return vectorErr(ports.VectorUnavailable, fmt.Errorf("%s: cannot connect to the database", op))
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		cause := fmt.Errorf("%s: sqlstate %s", op, pe.Code)
		switch {
		case pe.Code == "57014": // query_canceled: the statement timeout
			return vectorErr(ports.VectorTimeout, cause)
		case pe.Code == "22000": // data_exception: pgvector's dimension mismatch
			return vectorErr(ports.VectorDimension, cause)
		case pe.Code == "53300", strings.HasPrefix(pe.Code, "57P"), strings.HasPrefix(pe.Code, "08"):
			return vectorErr(ports.VectorUnavailable, cause)
		}
		return vectorErr(ports.VectorFailed, cause)
	}
	switch {
	case errors.Is(err, ErrClosed):
		return vectorErr(ports.VectorUnavailable, fmt.Errorf("%s: the connection pool is closed", op))
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err):
		return vectorErr(ports.VectorTimeout, fmt.Errorf("%s: %w", op, context.DeadlineExceeded))
	case errors.Is(err, context.Canceled):
		return vectorErr(ports.VectorFailed, fmt.Errorf("%s: %w", op, context.Canceled))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return vectorErr(ports.VectorUnavailable, fmt.Errorf("%s: the connection was lost", op))
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return vectorErr(ports.VectorUnavailable, fmt.Errorf("%s: the connection was lost", op))
	}
	return vectorErr(ports.VectorFailed, fmt.Errorf("%s failed", op))
}
