package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Defaults of a Pool.
const (
	// DefaultMaxConns bounds a pool when neither WithMaxConns nor the DSN's
	// pool_max_conns names a size. sql_query and the vector tools are rate
	// limited per caller; a handful of connections serves them without
	// letting a burst of callers occupy the database. Against PGlite, which
	// admits one connection unless started with -m N, use 1.
	DefaultMaxConns = 4
	// DefaultConnectTimeout bounds establishing one connection, so a
	// database that does not answer is reported unavailable instead of
	// holding the call until its deadline.
	DefaultConnectTimeout = 5 * time.Second
	// DefaultHealthTimeout bounds one readiness check.
	DefaultHealthTimeout = 2 * time.Second

	// ApplicationName is what the pools' sessions report in
	// pg_stat_activity.
	ApplicationName = "arrowhead"

	// rollbackTimeout bounds the closing ROLLBACK, which runs even when
	// the call's context is done.
	rollbackTimeout = 2 * time.Second
	// descriptionCacheSize is how many statement descriptions a
	// connection keeps: the adapters' fixed statements, a handful per
	// collection. A caller's ad-hoc statement is never cached.
	descriptionCacheSize = 128
	// maxConnsParam is pgxpool's DSN parameter for the pool size.
	maxConnsParam = "pool_max_conns"
)

// Errors of a Pool. Neither carries any part of the DSN.
var (
	// ErrInvalidDSN is returned by NewPool when the driver cannot read a
	// DSN that NormalizeDSN accepted (an unknown sslmode, a bad port, a
	// pool_* setting that is not a number or duration, a pool_* name
	// pgxpool does not know, ...).
	ErrInvalidDSN = errors.New("the PostgreSQL DSN has a setting the driver cannot read")
	// ErrClosed is the cause of an unavailable error after Close.
	ErrClosed = errors.New("the connection pool is closed")
)

// Option adjusts a Pool.
type Option func(*poolOptions)

type poolOptions struct {
	maxConns       int32 // 0: the DSN's pool_max_conns, else defaultConns
	defaultConns   int32
	connectTimeout time.Duration
	healthTimeout  time.Duration
}

// WithMaxConns bounds the pool. Without it the DSN's pool_max_conns
// applies, or DefaultMaxConns; n <= 0 keeps that.
func WithMaxConns(n int32) Option {
	return func(o *poolOptions) {
		if n > 0 {
			o.maxConns = n
		}
	}
}

// WithDefaultMaxConns sizes the pool when neither WithMaxConns nor the
// DSN's pool_max_conns does (DefaultMaxConns otherwise); n <= 0 keeps that.
// The state database's pool takes a larger one: River's client holds a
// connection for its notifications and its workers use others.
func WithDefaultMaxConns(n int32) Option {
	return func(o *poolOptions) {
		if n > 0 {
			o.defaultConns = n
		}
	}
}

// WithConnectTimeout bounds establishing one connection
// (DefaultConnectTimeout); d <= 0 keeps the default.
func WithConnectTimeout(d time.Duration) Option {
	return func(o *poolOptions) {
		if d > 0 {
			o.connectTimeout = d
		}
	}
}

// WithHealthTimeout bounds one readiness check (DefaultHealthTimeout);
// d <= 0 keeps the default.
func WithHealthTimeout(d time.Duration) Option {
	return func(o *poolOptions) {
		if d > 0 {
			o.healthTimeout = d
		}
	}
}

// Pool is the connection pool the PostgreSQL adapters run on: a pgxpool
// over one DSN, shared by the SQL runner and the vector stores built on it.
// Production opens one per DSN (the read-only ARROWHEAD_SQL_DSN and the
// write-capable ARROWHEAD_VECTOR_WRITE_DSN).
//
// Statements go over the extended protocol. The adapters' own fixed
// statements go as the unnamed statement (pgx's
// QueryExecModeCacheDescribe: their descriptions are cached per
// connection). The SQL runner alone keeps named prepared statements, its
// settings and recent vetted statements (stmtcache.go), under names
// carrying a random prefix per connection, so they never collide on a
// server whose backend is shared (PGlite) or on a pooler that keeps them
// across clients; where a pooler loses them between calls (PgBouncer in
// transaction mode without prepared-statement support), the runner
// notices at the first miss and goes unnamed. A connection the pool
// closes deallocates them first: PGlite's backend outlives it and would
// keep them. The SQL runner sends its BEGIN, settings and ROLLBACK in the
// same extended-protocol pipeline as the statement; only the other
// adapters' constant text without arguments may take the simple protocol.
//
// It connects lazily, keeps idle connections for reuse, closes one that
// comes back closed, busy or inside a transaction, and is safe for
// concurrent use. Close it when the adapters built on it are done.
type Pool struct {
	pool          *pgxpool.Pool
	healthTimeout time.Duration
}

