package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/arrowhead-go/arrowhead/migrations"
	"github.com/arrowhead-go/arrowhead/ports"
)

// The PostgreSQL memory backend keeps memories and kv entries in the tables
// of migrations/002_memory.sql (ARROWHEAD_MEMORY_DSN):
//
//	memory_owners  one row per owner: the bytes counted against the quota,
//	               and the row every write of the owner locks first
//	memories       (owner, namespace, id): content, metadata, the content
//	               hash (dedup), the keyword terms, provenance, and, where
//	               002_memory_vector ran, the embedding
//	kv             (owner, key): value, expiry, provenance
//
// Every statement is fixed text: the table names are the migrations'
// constants, quoted once; every value, the owner first, is a bound
// parameter, and the owner is in every predicate. A write takes its
// owner's row lock (SELECT ... FOR UPDATE) before it counts anything, so
// the per-owner bounds hold however many replicas write at once, and it is
// acknowledged only once its transaction committed.

// MemoryBackendName is the memory store's name in /ready.
const MemoryBackendName = "memory-postgres"

// ErrMemorySchema is returned by NewMemoryStore when the memory tables are
// missing or lack a column this build writes.
var ErrMemorySchema = errors.New("the memory tables are missing or from another build; run `arrowhead migrate`")

// ErrMemoryUnreachable is returned by NewMemoryStore when the database does
// not answer.
var ErrMemoryUnreachable = errors.New("the database cannot be reached")

var (
	memoriesTable = pgx.Identifier{migrations.MemoriesTable}.Sanitize()
	kvTable       = pgx.Identifier{migrations.KVTable}.Sanitize()
	ownersTable   = pgx.Identifier{migrations.MemoryOwnersTable}.Sanitize()
)

// memoryColumns are the columns each method reads back, in scanRecord's
// order.
const memoryColumns = "namespace, id, content, metadata, content_hash, created_at, updated_at, written_by_tool, written_by_caller, written_at"

