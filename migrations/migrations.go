// Package migrations holds the PostgreSQL schema Arrowhead needs and applies
// it (arrowhead migrate): the pgvector chunk tables behind the vector tools
// (001_chunks.sql, once per allow-listed collection), the tables of the
// PostgreSQL memory backend (002_memory.sql, plain PostgreSQL, and
// 002_memory_vector.sql, the embedding column of semantic recall, applied
// only where the vector extension is available) and the state replicas
// share (003_state.sql: working sets, tasks and timers).
//
// The .sql files are text/template files: the table and column names, the
// embedding width and the full-text language come from the configuration.
// Render validates every one of them (identifiers by a strict guard, then
// quoted; the width by range) before substituting, so no configured value
// can change a statement's shape. Apply runs the rendered statements in one
// transaction and records each applied migration, with a checksum of its
// rendered text, in arrowhead_schema_migrations; every statement is
// idempotent (IF NOT EXISTS), and a migration already recorded with the same
// checksum is skipped. A migration that needs an extension the database
// does not offer (Statement.Requires, checked in pg_available_extensions
// before anything is tried) is skipped and reported, not recorded: a later
// run on a database that offers it applies it.
package migrations

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"github.com/jackc/pgx/v5"

	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

//go:embed *.sql
var files embed.FS

// Limits and fixed names of the schema.
const (
	// MaxDimensions is the widest vector pgvector stores.
	MaxDimensions = 16000
	// MaxHNSWDimensions is the widest vector pgvector's HNSW index takes;
	// wider collections get no ANN index and are scanned exactly.
	MaxHNSWDimensions = 2000
	// MaxCollections bounds how many chunk tables one run creates.
	MaxCollections = 64

	// BookkeepingTable records applied migrations.
	BookkeepingTable = "arrowhead_schema_migrations"
	// MemoriesTable, KVTable and MemoryOwnersTable are the memory
	// backend's tables.
	MemoriesTable     = "memories"
	KVTable           = "kv"
	MemoryOwnersTable = "memory_owners"
	// MemoriesEmbeddingColumn is the column 002_memory_vector adds.
	MemoriesEmbeddingColumn = "embedding"
	// VectorExtension is pgvector's extension name.
	VectorExtension = "vector"
	// WorkingSetsTable holds the working sets of the PostgreSQL state
	// backend (ARROWHEAD_STATE_DSN).
	WorkingSetsTable = "arrowhead_working_sets"
	// TasksTable holds the task registry's tasks and timers on the state
	// backend; River's own tables (river_*) hold the jobs that run them.
	TasksTable = "arrowhead_tasks"
	// KillRulesTable holds the live kill-switch rules on the state backend
	// when no Redis carries them.
	KillRulesTable = "arrowhead_kill_rules"

	// DefaultLanguage is ARROWHEAD_FTS_LANGUAGE's default.
	DefaultLanguage = "english"

	chunksFile       = "001_chunks.sql"
	memoryFile       = "002_memory.sql"
	memoryVectorFile = "002_memory_vector.sql"
	stateFile        = "003_state.sql"
	killFile         = "004_killswitch.sql"

	// advisoryLockKey serialises concurrent Apply calls on one database
	// (two replicas migrating at start-up). It is "arrowhea" in ASCII.
	advisoryLockKey int64 = 0x6172726f77686561
)

// Errors of Render and Apply. None quotes a configured value except the
// migration key, which names a guarded table.
var (
	ErrInvalidConfig = errors.New("invalid migration configuration")
	// ErrChanged is returned when a migration was applied before with a
	// different rendering: the table exists with another width, language or
	// column set, and IF NOT EXISTS would silently keep the old one.
	ErrChanged = errors.New("migration was applied with a different configuration (embedding dimensions, language or column names changed); migrate that table by hand")
	ErrApply   = errors.New("applying migrations failed")
)

// Columns names the columns of a chunk table (ARROWHEAD_PGVECTOR_*_COLUMN).
type Columns struct {
	Tenant, ID, Content, Embedding, Source, ChunkIndex, ContentHash, Tsvector string
}

// DefaultColumns returns the seed's default column names.
func DefaultColumns() Columns {
	return Columns{
		Tenant: "tenant", ID: "id", Content: "content", Embedding: "embedding",
		Source: "source", ChunkIndex: "chunk_index", ContentHash: "content_hash", Tsvector: "content_tsv",
	}
}

