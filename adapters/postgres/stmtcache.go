package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The SQL runner keeps, per connection, the statements it has prepared:
// its own statements (BEGIN, ROLLBACK and the settings) and the most
// recent vetted statements, each under a name of its own, with the
// description the server gave when it parsed them. A repeated call then
// sends only Bind and Execute for them (and a Describe for BEGIN and
// ROLLBACK, which pgconn asks for when a statement has no columns), and
// the server skips parsing, analysing and (once it settles on a generic
// plan) planning them: the settings statement alone cost as much again as
// a 100-row result.
//
// The key is the exact text sent, which for a vetted statement is the
// parser's own re-serialization, so a statement is only ever executed
// under the text that was vetted. A name is the connection's random
// prefix and a counter: two connections sharing one backend (PGlite) or a
// pooler that keeps named statements across clients never collide, and a
// name is never reused, so a statement the runner lost track of cannot be
// taken for another.

// stmtCacheSize bounds the vetted statements kept prepared per
// connection; the least recently used is deallocated past it.
const stmtCacheSize = 32

// stmtCacheKey is where a connection's cache lives in its CustomData.
const stmtCacheKey = "arrowhead.sqlrunner.statements"

// stmtCache is one connection's prepared statements. A connection is used
// by one call at a time, so it needs no lock.
type stmtCache struct {
	prefix string
	next   uint64
	clock  uint64
	byText map[string]*stmtEntry
	// owned counts the runner's own statements in byText (BEGIN,
	// ROLLBACK, the settings), which are never evicted.
	owned int
	// stale are names to deallocate in the next exchange: evicted, or
	// found to have a plan whose result type changed.
	stale []string
}

type stmtEntry struct {
	name string
	// desc is the server's description of the statement, from its Parse:
	// its columns are those of every result, so a call sends no Describe
	// for a statement that returns rows (see exchange).
	desc *pgconn.StatementDescription
	used uint64
	// own marks the runner's own statements, never evicted.
	own bool
}

// statementsOf returns conn's cache, made on first use.
func statementsOf(conn *pgconn.PgConn) *stmtCache {
	if c, ok := conn.CustomData()[stmtCacheKey].(*stmtCache); ok {
		return c
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	c := &stmtCache{prefix: "arrowhead_" + hex.EncodeToString(b[:]) + "_", byText: map[string]*stmtEntry{}}
	conn.CustomData()[stmtCacheKey] = c
	return c
}

// lookup returns the description of the statement text is prepared as,
// or nil and a fresh name to prepare it under.
func (c *stmtCache) lookup(text string) (desc *pgconn.StatementDescription, name string) {
	c.clock++
	if e, ok := c.byText[text]; ok {
		e.used = c.clock
		return e.desc, e.name
	}
	c.next++
	return nil, c.prefix + strconv.FormatUint(c.next, 10)
}

// add records that text is now prepared as desc, evicting the least
// recently used vetted statement past stmtCacheSize.
func (c *stmtCache) add(text string, desc *pgconn.StatementDescription, own bool) {
	c.byText[text] = &stmtEntry{name: desc.Name, desc: desc, used: c.clock, own: own}
	if own {
		c.owned++
	}
	if len(c.byText) <= stmtCacheSize+c.owned {
		return
	}
	var oldest string
	var at uint64
	for t, e := range c.byText {
		if !e.own && (oldest == "" || e.used < at) {
			oldest, at = t, e.used
		}
	}
	c.drop(oldest)
}

// drop forgets text's statement and deallocates it with the next exchange.
func (c *stmtCache) drop(text string) {
	if e, ok := c.byText[text]; ok {
		delete(c.byText, text)
		if e.own {
			c.owned--
		}
		c.stale = append(c.stale, e.name)
	}
}

// reset forgets every statement: the server no longer has some of them
// (a pooler or DISCARD ALL dropped them). Names are never reused, so one
// that still exists there is harmless.
func (c *stmtCache) reset() {
	clear(c.byText)
	c.owned = 0
	c.stale = nil
}

// releaseTimeout bounds releaseStatements, which runs as the pool closes
// a connection.
const releaseTimeout = 200 * time.Millisecond

// releaseStatements deallocates the statements the runner prepared on
// conn, in one exchange, as the pool closes it. PostgreSQL drops them with
// the connection's backend anyway; PGlite's one backend outlives every
// connection and would keep them until it restarts, 33 more for each
// connection the pool replaces. A connection that is busy, inside a
// transaction or already gone answers with an error, which changes
// nothing: it is being closed.
func releaseStatements(conn *pgx.Conn) {
	pc := conn.PgConn()
	c, ok := pc.CustomData()[stmtCacheKey].(*stmtCache)
	if !ok || pc.IsClosed() || pc.IsBusy() || pc.TxStatus() != 'I' {
		return
	}
	names := c.takeStale()
	for _, e := range c.byText {
		names = append(names, e.name)
	}
	c.reset()
	if len(names) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	pl := pc.StartPipeline(ctx)
	for _, name := range names {
		pl.SendDeallocate(name)
	}
	pl.SendPipelineSync()
	// Close reads the answers of a flushed pipeline (one left unflushed it
	// drops with the connection).
	_ = pl.Flush()
	_ = pl.Close()
}

// takeStale returns the names to deallocate now.
func (c *stmtCache) takeStale() []string {
	s := c.stale
	c.stale = nil
	return s
}

// Server errors that mean a named statement is no longer usable as it
// was, and the call is run again once with it prepared afresh.
const (
	// invalid_sql_statement_name: the statement is gone (a transaction
	// pooler moved the session, or DISCARD ALL).
	codeNoSuchStatement = "26000"
	// feature_not_supported, raised as "cached plan must not change
	// result type" after a table the statement reads changed shape.
	codePlanChanged = "0A000"
)

// staleStatement reports whether err means the prepared statement must
// be prepared again: gone, or its cached plan's result type changed.
func staleStatement(err error) (gone, changed bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false, false
	}
	return pe.Code == codeNoSuchStatement, pe.Code == codePlanChanged &&
		(pe.Routine == "RevalidateCachedQuery" || strings.Contains(pe.Message, "cached plan must not change result type"))
}