// NewPool returns a pool over dsn, in any form NormalizeDSN accepts. It
// does not connect (unless the DSN asks for pool_min_conns): a database
// that is down makes calls fail as unavailable and health checks report
// down, it does not stop start-up. pgxpool's pool_* DSN parameters apply;
// any other pool_* parameter is refused, since the server would refuse it
// as a setting at every connect. Errors never quote the DSN.
func NewPool(ctx context.Context, dsn string, opts ...Option) (*Pool, error) {
	norm, err := NormalizeDSN(dsn)
	if err != nil {
		return nil, err
	}
	o := poolOptions{connectTimeout: DefaultConnectTimeout, healthTimeout: DefaultHealthTimeout, defaultConns: DefaultMaxConns}
	for _, opt := range opts {
		opt(&o)
	}
	cfg, err := pgxpool.ParseConfig(norm)
	if err != nil {
		// pgx's message quotes the DSN (with the password masked, but the
		// user and host still there): drop it.
		return nil, ErrInvalidDSN
	}
	cc := cfg.ConnConfig
	for k := range cc.RuntimeParams {
		if strings.HasPrefix(k, "pool_") {
			return nil, ErrInvalidDSN // left over: not one of pgxpool's
		}
	}
	switch {
	case o.maxConns > 0:
		cfg.MaxConns = o.maxConns
	case !setsMaxConns(norm):
		cfg.MaxConns = o.defaultConns // pgxpool's own default follows the CPU count
	}
	cc.ConnectTimeout = o.connectTimeout
	// Set whatever the DSN says (default_query_exec_mode,
	// statement_cache_capacity), so nothing moves a statement to the
	// simple protocol or makes it a named one; see Pool.
	cc.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	cc.StatementCacheCapacity = 0
	cc.DescriptionCacheCapacity = descriptionCacheSize
	cc.RuntimeParams["application_name"] = ApplicationName
	cfg.BeforeClose = releaseStatements
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, ErrInvalidDSN
	}
	return &Pool{pool: p, healthTimeout: o.healthTimeout}, nil
}

// setsMaxConns reports whether the normalised DSN names a pool size.
func setsMaxConns(norm string) bool {
	u, err := url.Parse(norm)
	return err == nil && u.Query().Has(maxConnsParam)
}

// Close closes the idle connections and makes later calls fail as
// unavailable; it waits for the connections in use to come back, which
// their calls' deadlines bound.
func (p *Pool) Close() { p.pool.Close() }

// acquire returns a connection for the caller's exclusive use until its
// Release. After Close the error is ErrClosed.
func (p *Pool) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	c, err := p.pool.Acquire(ctx)
	if errors.Is(err, puddle.ErrClosedPool) {
		return nil, ErrClosed
	}
	return c, err
}

// inTx runs fn in a transaction of the given access mode on one
// connection. It commits when commit is set and fn succeeds, and rolls back
// otherwise, also when the call's context is done. A connection whose
// rollback failed is closed on release, never reused.
func (p *Pool) inTx(ctx context.Context, mode pgx.TxAccessMode, commit bool, fn func(pgx.Tx) error) error {
	c, err := p.acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	tx, err := c.BeginTx(ctx, pgx.TxOptions{AccessMode: mode})
	if err != nil {
		return err
	}
	err = fn(tx)
	if err == nil && commit {
		return commitErr(tx.Commit(ctx))
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	_ = tx.Rollback(rctx)
	return err
}

// commitErr classifies a failed COMMIT. The server's own refusal (a
// serialization failure, a deferred constraint) rolled the transaction
// back, and so did a commit pgx never sent because the context had ended.
// Anything else may or may not have been applied: ports.ErrOutcomeUnknown.
// pgx's SafeToRetry is not enough here: a connection the server dropped
// after reading the commit can surface as "conn closed", which pgx counts
// as never sent (seen against a proxy that cuts the connection there).
func commitErr(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return err
	}
	if pgconn.SafeToRetry(err) && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return err
	}
	return fmt.Errorf("%w: %w", ports.ErrOutcomeUnknown, err)
}

// health pings the database within the health timeout: down when it does
// not answer; otherwise degraded when check, given the same connection,
// fails, and ok.
func (p *Pool) health(ctx context.Context, check func(context.Context, *pgx.Conn) error) ports.HealthState {
	ctx, cancel := context.WithTimeout(ctx, p.healthTimeout)
	defer cancel()
	c, err := p.acquire(ctx)
	if err != nil {
		return ports.HealthDown
	}
	defer c.Release()
	if err := c.Ping(ctx); err != nil {
		return ports.HealthDown
	}
	if check != nil && check(ctx, c.Conn()) != nil {
		return ports.HealthDegraded
	}
	return ports.HealthOK
}