// Config is what the templates are rendered with.
type Config struct {
	// Collections are the chunk tables to create (ARROWHEAD_PGVECTOR_COLLECTIONS).
	Collections []string
	// Columns are the chunk tables' column names.
	Columns Columns
	// Dimensions is the embedding width (ARROWHEAD_EMBEDDING_DIMENSIONS).
	Dimensions int
	// Language is the full-text configuration of the generated tsvector
	// (ARROWHEAD_FTS_LANGUAGE); empty means DefaultLanguage. It must name
	// an installed regconfig, which PostgreSQL checks when applying.
	Language string
	// Memory adds the memory backend's tables (002_memory, and
	// 002_memory_vector where the vector extension is available). They
	// belong in the ARROWHEAD_MEMORY_DSN database, which need not be the
	// one holding the chunk tables: apply each Config to its own database.
	Memory bool
	// State adds the tables of the shared state backend (003_state), which
	// belong in the ARROWHEAD_STATE_DSN database; it may be the memory
	// database or the chunk tables' one.
	State bool
}

// ConfigFromSettings maps the settings onto a migration configuration
// holding every table: the chunk tables of the allow-listed collections and
// the memory tables. When the memory database is another one, split it
// into two Configs (Memory false with the collections, Memory true
// without).
func ConfigFromSettings(s settings.Settings) Config {
	return Config{
		Collections: slices.Clone(s.PgvectorCollections),
		Columns: Columns{
			Tenant: s.PgvectorTenantColumn, ID: s.PgvectorIDColumn, Content: s.PgvectorContentColumn,
			Embedding: s.PgvectorEmbeddingColumn, Source: s.PgvectorSourceColumn, ChunkIndex: s.PgvectorChunkIndexColumn,
			ContentHash: s.PgvectorContentHashColumn, Tsvector: s.PgvectorTsvectorColumn,
		},
		Dimensions: s.EmbeddingDimensions,
		Language:   s.FTSLanguage,
		Memory:     true,
	}
}

// Statement is one rendered SQL statement of a migration.
type Statement struct {
	// Migration is the bookkeeping key: the file's name without .sql, and
	// for per-collection files "/" and the table, e.g.
	// "001_chunks/doc_chunks".
	Migration string
	// SQL is exactly one statement, without a trailing semicolon.
	SQL string
	// Requires names an extension the database must offer for the
	// migration to be applied; empty for an unconditional one. Every
	// statement of a migration has the same Requires.
	Requires string
}

// Render validates cfg and renders its migrations, in order: 001_chunks for
// each collection, then 002_memory and 002_memory_vector (which requires
// VectorExtension) when cfg.Memory is set, then 003_state when cfg.State
// is.
func Render(cfg Config) ([]Statement, error) {
	// The width matters only to the tables with a vector column.
	if (len(cfg.Collections) > 0 || cfg.Memory) && (cfg.Dimensions < 1 || cfg.Dimensions > MaxDimensions) {
		return nil, fmt.Errorf("%w: dimensions must be between 1 and %d", ErrInvalidConfig, MaxDimensions)
	}
	lang := cfg.Language
	if lang == "" {
		lang = DefaultLanguage
	}
	if !ports.ValidVectorIdentifier(lang) {
		return nil, fmt.Errorf("%w: the full-text language must be a lowercase identifier", ErrInvalidConfig)
	}
	if len(cfg.Collections) > MaxCollections {
		return nil, fmt.Errorf("%w: at most %d collections", ErrInvalidConfig, MaxCollections)
	}
	cols := cfg.Columns
	named := []struct{ what, name string }{
		{"tenant", cols.Tenant}, {"id", cols.ID}, {"content", cols.Content}, {"embedding", cols.Embedding},
		{"source", cols.Source}, {"chunk index", cols.ChunkIndex}, {"content hash", cols.ContentHash}, {"tsvector", cols.Tsvector},
	}
	seen := map[string]bool{}
	for _, n := range named {
		if !ports.ValidVectorIdentifier(n.name) {
			return nil, fmt.Errorf("%w: the %s column name must be a lowercase identifier", ErrInvalidConfig, n.what)
		}
		if seen[n.name] {
			return nil, fmt.Errorf("%w: two chunk columns share the name %q", ErrInvalidConfig, n.name)
		}
		seen[n.name] = true
	}
	tables := map[string]bool{BookkeepingTable: true, MemoriesTable: true, KVTable: true, MemoryOwnersTable: true, WorkingSetsTable: true, TasksTable: true}
	for i, c := range cfg.Collections {
		if !ports.ValidVectorIdentifier(c) {
			return nil, fmt.Errorf("%w: collection %d is not a lowercase identifier", ErrInvalidConfig, i+1)
		}
		if tables[c] {
			return nil, fmt.Errorf("%w: collection %q is listed twice or names a reserved table", ErrInvalidConfig, c)
		}
		tables[c] = true
	}
	hnsw := cfg.Dimensions <= MaxHNSWDimensions

	var out []Statement
	for _, c := range cfg.Collections {
		data := map[string]any{
			"Table": quote(c), "Dim": cfg.Dimensions, "Language": literal(lang), "HNSW": hnsw,
			"Tenant": quote(cols.Tenant), "ID": quote(cols.ID), "Content": quote(cols.Content),
			"Embedding": quote(cols.Embedding), "Source": quote(cols.Source), "ChunkIndex": quote(cols.ChunkIndex),
			"ContentHash": quote(cols.ContentHash), "Tsvector": quote(cols.Tsvector),
			"PositionIndex": quote(indexName(c, "position_key")), "TsvectorIndex": quote(indexName(c, "tsv_idx")),
			"EmbeddingIndex": quote(indexName(c, "hnsw_idx")),
		}
		stmts, err := render(chunksFile, data)
		if err != nil {
			return nil, err
		}
		for _, s := range stmts {
			out = append(out, Statement{Migration: strings.TrimSuffix(chunksFile, ".sql") + "/" + c, SQL: s})
		}
	}
	if !cfg.Memory {
		return appendState(out, cfg)
	}
	data := map[string]any{
		"Dim":      cfg.Dimensions,
		"Memories": quote(MemoriesTable), "KV": quote(KVTable), "Owners": quote(MemoryOwnersTable),
		"MemoriesHashIndex":    quote(indexName(MemoriesTable, "hash_idx")),
		"MemoriesCreatedIndex": quote(indexName(MemoriesTable, "created_idx")),
		"KVExpiresIndex":       quote(indexName(KVTable, "expires_idx")),
	}
	for _, f := range []struct{ name, requires string }{{memoryFile, ""}, {memoryVectorFile, VectorExtension}} {
		stmts, err := render(f.name, data)
		if err != nil {
			return nil, err
		}
		for _, s := range stmts {
			out = append(out, Statement{Migration: strings.TrimSuffix(f.name, ".sql"), SQL: s, Requires: f.requires})
		}
	}
	return appendState(out, cfg)
}