// The backend's statements.
var (
	sqlOwnerLock   = "SELECT used_bytes FROM " + ownersTable + " WHERE owner = $1 FOR UPDATE"
	sqlOwnerCreate = "INSERT INTO " + ownersTable + " (owner) VALUES ($1) ON CONFLICT (owner) DO NOTHING"
	sqlOwnerUsage  = "UPDATE " + ownersTable + " SET used_bytes = $2 WHERE owner = $1"

	// sqlMemoryProbe is what a new write needs to know, in one round
	// trip: the namespace's entries, and the id already holding the
	// content (dedup), if any.
	sqlMemoryProbe = "SELECT (SELECT count(*) FROM " + memoriesTable + " WHERE owner = $1 AND namespace = $2)," +
		" (SELECT id FROM " + memoriesTable + " WHERE owner = $1 AND namespace = $2 AND content_hash = $3 ORDER BY created_at, id LIMIT 1)"
	sqlMemoryByID = "SELECT " + memoryColumns + " FROM " + memoriesTable +
		" WHERE owner = $1 AND namespace = $2 AND id = $3"
	sqlNamespaceCount  = "SELECT count(DISTINCT namespace) FROM " + memoriesTable + " WHERE owner = $1"
	sqlMemorySizeForID = "SELECT octet_length(content) + coalesce(octet_length(metadata), 0) FROM " + memoriesTable +
		" WHERE owner = $1 AND namespace = $2 AND id = $3 FOR UPDATE"
	// The writes of a record also set the owner's usage ($12), in the
	// same statement; $13 is the embedding.
	withUsage       = "WITH usage AS (UPDATE " + ownersTable + " SET used_bytes = $12 WHERE owner = $1) "
	sqlMemoryInsert = withUsage + "INSERT INTO " + memoriesTable +
		" (owner, namespace, id, content, metadata, content_hash, terms, created_at, updated_at, written_by_tool, written_by_caller, written_at)" +
		" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11) RETURNING " + memoryColumns
	sqlMemoryInsertEmbedded = withUsage + "INSERT INTO " + memoriesTable +
		" (owner, namespace, id, content, metadata, content_hash, terms, created_at, updated_at, written_by_tool, written_by_caller, written_at, embedding)" +
		" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11, $13) RETURNING " + memoryColumns
	sqlMemoryUpdate = withUsage + "UPDATE " + memoriesTable +
		" SET content = $4, metadata = $5, content_hash = $6, terms = $7, updated_at = $8, written_by_tool = $9, written_by_caller = $10, written_at = $11" +
		" WHERE owner = $1 AND namespace = $2 AND id = $3 RETURNING " + memoryColumns
	sqlMemoryUpdateEmbedded = withUsage + "UPDATE " + memoriesTable +
		" SET content = $4, metadata = $5, content_hash = $6, terms = $7, updated_at = $8, written_by_tool = $9, written_by_caller = $10, written_at = $11, embedding = $13" +
		" WHERE owner = $1 AND namespace = $2 AND id = $3 RETURNING " + memoryColumns
	sqlMemoryDelete = "DELETE FROM " + memoriesTable +
		" WHERE owner = $1 AND namespace = $2 AND id = $3 RETURNING octet_length(content) + coalesce(octet_length(metadata), 0)"
	sqlMemoryList = "SELECT " + memoryColumns + " FROM " + memoriesTable +
		" WHERE owner = $1 AND namespace = $2 ORDER BY created_at, id LIMIT $3"
	// Keyword recall: the share of the query's terms a memory holds (its
	// terms are distinct), best first, ties to the newer record.
	sqlMemoryKeyword = "SELECT " + memoryColumns + ", (SELECT count(*) FROM unnest(terms) AS t WHERE t = ANY($3))::float8 / $4 AS score FROM " + memoriesTable +
		" WHERE owner = $1 AND namespace = $2 AND terms && $3 ORDER BY score DESC, updated_at DESC, created_at, id LIMIT $5"
	// Semantic recall: cosine similarity, exact over the namespace (see
	// 002_memory_vector.sql for why there is no ANN index).
	sqlMemorySemantic = "SELECT " + memoryColumns + ", 1 - (embedding <=> $3) AS score FROM " + memoriesTable +
		" WHERE owner = $1 AND namespace = $2 AND embedding IS NOT NULL ORDER BY embedding <=> $3, updated_at DESC, created_at, id LIMIT $4"

	// sqlKVReapAndCount reaps the owner's keys expired as of $2 and, in
	// the same round trip, counts the live ones and says whether $3 is one
	// of them (the statement's reads do not see its own delete, hence the
	// live filter).
	sqlKVReapAndCount = "WITH reaped AS (DELETE FROM " + kvTable + " WHERE owner = $1 AND expires_at <= $2)" +
		" SELECT count(*), coalesce(bool_or(key = $3), false) FROM " + kvTable +
		" WHERE owner = $1 AND (expires_at IS NULL OR expires_at > $2)"
	sqlKVUpsert = "INSERT INTO " + kvTable + " (owner, key, value, expires_at, updated_at, written_by_tool, written_by_caller, written_at)" +
		" VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (owner, key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at," +
		" updated_at = EXCLUDED.updated_at, written_by_tool = EXCLUDED.written_by_tool, written_by_caller = EXCLUDED.written_by_caller, written_at = EXCLUDED.written_at"
	sqlKVGet = "SELECT value, expires_at, updated_at, written_by_tool, written_by_caller, written_at FROM " + kvTable +
		" WHERE owner = $1 AND key = $2 AND (expires_at IS NULL OR expires_at > $3)"
	sqlKVDelete = "DELETE FROM " + kvTable + " WHERE owner = $1 AND key = $2"

	// sqlMemorySchema lists the memory tables' columns and types.
	sqlMemorySchema = "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid" +
		" WHERE a.attrelid IN (to_regclass($1), to_regclass($2), to_regclass($3)) AND a.attnum > 0 AND NOT a.attisdropped"
)

