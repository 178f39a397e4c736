package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// Tx is a transaction whose statements are prepared once and reused:
// parsing a statement costs about as much as running it, and a group
// commit runs dozens of the same few statements.
type Tx struct {
	*sql.Tx
	stmts *stmtCache
}

// stmtCache holds the statements prepared on one *sql.DB, by query text.
// A statement missing from it runs unprepared and is prepared after the
// transaction ends (done): preparing through the DB inside a transaction
// would wait for the connection the transaction holds, the writer's only
// one.
type stmtCache struct {
	db *sql.DB
	m  sync.Map // string -> *sql.Stmt

	mu     sync.Mutex
	missed map[string]bool
}

func (c *stmtCache) get(query string) *sql.Stmt {
	if st, ok := c.m.Load(query); ok {
		return st.(*sql.Stmt)
	}
	c.mu.Lock()
	if c.missed == nil {
		c.missed = map[string]bool{}
	}
	c.missed[query] = true
	c.mu.Unlock()
	return nil
}

// done prepares the statements missed since the last call; it runs with
// no transaction of the caller's open.
func (c *stmtCache) done(ctx context.Context) {
	c.mu.Lock()
	missed := c.missed
	c.missed = nil
	c.mu.Unlock()
	for q := range missed {
		if _, ok := c.m.Load(q); ok {
			continue
		}
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue // it keeps running unprepared, and reports its error there
		}
		if _, loaded := c.m.LoadOrStore(q, st); loaded {
			st.Close()
		}
	}
}

func (c *stmtCache) close() {
	c.m.Range(func(_, st any) bool { st.(*sql.Stmt).Close(); return true })
}

// ExecContext runs query through its prepared statement.
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := tx.stmts.get(query); st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs query through its prepared statement.
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := tx.stmts.get(query); st != nil {
		return tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return tx.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query through its prepared statement.
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := tx.stmts.get(query); st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.Tx.QueryRowContext(ctx, query, args...)
}