// appendState appends 003_state and 004_killswitch to out when cfg.State
// is set.
func appendState(out []Statement, cfg Config) ([]Statement, error) {
	if !cfg.State {
		return out, nil
	}
	stmts, err := render(stateFile, map[string]any{
		"WorkingSets": quote(WorkingSetsTable), "Tasks": quote(TasksTable),
		"TasksStatusIndex":   quote(indexName(TasksTable, "status_idx")),
		"TasksFinishedIndex": quote(indexName(TasksTable, "finished_idx")),
	})
	if err != nil {
		return nil, err
	}
	for _, s := range stmts {
		out = append(out, Statement{Migration: strings.TrimSuffix(stateFile, ".sql"), SQL: s})
	}
	stmts, err = render(killFile, map[string]any{"KillRules": quote(KillRulesTable)})
	if err != nil {
		return nil, err
	}
	for _, s := range stmts {
		out = append(out, Statement{Migration: strings.TrimSuffix(killFile, ".sql"), SQL: s})
	}
	return out, nil
}

// render executes one template and splits it into statements. The
// templates keep each statement's terminating semicolon at the end of a
// line and no semicolon anywhere else, and every substituted value is a
// quoted guarded identifier, a number or a guarded literal, so splitting
// at line-final semicolons is exact.
func render(name string, data map[string]any) ([]string, error) {
	raw, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading migration %s: %w", name, err)
	}
	tmpl, err := template.New(name).Option("missingkey=error").Parse(string(raw))
	if err != nil {
		return nil, fmt.Errorf("parsing migration %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("rendering migration %s: %w", name, err)
	}
	var stmts []string
	var cur strings.Builder
	for line := range strings.Lines(b.String()) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		if cur.Len() > 0 {
			cur.WriteByte('\n')
		}
		cur.WriteString(line)
		if strings.HasSuffix(trimmed, ";") {
			stmts = append(stmts, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		return nil, fmt.Errorf("migration %s ends without a semicolon", name)
	}
	return stmts, nil
}

func quote(ident string) string { return pgx.Identifier{ident}.Sanitize() }

// literal writes a guarded identifier as a string literal; the guard
// admits no quote or backslash.
func literal(ident string) string { return "'" + ident + "'" }

// indexName is table_suffix, shortened with a hash of the table name when
// it would pass PostgreSQL's 63-byte limit (which would otherwise truncate
// it silently and could make two tables' index names collide).
func indexName(table, suffix string) string {
	name := table + "_" + suffix
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(table))
	tag := hex.EncodeToString(sum[:4])
	return table[:63-len(suffix)-len(tag)-2] + "_" + tag + "_" + suffix
}