// memorySchemaColumns are the columns the backend writes, per table.
var memorySchemaColumns = map[string][]string{
	migrations.MemoryOwnersTable: {"owner", "used_bytes"},
	migrations.MemoriesTable: {"owner", "namespace", "id", "content", "metadata", "content_hash", "terms",
		"created_at", "updated_at", "written_by_tool", "written_by_caller", "written_at"},
	migrations.KVTable: {"owner", "key", "value", "expires_at", "updated_at", "written_by_tool", "written_by_caller", "written_at"},
}

// MemoryConfig configures a MemoryStore.
type MemoryConfig struct {
	// Dimensions is the configured embedding width
	// (ARROWHEAD_EMBEDDING_DIMENSIONS): semantic recall is available when
	// the memories table has an embedding column of exactly this width.
	Dimensions int
}

// MemoryStore is the PostgreSQL ports.MemoryBackend.
type MemoryStore struct {
	pool     *Pool
	dims     int
	semantic bool
}

var (
	_ ports.MemoryBackend  = (*MemoryStore)(nil)
	_ ports.HealthReporter = (*MemoryStore)(nil)
)

// NewMemoryStore serves memories from the tables migrate created in the
// database of pool. It connects: a database that does not answer is
// ErrMemoryUnreachable, tables that are missing or lack a column are
// ErrMemorySchema, so a misconfiguration stops start-up rather than the
// first call.
func NewMemoryStore(ctx context.Context, pool *Pool, cfg MemoryConfig) (*MemoryStore, error) {
	if cfg.Dimensions < 1 || cfg.Dimensions > migrations.MaxDimensions {
		return nil, fmt.Errorf("memory store: dimensions must be between 1 and %d", migrations.MaxDimensions)
	}
	m := &MemoryStore{pool: pool, dims: cfg.Dimensions}
	c, err := pool.acquire(ctx)
	if err != nil {
		return nil, ErrMemoryUnreachable
	}
	defer c.Release()
	semantic, err := m.checkSchema(ctx, c.Conn())
	if err != nil {
		return nil, err
	}
	m.semantic = semantic
	return m, nil
}

// checkSchema reports whether every table and column the backend writes
// exists (ErrMemorySchema otherwise), and whether the memories table
// carries an embedding column of the configured width.
func (m *MemoryStore) checkSchema(ctx context.Context, conn *pgx.Conn) (semantic bool, err error) {
	rows, err := conn.Query(ctx, sqlMemorySchema, memoriesTable, kvTable, ownersTable)
	if err != nil {
		return false, memoryErr("reading the memory schema", err)
	}
	have := map[string]map[string]string{}
	for rows.Next() {
		var table, column, typ string
		if err := rows.Scan(&table, &column, &typ); err != nil {
			rows.Close()
			return false, memoryErr("reading the memory schema", err)
		}
		if have[table] == nil {
			have[table] = map[string]string{}
		}
		have[table][column] = typ
	}
	if err := rows.Err(); err != nil {
		return false, memoryErr("reading the memory schema", err)
	}
	for table, columns := range memorySchemaColumns {
		for _, col := range columns {
			if _, ok := have[table][col]; !ok {
				return false, ErrMemorySchema
			}
		}
	}
	return have[migrations.MemoriesTable][migrations.MemoriesEmbeddingColumn] == fmt.Sprintf("vector(%d)", m.dims), nil
}

// Semantic reports whether the tables can hold and rank embeddings of the
// configured width (002_memory_vector ran with it). It is one half of the
// decision whether memories are recalled semantically; the other is
// whether the configured embedder is a real one (adapters/wire).
func (m *MemoryStore) Semantic() bool { return m.semantic }

// Name implements ports.HealthReporter.
func (m *MemoryStore) Name() string { return MemoryBackendName }

// Health is ok when the database answers and the memory tables are there,
// degraded when they are not, down otherwise.
func (m *MemoryStore) Health(ctx context.Context) ports.HealthState {
	return m.pool.health(ctx, func(ctx context.Context, c *pgx.Conn) error {
		_, err := m.checkSchema(ctx, c)
		return err
	})
}

