package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are the store's layout, one step per schema version: step i
// takes a file from PRAGMA user_version i to i+1, and a new file runs them
// all. A step is only ever appended, never edited once it has shipped, so
// a file written by any earlier build is brought up to date in order.
//
// Owners appear only as SHA-256 of their identity (the owner column): an
// identity of any length or content is a fixed-size key and never appears
// in the file. Times are Unix nanoseconds in UTC, 0 for none.
var migrations = []string{
	memorySchema,
	tasksSchema,
	vectorSchema,
	carrySchema,
}

// schemaVersion is PRAGMA user_version of the layout this build writes.
var schemaVersion = len(migrations)

// memorySchema holds memories, kv, working sets and bounded counters.
const memorySchema = `
CREATE TABLE mem_owner (
	owner BLOB PRIMARY KEY,
	used INTEGER NOT NULL DEFAULT 0,    -- bytes against ARROWHEAD_MEMORY_QUOTA_BYTES
	kv_count INTEGER NOT NULL DEFAULT 0 -- entries against ARROWHEAD_KV_MAX_KEYS
) WITHOUT ROWID;
CREATE TABLE mem_ns (
	owner BLOB NOT NULL,
	ns TEXT NOT NULL,
	count INTEGER NOT NULL,             -- records, against the per-namespace bound
	PRIMARY KEY (owner, ns)
) WITHOUT ROWID;
CREATE TABLE mem_record (
	owner BLOB NOT NULL,
	ns TEXT NOT NULL,
	id TEXT NOT NULL,
	content BLOB NOT NULL,
	metadata BLOB,
	hash TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	tool TEXT NOT NULL,
	caller TEXT NOT NULL,
	at INTEGER NOT NULL,
	PRIMARY KEY (owner, ns, id)
);
CREATE TABLE mem_hash (                 -- content hash -> the record holding it (dedup)
	owner BLOB NOT NULL,
	ns TEXT NOT NULL,
	hash TEXT NOT NULL,
	id TEXT NOT NULL,
	PRIMARY KEY (owner, ns, hash)
) WITHOUT ROWID;
CREATE TABLE kv (
	owner BLOB NOT NULL,
	key TEXT NOT NULL,
	value BLOB NOT NULL,
	expires_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	tool TEXT NOT NULL,
	caller TEXT NOT NULL,
	at INTEGER NOT NULL,
	PRIMARY KEY (owner, key)
);
CREATE TABLE ws_set (
	owner BLOB NOT NULL,
	name TEXT NOT NULL,
	items BLOB NOT NULL,                -- JSON list of items
	PRIMARY KEY (owner, name)
);
CREATE TABLE counter (                  -- totals bounded across owners
	name TEXT PRIMARY KEY,
	n INTEGER NOT NULL
) WITHOUT ROWID;
`

// migrate brings a file to schemaVersion, running the steps it lacks
// inside one immediate transaction: of several processes opening a file
// at once, the first migrates and the others see the result. A file
// written by a newer build is refused (ErrNewer).
func (s *Store) migrate(ctx context.Context) error {
	var newer bool
	err := retryBusy(ctx, func() error {
		newer = false
		sqlTx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer sqlTx.Rollback()
		tx := &Tx{Tx: sqlTx, stmts: &s.ws}
		var v int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return err
		}
		switch {
		case v == schemaVersion:
			return nil
		case v > schemaVersion:
			newer = true
			return nil
		}
		for _, step := range migrations[v:] {
			// Several statements: run unprepared.
			if _, err := tx.Tx.ExecContext(ctx, step); err != nil {
				return err
			}
		}
		if _, err := tx.Tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version=%d", schemaVersion)); err != nil {
			return err
		}
		return tx.Commit()
	})
	if err != nil {
		return classify("creating the store's tables", err)
	}
	if newer {
		return ErrNewer
	}
	return nil
}

// count reads a counter inside tx (0 when absent).
func count(ctx context.Context, tx *Tx, name string) (int64, error) {
	var n int64
	err := tx.QueryRowContext(ctx, "SELECT n FROM counter WHERE name = ?", name).Scan(&n)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	return n, err
}

func setCount(ctx context.Context, tx *Tx, name string, n int64) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO counter (name, n) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET n = excluded.n", name, max(n, 0))
	return err
}