// Beginner starts a transaction: *pgx.Conn and *pgxpool.Pool both are.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Apply renders cfg and applies every migration not yet recorded, in one
// transaction, and returns the keys of the migrations it applied (none when
// the schema is current) and of those it skipped because the database does
// not offer the extension they require. A migration recorded with another
// checksum, or a vector column whose width is not the configured one, stops
// everything with ErrChanged and changes nothing. Errors carry the failing
// migration's key and SQLSTATE, never driver text.
func Apply(ctx context.Context, db Beginner, cfg Config) (applied, skipped []string, err error) {
	stmts, err := Render(cfg)
	if err != nil {
		return nil, nil, err
	}
	type unit struct {
		key      string
		requires string
		stmts    []string
		checksum string
	}
	var units []*unit
	for _, s := range stmts {
		if len(units) == 0 || units[len(units)-1].key != s.Migration {
			units = append(units, &unit{key: s.Migration, requires: s.Requires})
		}
		u := units[len(units)-1]
		u.stmts = append(u.stmts, s.SQL)
	}
	for _, u := range units {
		sum := sha256.Sum256([]byte(strings.Join(u.stmts, ";\n")))
		u.checksum = hex.EncodeToString(sum[:])
	}

	tx, err := db.Begin(ctx)
	if err != nil {
		return nil, nil, applyErr("starting the migration transaction", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// Statements with parameters run as the unnamed statement: a named
	// prepared statement would outlive this connection on a server whose
	// backend is shared (PGlite) or pooled, and collide later.
	describe := pgx.QueryExecModeDescribeExec
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", describe, advisoryLockKey); err != nil {
		return nil, nil, applyErr("taking the migration lock", err)
	}
	book := quote(BookkeepingTable)
	if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+book+
		" (migration text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"); err != nil {
		return nil, nil, applyErr("creating "+BookkeepingTable, err)
	}
	// Whether the database offers an extension is asked, never inferred
	// from a failing CREATE EXTENSION: a failure aborts the transaction,
	// and would hide a real error behind a skip.
	offered := map[string]bool{}
	vectors := false // the memory tables' embedding column is expected
	for _, u := range units {
		if u.requires != "" {
			ok, seen := offered[u.requires]
			if !seen {
				if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = $1)",
					describe, u.requires).Scan(&ok); err != nil {
					return nil, nil, applyErr("checking the available extensions", err)
				}
				offered[u.requires] = ok
			}
			if !ok {
				skipped = append(skipped, u.key)
				continue
			}
			if u.key == strings.TrimSuffix(memoryVectorFile, ".sql") {
				vectors = true
			}
		}
		var have string
		err := tx.QueryRow(ctx, "SELECT checksum FROM "+book+" WHERE migration = $1", describe, u.key).Scan(&have)
		switch {
		case err == nil && have == u.checksum:
			continue
		case err == nil:
			return nil, nil, fmt.Errorf("%w: %s", ErrChanged, u.key)
		case !errors.Is(err, pgx.ErrNoRows):
			return nil, nil, applyErr("reading "+BookkeepingTable, err)
		}
		for i, s := range u.stmts {
			if _, err := tx.Exec(ctx, s); err != nil {
				return nil, nil, applyErr(fmt.Sprintf("migration %s, statement %d", u.key, i+1), err)
			}
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+book+" (migration, checksum) VALUES ($1, $2)", describe, u.key, u.checksum); err != nil {
			return nil, nil, applyErr("recording migration "+u.key, err)
		}
		applied = append(applied, u.key)
	}
	// IF NOT EXISTS keeps a table made earlier by other means (an older
	// schema file, by hand) whatever its width: check that every vector
	// column has the configured one.
	want := fmt.Sprintf("vector(%d)", cfg.Dimensions)
	type column struct{ table, name string }
	var columns []column
	for _, c := range cfg.Collections {
		columns = append(columns, column{c, cfg.Columns.Embedding})
	}
	if vectors {
		columns = append(columns, column{MemoriesTable, MemoriesEmbeddingColumn})
	}
	for _, c := range columns {
		var typ string
		err := tx.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = to_regclass($1) AND attname = $2 AND NOT attisdropped`, describe, quote(c.table), c.name).Scan(&typ)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return nil, nil, fmt.Errorf("%w: table %s has no column %s", ErrChanged, c.table, c.name)
		case err != nil:
			return nil, nil, applyErr("checking "+c.table, err)
		case typ != want:
			return nil, nil, fmt.Errorf("%w: table %s stores %s, configured %s", ErrChanged, c.table, typ, want)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, nil, applyErr("committing the migrations", err)
	}
	return applied, skipped, nil
}

// applyErr keeps the step and, for a server error, its SQLSTATE; the
// driver's message (which may quote values) stays out.
func applyErr(step string, err error) error {
	if code := sqlState(err); code != "" {
		return fmt.Errorf("%w: %s: sqlstate %s", ErrApply, step, code)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %s: %w", ErrApply, step, err)
	}
	return fmt.Errorf("%w: %s", ErrApply, step)
}

func sqlState(err error) string {
	var se interface{ SQLState() string }
	if errors.As(err, &se) {
		return se.SQLState()
	}
	return ""
}