// write runs fn in a read-write transaction that commits when fn succeeds.
func (m *MemoryStore) write(ctx context.Context, op string, fn func(pgx.Tx) error) error {
	return memoryErr(op, m.pool.inTx(ctx, pgx.ReadWrite, true, fn))
}

// read runs fn in a read-only transaction.
func (m *MemoryStore) read(ctx context.Context, op string, fn func(pgx.Tx) error) error {
	return memoryErr(op, m.pool.inTx(ctx, pgx.ReadOnly, false, fn))
}

// lockMemoryOwner takes owner's row lock and returns the bytes the owner uses.
// create makes the row when the owner has none; otherwise a missing owner
// is ErrNotFound.
func lockMemoryOwner(ctx context.Context, tx pgx.Tx, owner string, create bool) (int64, error) {
	var used int64
	err := tx.QueryRow(ctx, sqlOwnerLock, owner).Scan(&used)
	if !errors.Is(err, pgx.ErrNoRows) {
		return used, err
	}
	if !create {
		return 0, ports.ErrNotFound
	}
	if _, err := tx.Exec(ctx, sqlOwnerCreate, owner); err != nil {
		return 0, err
	}
	err = tx.QueryRow(ctx, sqlOwnerLock, owner).Scan(&used)
	return used, err
}

// Store implements ports.MemoryBackend.
func (m *MemoryStore) Store(ctx context.Context, owner string, w ports.MemoryWrite, lim ports.MemoryLimits) (ports.MemoryRecord, bool, error) {
	var embedding any
	if m.semantic && w.Embedding != nil {
		if err := ports.CheckVectorEmbedding(w.Embedding, m.dims); err != nil {
			return ports.MemoryRecord{}, false, err
		}
		embedding = pgvector.NewVector(w.Embedding)
	}
	var out ports.MemoryRecord
	var created bool
	err := m.write(ctx, "storing a memory", func(tx pgx.Tx) error {
		used, err := lockMemoryOwner(ctx, tx, owner, true)
		if err != nil {
			return err
		}
		size := int64(len(w.Content) + len(w.Metadata))
		at := w.Provenance.At.UTC()
		args := []any{owner, w.Namespace, w.ID, []byte(w.Content), nullable(w.Metadata), w.Hash, terms(w.Content), at,
			w.Provenance.Tool, w.Provenance.Caller, at}
		if w.ID != "" {
			var old int64
			if err := tx.QueryRow(ctx, sqlMemorySizeForID, owner, w.Namespace, w.ID).Scan(&old); err != nil {
				if errors.Is(err, pgx.ErrNoRows) {
					return ports.ErrNotFound
				}
				return err
			}
			used += size - old
			if lim.QuotaBytes > 0 && used > int64(lim.QuotaBytes) {
				return &ports.MemoryLimitError{Var: "ARROWHEAD_MEMORY_QUOTA_BYTES"}
			}
			stmt := sqlMemoryUpdate
			args = append(args, used)
			if embedding != nil {
				stmt, args = sqlMemoryUpdateEmbedded, append(args, embedding)
			}
			out, err = scanRecord(tx.QueryRow(ctx, stmt, args...))
			return err
		}
		var entries int
		var holder *string
		if err := tx.QueryRow(ctx, sqlMemoryProbe, owner, w.Namespace, w.Hash).Scan(&entries, &holder); err != nil {
			return err
		}
		if holder != nil {
			out, err = scanRecord(tx.QueryRow(ctx, sqlMemoryByID, owner, w.Namespace, *holder))
			return err
		}
		if entries == 0 && lim.MaxNamespaces > 0 {
			var namespaces int
			if err := tx.QueryRow(ctx, sqlNamespaceCount, owner).Scan(&namespaces); err != nil {
				return err
			}
			if namespaces >= lim.MaxNamespaces {
				return &ports.MemoryLimitError{Var: "ARROWHEAD_MEMORY_MAX_NAMESPACES"}
			}
		}
		if lim.MaxEntriesPerNamespace > 0 && entries >= lim.MaxEntriesPerNamespace {
			return &ports.MemoryLimitError{Var: "ARROWHEAD_MEMORY_MAX_ENTRIES_PER_NAMESPACE"}
		}
		used += size
		if lim.QuotaBytes > 0 && used > int64(lim.QuotaBytes) {
			return &ports.MemoryLimitError{Var: "ARROWHEAD_MEMORY_QUOTA_BYTES"}
		}
		args[2] = w.NewID
		stmt := sqlMemoryInsert
		args = append(args, used)
		if embedding != nil {
			stmt, args = sqlMemoryInsertEmbedded, append(args, embedding)
		}
		if out, err = scanRecord(tx.QueryRow(ctx, stmt, args...)); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil {
		return ports.MemoryRecord{}, false, err
	}
	return out, created, nil
}

// Search implements ports.MemoryBackend: semantic recall when the tables
// hold embeddings and the core sent the query's, keyword recall otherwise;
// the Recall returned is the one performed.
func (m *MemoryStore) Search(ctx context.Context, owner, namespace, query string, embedding []float32, k int) ([]ports.MemoryHit, ports.Recall, error) {
	if k <= 0 {
		return nil, ports.RecallKeyword, nil
	}
	if m.semantic && embedding != nil {
		if err := ports.CheckVectorEmbedding(embedding, m.dims); err != nil {
			return nil, ports.RecallSemantic, err
		}
		hits, err := m.search(ctx, sqlMemorySemantic, owner, namespace, pgvector.NewVector(embedding), k)
		return hits, ports.RecallSemantic, err
	}
	q := ports.MemoryTerms(query)
	if len(q) == 0 {
		return nil, ports.RecallKeyword, nil
	}
	hits, err := m.search(ctx, sqlMemoryKeyword, owner, namespace, q, len(q), k)
	return hits, ports.RecallKeyword, err
}

func (m *MemoryStore) search(ctx context.Context, stmt string, args ...any) ([]ports.MemoryHit, error) {
	var hits []ports.MemoryHit
	err := m.read(ctx, "recalling memories", func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, stmt, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h ports.MemoryHit
			if h.Record, err = scanRecordWith(rows, &h.Score); err != nil {
				return err
			}
			hits = append(hits, h)
		}
		return rows.Err()
	})
	return hits, err
}

// List implements ports.MemoryBackend.
func (m *MemoryStore) List(ctx context.Context, owner, namespace string, limit int) ([]ports.MemoryRecord, bool, error) {
	var recs []ports.MemoryRecord
	var bound any // NULL: no LIMIT
	if limit > 0 {
		bound = limit + 1
	}
	err := m.read(ctx, "listing memories", func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sqlMemoryList, owner, namespace, bound)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanRecordWith(rows)
			if err != nil {
				return err
			}
			recs = append(recs, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, false, err
	}
	if limit > 0 && len(recs) > limit {
		return recs[:limit], true, nil
	}
	return recs, false, nil
}

// Delete implements ports.MemoryBackend.
func (m *MemoryStore) Delete(ctx context.Context, owner, namespace, id string) error {
	return m.write(ctx, "deleting a memory", func(tx pgx.Tx) error {
		used, err := lockMemoryOwner(ctx, tx, owner, false)
		if err != nil {
			return err
		}
		var size int64
		if err := tx.QueryRow(ctx, sqlMemoryDelete, owner, namespace, id).Scan(&size); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return ports.ErrNotFound
			}
			return err
		}
		_, err = tx.Exec(ctx, sqlOwnerUsage, owner, max(used-size, 0))
		return err
	})
}

// KVSet implements ports.MemoryBackend. The owner's expired keys are
// reaped first, so they never count against ARROWHEAD_KV_MAX_KEYS.
func (m *MemoryStore) KVSet(ctx context.Context, owner string, e ports.KVEntry, lim ports.MemoryLimits) error {
	return m.write(ctx, "setting a key", func(tx pgx.Tx) error {
		if _, err := lockMemoryOwner(ctx, tx, owner, true); err != nil {
			return err
		}
		now := e.UpdatedAt.UTC()
		var live int
		var exists bool
		if err := tx.QueryRow(ctx, sqlKVReapAndCount, owner, now, e.Key).Scan(&live, &exists); err != nil {
			return err
		}
		if lim.MaxKeys > 0 && !exists && live >= lim.MaxKeys {
			return &ports.MemoryLimitError{Var: "ARROWHEAD_KV_MAX_KEYS"}
		}
		var expires any // NULL: no TTL
		if !e.ExpiresAt.IsZero() {
			expires = e.ExpiresAt.UTC()
		}
		p := e.Provenance
		_, err := tx.Exec(ctx, sqlKVUpsert, owner, e.Key, []byte(e.Value), expires, now, p.Tool, p.Caller, p.At.UTC())
		return err
	})
}

// KVGet implements ports.MemoryBackend: an expired entry is not found,
// whether or not it has been reaped yet.
func (m *MemoryStore) KVGet(ctx context.Context, owner, key string, now time.Time) (ports.KVEntry, error) {
	out := ports.KVEntry{Key: key}
	err := m.read(ctx, "reading a key", func(tx pgx.Tx) error {
		var value []byte
		var expires *time.Time
		err := tx.QueryRow(ctx, sqlKVGet, owner, key, now.UTC()).Scan(&value, &expires, &out.UpdatedAt,
			&out.Provenance.Tool, &out.Provenance.Caller, &out.Provenance.At)
		if errors.Is(err, pgx.ErrNoRows) {
			return ports.ErrNotFound
		}
		if err != nil {
			return err
		}
		out.Value = string(value)
		if expires != nil {
			out.ExpiresAt = expires.UTC()
		}
		out.UpdatedAt, out.Provenance.At = out.UpdatedAt.UTC(), out.Provenance.At.UTC()
		return nil
	})
	if err != nil {
		return ports.KVEntry{}, err
	}
	return out, nil
}

// KVDelete implements ports.MemoryBackend.
func (m *MemoryStore) KVDelete(ctx context.Context, owner, key string) error {
	return m.write(ctx, "deleting a key", func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, sqlKVDelete, owner, key)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ports.ErrNotFound
		}
		return nil
	})
}

// terms are the keyword terms stored with a memory's content; never NULL.
func terms(content string) []string {
	t := ports.MemoryTerms(content)
	if t == nil {
		t = []string{}
	}
	return t
}

// nullable stores empty metadata as NULL, which reads back as nil, as the
// embedded backend returns it.
func nullable(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// scanRecord reads one record of memoryColumns.
func scanRecord(row pgx.Row) (ports.MemoryRecord, error) { return scanRecordWith(row) }

// scanRecordWith reads one record of memoryColumns followed by extra.
func scanRecordWith(row pgx.Row, extra ...any) (ports.MemoryRecord, error) {
	var r ports.MemoryRecord
	var content []byte
	dest := append([]any{&r.Namespace, &r.ID, &content, &r.Metadata, &r.Hash, &r.CreatedAt, &r.UpdatedAt,
		&r.Provenance.Tool, &r.Provenance.Caller, &r.Provenance.At}, extra...)
	if err := row.Scan(dest...); err != nil {
		return ports.MemoryRecord{}, err
	}
	r.Content = string(content)
	if len(r.Metadata) == 0 {
		r.Metadata = nil
	}
	r.CreatedAt, r.UpdatedAt, r.Provenance.At = r.CreatedAt.UTC(), r.UpdatedAt.UTC(), r.Provenance.At.UTC()
	return r, nil
}

// memoryErr is dbErr for the memory backend, whose own errors are not
// found, a bound and a refused embedding.
func memoryErr(op string, err error) error {
	return dbErr(op, err, func(err error) bool {
		var le *ports.MemoryLimitError
		var ve *ports.VectorError
		return errors.Is(err, ports.ErrNotFound) || errors.As(err, &le) || errors.As(err, &ve)
	})
}
