// Package postgres holds the adapters backed by PostgreSQL through
// github.com/jackc/pgx/v5: the read-only SQL runner behind sql_query, the
// pgvector store behind the vector tools and doc_index, and what they
// share: the DSN normaliser and the connection pool (pgxpool).
package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Defaults of the SQL runner.
const (
	// Limits applied when a field of ports.SQLLimits is zero or negative:
	// the seed's defaults (ARROWHEAD_SQL_MAX_ROWS, _MAX_COLUMNS, _MAX_BYTES,
	// _TIMEOUT_SECONDS).
	DefaultMaxRows    = 1000
	DefaultMaxColumns = 100
	DefaultMaxBytes   = 1_000_000
	DefaultTimeout    = 10 * time.Second
	// DefaultTempFileBytes and DefaultWorkMemBytes are the seed's
	// ARROWHEAD_SQL_TEMP_FILE_LIMIT_MB and ARROWHEAD_SQL_WORK_MEM_MB: a sort
	// or hash past 16 MB spills to temporary files, and those stop at 64 MB.
	DefaultTempFileBytes = 64 << 20
	DefaultWorkMemBytes  = 16 << 20
	// minWorkMemKB is the smallest work_mem PostgreSQL accepts.
	minWorkMemKB = 64

	// MaxColumnNameBytes bounds a returned column name. PostgreSQL already
	// truncates names to 63 bytes; this holds even for a server built with
	// a larger NAMEDATALEN.
	MaxColumnNameBytes = 128

	// deadlineMargin is added to the statement timeout for the in-process
	// deadline: the server's own timeout normally fires first, which
	// leaves the connection usable, and the in-process deadline still
	// bounds a database or network that stopped answering.
	deadlineMargin = 500 * time.Millisecond
	// drainTimeout bounds how long a truncated result's unread rows are
	// discarded to keep the connection; past it the connection is closed
	// instead (the server then stops at its next write).
	drainTimeout = 200 * time.Millisecond
	// maxStatementTimeoutMS is the largest statement_timeout PostgreSQL
	// accepts (an int4 of milliseconds).
	maxStatementTimeoutMS = math.MaxInt32
	// maxArrayDims is PostgreSQL's MAXDIM; the array parser goes no deeper.
	maxArrayDims = 6

	healthName = "postgres"
)

// Errors of the SQL runner. In a *ports.SQLError they are the operator-side
// cause; none carries a DSN, statement or value.
var (
	// ErrEmptyStatement is the cause of an invalid error for empty SQL.
	ErrEmptyStatement = errors.New("the vetted statement is empty")
	// ErrArgumentCount is the cause of an invalid error when the arguments
	// do not match the statement's parameters.
	ErrArgumentCount = errors.New("the arguments do not match the statement's parameters")
	// ErrUnsupportedArgument is the cause of an invalid error for an
	// argument that is not a string, number, boolean or null.
	ErrUnsupportedArgument = errors.New("a parameter value must be a string, number, boolean or null")
	// ErrSessionSettings is the cause of an unavailable error when the
	// read-only transaction or its settings could not be set up, most
	// often a role that may not set temp_file_limit: grant it with
	// GRANT SET ON PARAMETER temp_file_limit TO the role (PostgreSQL 15
	// and later), or set ARROWHEAD_SQL_TEMP_FILE_LIMIT_MB=0 and give the
	// role its own limit with ALTER ROLE ... SET temp_file_limit.
	ErrSessionSettings = errors.New("the database refused the read-only transaction or its settings")
)

// SQLRunner is a ports.SQLRunner on a Pool, and a ports.HealthReporter
// named "postgres".
//
// Every Query runs in its own read-only transaction that is always rolled
// back, under a transaction-local statement_timeout, temp_file_limit and
// work_mem and an in-process deadline, all of it sent as one pipeline: one
// round trip to the server. The vetted statement goes to the server only
// through the extended protocol, whose Parse message holds exactly one
// statement, with every parameter bound in a Bind message and never
// spliced into the text, whatever the pool's default mode or the DSN say;
// the connection keeps it prepared under its exact text, so a repeated
// statement is not parsed again. Results come
// back in PostgreSQL's text format and are mapped to JSON-ready values
// under the row, column and byte bounds.
//
// An SQLRunner is safe for concurrent use. Its pool's owner closes the
// pool; queries after that fail as unavailable.
type SQLRunner struct {
	pool *Pool
	// unnamed is set once the server lost a named statement between two
	// calls on one connection (a transaction pooler): from then on every
	// statement goes unnamed, parsed afresh each call.
	unnamed atomic.Bool
}

var (
	_ ports.SQLRunner      = (*SQLRunner)(nil)
	_ ports.HealthReporter = (*SQLRunner)(nil)
)

// NewSQLRunner returns a runner on pool, which should be on the read-only
// ARROWHEAD_SQL_DSN. A nil pool is refused.
func NewSQLRunner(pool *Pool) (*SQLRunner, error) {
	if pool == nil {
		return nil, errors.New("the SQL runner needs a connection pool")
	}
	return &SQLRunner{pool: pool}, nil
}

// Name implements ports.HealthReporter.
func (r *SQLRunner) Name() string { return healthName }

// Health pings the database within the pool's health timeout: ok when it
// answers, down otherwise.
func (r *SQLRunner) Health(ctx context.Context) ports.HealthState {
	return r.pool.health(ctx, nil)
}

// Query implements ports.SQLRunner. q.SQL is sent as it is, so it must be a
// vetted statement; args are bound to its placeholders in order and must be
// strings, numbers (json.Number, floats, integers), booleans or nil.
//
// Zero or negative limits take the Default* values; a timeout is at most
// PostgreSQL's largest statement_timeout (about 24 days). Errors are
// *ports.SQLError.
func (r *SQLRunner) Query(ctx context.Context, q ports.VettedQuery, args []any, lim ports.SQLLimits) (ports.SQLResult, error) {
	if strings.TrimSpace(q.SQL) == "" {
		// pgx sends an empty statement over the simple protocol.
		return ports.SQLResult{}, &ports.SQLError{Kind: ports.SQLInvalid, Err: ErrEmptyStatement}
	}
	if len(args) != len(q.Params) {
		return ports.SQLResult{}, &ports.SQLError{Kind: ports.SQLInvalid, Err: ErrArgumentCount}
	}
	bound, err := bindArgs(args)
	if err != nil {
		return ports.SQLResult{}, &ports.SQLError{Kind: ports.SQLInvalid, Err: err}
	}
	lim = withDefaults(lim)

	// One context bounds the whole call, and cancelling it is also how a
	// truncated result's drain gives up (readStatement).
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout+deadlineMargin)
	defer cancel()

	res, err := r.run(ctx, cancel, q.SQL, bound, lim)
	if err != nil {
		return ports.SQLResult{}, &ports.SQLError{Kind: classify(err), Err: err}
	}
	return res, nil
}

func (r *SQLRunner) run(ctx context.Context, cancel context.CancelFunc, sql string, args [][]byte, lim ports.SQLLimits) (ports.SQLResult, error) {
	c, err := r.pool.acquire(ctx)
	if err != nil {
		return ports.SQLResult{}, err
	}
	// A connection left inside a transaction or mid-result (an error, a
	// cancel) is destroyed on release, never reused.
	defer c.Release()
	conn := c.Conn().PgConn()
	if r.unnamed.Load() {
		return exchange(ctx, cancel, conn, nil, sql, args, lim)
	}
	cache := statementsOf(conn)
	res, err := exchange(ctx, cancel, conn, cache, sql, args, lim)
	gone, changed := staleStatement(err)
	switch {
	case gone:
		// Nothing ran: the statement was missing before it could.
		r.unnamed.Store(true)
		cache.reset()
		return exchange(ctx, cancel, conn, nil, sql, args, lim)
	case changed:
		cache.drop(sql)
		return exchange(ctx, cancel, conn, cache, sql, args, lim)
	}
	return res, err
}

// exchange runs the statement in one round trip: a single write carries
//
//	BEGIN READ ONLY; SELECT set_config(...) ...; the statement; ROLLBACK;
//	Sync
//
// every message of it in the extended protocol, so the statement's Parse
// holds exactly one statement, and its arguments travel only in its Bind.
// The server answers them in order, and an error makes it skip everything
// up to the Sync: a BEGIN or a setting that fails means the statement
// never runs. Whatever the statement did is rolled back, not even a
// session-level SET or set_config(..., false) survives it, which
// PostgreSQL reverts with the transaction: by the ROLLBACK when it
// succeeds, and when anything failed, by a ROLLBACK sent once the failed
// transaction is known (rollbackFailed), a second exchange only on that
// path. A Sync between the statement and the ROLLBACK would spare that
// exchange at the cost of every call: the server flushes at each Sync, and
// reports the settings that changed (TimeZone) at each, so both ends do a
// second read and write per call.
//
// Without the BEGIN, the messages up to the Sync would still run as one
// transaction, and read-only too with transaction_read_only among the
// settings, two executions fewer; but PostgreSQL commits that implicit
// transaction at the Sync, and then a session-level setting made by the
// statement (set_config(..., false), from a function a view calls, say)
// outlives the call, on the pool's connection and, behind a pooler or on
// PGlite's one backend, for other clients. Ending it with ROLLBACK instead
// makes the server warn "there is no transaction in progress" into its
// log on every call.
//
// With cache, BEGIN, ROLLBACK, the settings and the statement are named
// prepared statements of the connection (stmtcache.go): the first call
// sends each one's Parse (and a Describe) in the same write, ahead of its
// Bind, and later calls send only Bind and Execute, as pgx does with its
// own statement cache (and a Describe for BEGIN and ROLLBACK, which have
// no columns); statements evicted from the cache are closed at the start
// of the write, where nothing can have failed yet. Without, all go
// unnamed, parsed every call.
//
// PostgreSQL (13 and later) starts a fresh statement timeout at each
// protocol message after an Execute completes, so the timeout set by the
// settings' Execute governs the statement's Parse, Bind and Execute.
//
// cancel cancels ctx, the call's: a truncated result whose rest takes too
// long to discard is given up through it.
func exchange(ctx context.Context, cancel context.CancelFunc, conn *pgconn.PgConn, cache *stmtCache, sql string, args [][]byte, lim ports.SQLLimits) (res ports.SQLResult, err error) {
	settings := settingsFor(lim, reportedInPlace(conn))
	pl := conn.StartPipeline(ctx)
	var stale []string
	if cache != nil {
		stale = cache.takeStale()
		for _, name := range stale {
			pl.SendDeallocate(name)
		}
	}
	// All values in text, all results in text: nil format codes mean
	// text for every one. No parameter types: the server infers each from
	// its placeholder and parses the text as that type, exactly like a
	// quoted literal in that position.
	var begin, rollback, set, stmt statement
	if cache == nil {
		pl.SendQueryParams(beginSQL, nil, nil, nil, nil)
		pl.SendQueryParams(settings, nil, nil, nil, nil)
		pl.SendQueryParams(sql, args, nil, nil, nil)
		pl.SendQueryParams(rollbackSQL, nil, nil, nil, nil)
	} else {
		// BEGIN and ROLLBACK are parsed ahead of everything, ROLLBACK
		// too: its answer comes after the statement's, where a failure
		// is not read.
		begin = prepare(pl, cache, beginSQL)
		rollback = prepare(pl, cache, rollbackSQL)
		begin.send(pl, nil)
		set = prepare(pl, cache, settings)
		set.send(pl, nil)
		stmt = prepare(pl, cache, sql)
		stmt.send(pl, args)
		rollback.send(pl, nil)
	}
	pl.SendPipelineSync()
	if err := pl.Flush(); err != nil {
		_ = pl.Close()
		return ports.SQLResult{}, err
	}
	for range stale {
		if err = closed(pl); err != nil {
			break
		}
	}
	// BEGIN and the settings: their results are discarded; an error stops
	// here, and Close below reads the rest.
	if err == nil {
		err = prepared(pl, cache, begin, true)
	}
	if err == nil {
		err = prepared(pl, cache, rollback, true)
	}
	if err == nil {
		err = discard(pl)
	}
	if err == nil {
		err = prepared(pl, cache, set, true)
	}
	if err == nil {
		err = discard(pl)
	}
	if err != nil {
		if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code != codeNoSuchStatement {
			// The server refused them: the operator's to fix.
			err = errors.Join(ErrSessionSettings, err)
		}
	}
	if err == nil {
		err = prepared(pl, cache, stmt, false)
	}
	if err == nil {
		res, err = readStatement(pl, lim, cancel)
	}
	// Close reads what is left: the ROLLBACK and the Sync. Its error
	// matters only when nothing failed before: then the result was read
	// whole (or cut by a bound), and a failed ROLLBACK or a connection
	// closed by the drain leaves a connection that is not idle, which the
	// pool destroys on release (and its statements with it); the result
	// stands.
	_ = pl.Close()
	if err != nil {
		rollbackFailed(ctx, conn)
		return ports.SQLResult{}, err
	}
	return res, nil
}

// rollbackFailed ends the transaction an error left open: the server
// skipped the pipeline's own ROLLBACK. Without it the pool would destroy
// the connection, and on a shared backend (PGlite) hold everyone else's
// statements behind it. When it cannot be sent (the deadline passed, the
// connection is gone), the connection stays not idle and the pool
// destroys it on release, which ends the transaction as surely.
func rollbackFailed(ctx context.Context, conn *pgconn.PgConn) {
	if conn.IsClosed() || conn.IsBusy() || conn.TxStatus() == 'I' {
		return
	}
	_, _ = conn.ExecParams(ctx, "ROLLBACK", nil, nil, nil, nil).Close()
}

// closed reads a Deallocate's answer from pl.
func closed(pl *pgconn.Pipeline) error {
	out, err := pl.GetResults()
	if err != nil {
		return err
	}
	if _, ok := out.(*pgconn.CloseComplete); !ok {
		return errPipeline
	}
	return nil
}

// The runner's own statements, prepared on each connection beside its
// settings.
const (
	beginSQL    = "BEGIN READ ONLY"
	rollbackSQL = "ROLLBACK"
)

// statement is one named statement of an exchange: parsed is set when its
// Parse went in this exchange, and desc, the connection's description of
// it, when it went in an earlier one.
type statement struct {
	text, name string
	desc       *pgconn.StatementDescription
	parsed     bool
}

// prepare looks text up in cache and sends its Parse when the connection
// does not have it prepared yet.
func prepare(pl *pgconn.Pipeline, cache *stmtCache, text string) statement {
	desc, name := cache.lookup(text)
	if desc == nil {
		pl.SendPrepare(name, text, nil)
	}
	return statement{text: text, name: name, desc: desc, parsed: desc == nil}
}

// send sends st's Bind and Execute. Its result has the columns its
// description lists, as pgx's own statement cache assumes: a plan whose
// result type changed fails its Bind instead (codePlanChanged). So only
// the statement just parsed, whose description is still on its way, is
// described again; pgconn describes a statement without columns too.
func (st statement) send(pl *pgconn.Pipeline, args [][]byte) {
	if st.desc == nil {
		pl.SendQueryPrepared(st.name, args, nil, nil)
		return
	}
	pl.SendQueryStatement(st.desc, args, nil, nil)
}

// prepared reads the answer to st's Parse, if one was sent, from pl and
// records the statement in cache (own: never evicted).
func prepared(pl *pgconn.Pipeline, cache *stmtCache, st statement, own bool) error {
	if !st.parsed {
		return nil
	}
	out, err := pl.GetResults()
	if err != nil {
		return err
	}
	desc, ok := out.(*pgconn.StatementDescription)
	if !ok {
		return errPipeline
	}
	desc.Name = st.name
	cache.add(st.text, desc, own)
	return nil
}

// discard reads one query's result from pl and drops its rows.
func discard(pl *pgconn.Pipeline) error {
	out, err := pl.GetResults()
	if err != nil {
		return err
	}
	rr, ok := out.(*pgconn.ResultReader)
	if !ok {
		return errPipeline
	}
	_, err = rr.Close()
	return err
}

// errPipeline reports a reply out of the order the requests were sent in.
var errPipeline = errors.New("the database answered the pipeline out of order")

// readStatement reads the vetted statement's result from pl under lim. When
// a bound stops it early, the rows past it are discarded briefly to keep
// the connection, or cancel closes it.
func readStatement(pl *pgconn.Pipeline, lim ports.SQLLimits, cancel context.CancelFunc) (ports.SQLResult, error) {
	out, err := pl.GetResults()
	if err != nil {
		return ports.SQLResult{}, err
	}
	rr, ok := out.(*pgconn.ResultReader)
	if !ok {
		return ports.SQLResult{}, errPipeline
	}
	res, early := collect(rr, lim)
	if early {
		t := time.AfterFunc(drainTimeout, cancel)
		_, _ = rr.Close()
		t.Stop()
		return res, nil
	}
	if _, err := rr.Close(); err != nil {
		return ports.SQLResult{}, err
	}
	return res, nil
}

// settingsKey is what sessionSQL's text depends on.
type settingsKey struct {
	timeout        time.Duration
	tempFile, work int64
	inPlace        reportedMask
}

type settingsText struct {
	key  settingsKey
	text string
}

// lastSettings holds the settings text last built: the limits are the
// same from call to call (the deployment's), so it is built once rather
// than per call.
var lastSettings atomic.Pointer[settingsText]

// settingsFor is sessionSQL(lim, inPlace), built again only when either
// changed.
func settingsFor(lim ports.SQLLimits, inPlace reportedMask) string {
	key := settingsKey{lim.Timeout, lim.TempFileBytes, lim.WorkMemBytes, inPlace}
	if last := lastSettings.Load(); last != nil && last.key == key {
		return last.text
	}
	text := sessionSQL(lim, inPlace)
	lastSettings.Store(&settingsText{key, text})
	return text
}

// reportedSettings are the settings sessionSQL pins that PostgreSQL
// reports to the client at the start of a session and whenever their
// session value changes (GUC_REPORT), with the values that give the text
// forms cellValue reads (for TimeZone, the two spellings of UTC servers
// start with). They are the dearest of the settings: on PostgreSQL 15
// the three took about 5% of a 100-row call, the other five together
// under half of that.
var reportedSettings = [...]struct {
	name  string
	value []string // the first is the one sessionSQL sets
}{
	{"DateStyle", []string{"ISO, MDY"}},
	{"IntervalStyle", []string{"postgres"}},
	{"TimeZone", []string{"UTC", "Etc/UTC"}},
}

// reportedMask has bit i set when reportedSettings[i] needs no setting.
type reportedMask uint8

// reportedInPlace returns which of reportedSettings conn's session
// already has, as the server last reported them. Nothing a call does
// changes them for the next (the ROLLBACK reverts the session too), and a
// pooler that moves the client between server sessions carries the
// reported settings along (PgBouncer sets them on the server it picks),
// as drivers that read them rely on: pgx escapes by the reported
// standard_conforming_strings. Were the report ever wrong, values would
// arrive in another text form, which cellValue passes on as text: so on
// a session shared by several connections, as PGlite's one backend is,
// after another connection changed one of them for the session (only
// that connection is told). The statement timeout, the limits on disk
// and memory and the text forms nobody reports are set every call.
func reportedInPlace(conn *pgconn.PgConn) reportedMask {
	var m reportedMask
	for i, s := range reportedSettings {
		if slices.Contains(s.value, conn.ParameterStatus(s.name)) {
			m |= 1 << i
		}
	}
	return m
}

// sessionSQL pins, for this transaction only, the statement timeout, the
// space a statement may use on disk and for each sort or hash, and the
// settings that shape the text the values arrive in, whatever the role or
// database defaults are, but for those of reportedSettings inPlace says
// the session already has. It is our own constant text plus numbers we
// formatted; set_config(..., true) is SET LOCAL as one statement, which
// the extended protocol requires. The calls are joined with || into one
// column (each is evaluated: || needs both sides), so the answer to each
// call is one short field rather than a column description and a value
// per setting.
func sessionSQL(lim ports.SQLLimits, inPlace reportedMask) string {
	ms := lim.Timeout.Milliseconds()
	ms = max(ms, 1) // 0 would disable the timeout
	ms = min(ms, maxStatementTimeoutMS)
	var b strings.Builder
	b.WriteString("SELECT set_config('statement_timeout', '")
	b.WriteString(strconv.FormatInt(ms, 10))
	b.WriteString("', true)")
	if lim.TempFileBytes >= 0 {
		b.WriteString(" || set_config('temp_file_limit', '")
		b.WriteString(strconv.FormatInt(kilobytes(lim.TempFileBytes, 0), 10))
		b.WriteString("', true)")
	}
	if lim.WorkMemBytes >= 0 {
		b.WriteString(" || set_config('work_mem', '")
		b.WriteString(strconv.FormatInt(kilobytes(lim.WorkMemBytes, minWorkMemKB), 10))
		b.WriteString("', true)")
	}
	for i, s := range reportedSettings {
		if inPlace&(1<<i) == 0 {
			b.WriteString(" || set_config('" + s.name + "', '" + s.value[0] + "', true)")
		}
	}
	b.WriteString(" || set_config('bytea_output', 'hex', true)" +
		" || set_config('extra_float_digits', '1', true)")
	return b.String()
}

// kilobytes is n bytes in PostgreSQL's kB unit, rounded up, between floor
// and the largest value an int4 setting holds.
func kilobytes(n, floor int64) int64 {
	kb := n / 1024
	if n%1024 != 0 {
		kb++
	}
	return min(max(kb, floor), maxStatementTimeoutMS)
}

func withDefaults(lim ports.SQLLimits) ports.SQLLimits {
	if lim.MaxRows <= 0 {
		lim.MaxRows = DefaultMaxRows
	}
	if lim.MaxColumns <= 0 {
		lim.MaxColumns = DefaultMaxColumns
	}
	if lim.MaxCellBytes <= 0 {
		lim.MaxCellBytes = DefaultMaxBytes
	}
	if lim.MaxTotalBytes <= 0 {
		lim.MaxTotalBytes = DefaultMaxBytes
	}
	if lim.Timeout <= 0 {
		lim.Timeout = DefaultTimeout
	}
	lim.Timeout = min(lim.Timeout, maxStatementTimeoutMS*time.Millisecond)
	if lim.TempFileBytes == 0 {
		lim.TempFileBytes = DefaultTempFileBytes
	}
	if lim.WorkMemBytes == 0 {
		lim.WorkMemBytes = DefaultWorkMemBytes
	}
	return lim
}

// bindArgs turns the caller's values into text (or nil). Each is sent in
// the Bind message as text and parsed by the server as the type it
// inferred for its placeholder, exactly like a quoted literal in that
// position: nothing in a value is ever read as SQL.
func bindArgs(args []any) ([][]byte, error) {
	out := make([][]byte, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case nil:
			out[i] = nil
		case string:
			out[i] = []byte(v)
		case bool:
			out[i] = []byte(strconv.FormatBool(v))
		case json.Number:
			out[i] = []byte(string(v))
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, ErrUnsupportedArgument
			}
			out[i] = []byte(strconv.FormatFloat(v, 'f', -1, 64))
		case float32:
			f := float64(v)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, ErrUnsupportedArgument
			}
			out[i] = []byte(strconv.FormatFloat(f, 'f', -1, 32))
		case int:
			out[i] = []byte(strconv.FormatInt(int64(v), 10))
		case int8:
			out[i] = []byte(strconv.FormatInt(int64(v), 10))
		case int16:
			out[i] = []byte(strconv.FormatInt(int64(v), 10))
		case int32:
			out[i] = []byte(strconv.FormatInt(int64(v), 10))
		case int64:
			out[i] = []byte(strconv.FormatInt(v, 10))
		case uint:
			out[i] = []byte(strconv.FormatUint(uint64(v), 10))
		case uint8:
			out[i] = []byte(strconv.FormatUint(uint64(v), 10))
		case uint16:
			out[i] = []byte(strconv.FormatUint(uint64(v), 10))
		case uint32:
			out[i] = []byte(strconv.FormatUint(uint64(v), 10))
		case uint64:
			out[i] = []byte(strconv.FormatUint(v, 10))
		default:
			return nil, ErrUnsupportedArgument
		}
	}
	return out, nil
}

// rowReader is the part of *pgconn.ResultReader that collect reads.
type rowReader interface {
	FieldDescriptions() []pgconn.FieldDescription
	NextRow() bool
	Values() [][]byte
}

// endsOnStack is how many cells' ends collect keeps on its stack before
// they move to the heap: 256 rows of two columns, 4 KB of stack.
const endsOnStack = 512

// collect reads rows under lim. early reports that it stopped before the
// end of the result (a bound was reached); the caller then discards the
// rest. Either way the caller closes rows and, when early is false, checks
// its error.
func collect(rows rowReader, lim ports.SQLLimits) (res ports.SQLResult, early bool) {
	fds := rows.FieldDescriptions()
	ncols := min(len(fds), lim.MaxColumns)
	var cutRows, cutCols, cutCells, cutTotal bool
	cutCols = len(fds) > ncols
	res.Columns = make([]string, ncols)
	for i := range ncols {
		res.Columns[i] = columnName(fds[i].Name)
	}
	total, nrows := 0, 0
	// The cells' JSON goes into one buffer and only where each ends is
	// kept while reading; the cells and rows, which hold pointers and so
	// cost the collector, are then allocated once each, at their size.
	var out jsonArena
	var endsBuf [endsOnStack]int
	ends := endsBuf[:0]
	for rows.NextRow() {
		if nrows >= lim.MaxRows {
			cutRows, early = true, true
			break
		}
		raw := rows.Values()
		rowBytes, rowCut := 0, false
		for i := range ncols {
			var raw1 []byte
			if i < len(raw) {
				raw1 = raw[i]
			}
			_, n, cut := out.cell(fds[i].DataTypeOID, raw1, lim.MaxCellBytes)
			ends = append(ends, len(out.buf))
			rowBytes += n
			rowCut = rowCut || cut
		}
		if total+rowBytes > lim.MaxTotalBytes {
			cutTotal, early = true, true
			ends = ends[:nrows*ncols]
			break
		}
		total += rowBytes
		cutCells = cutCells || rowCut
		nrows++
	}
	var cells []json.RawMessage
	if len(ends) > 0 {
		cells = make([]json.RawMessage, len(ends))
	}
	from := 0
	for i, to := range ends {
		cells[i] = json.RawMessage(out.buf[from:to:to])
		from = to
	}
	res.Rows = make([][]json.RawMessage, nrows)
	for i := range res.Rows {
		res.Rows[i] = cells[i*ncols : (i+1)*ncols : (i+1)*ncols]
	}
	for _, c := range []struct {
		on   bool
		name string
	}{{cutRows, ports.SQLTruncRows}, {cutCols, ports.SQLTruncColumns}, {cutCells, ports.SQLTruncCellBytes}, {cutTotal, ports.SQLTruncTotalBytes}} {
		if c.on {
			res.Truncated = append(res.Truncated, c.name)
		}
	}
	return res, early
}

// columnName returns a column name as valid UTF-8 of at most
// MaxColumnNameBytes. It is otherwise raw: the caller sanitizes it.
func columnName(name string) string {
	return cutUTF8(strings.ToValidUTF8(name, "\uFFFD"), MaxColumnNameBytes)
}

// cutUTF8 returns the longest prefix of the valid UTF-8 string s that has at
// most n bytes and ends on a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// cellValue maps one value in PostgreSQL's text format to a JSON-ready
// value, its size as the bounds count it (jsonSize), and whether it was cut
// to maxBytes. A value whose mapped value is larger than maxBytes comes
// back as its text form cut on a UTF-8 boundary; so does one whose text is
// so much longer than maxBytes (mapLimit) that it is cut without being
// decoded.
//
// The settings sessionSQL pins (or finds the session has) make the text
// forms below stable: DateStyle ISO, TimeZone UTC, bytea_output hex,
// shortest exact floats.
func cellValue(oid uint32, raw []byte, maxBytes int) (v any, size int, cut bool) {
	if raw == nil {
		return nil, jsonSize(nil), false
	}
	if !utf8.Valid(raw) {
		// Only a SQL_ASCII database passes invalid bytes through.
		raw = bytes.ToValidUTF8(raw, []byte("\uFFFD"))
	}
	if len(raw) > mapLimit(maxBytes) {
		// Far too long to fit once mapped: cut it without mapping it.
		s := cutUTF8(string(raw[:maxBytes+1]), maxBytes)
		return s, len(s), true
	}
	return textCell(oid, string(raw), maxBytes)
}

// textCell is cellValue for a value whose text is valid UTF-8 of at most
// mapLimit(maxBytes) bytes.
func textCell(oid uint32, text string, maxBytes int) (v any, size int, cut bool) {
	v = textValue(oid, text)
	if _, ok := v.(bool); ok {
		// Never cut: a bound below five bytes cannot mean "no booleans".
		return v, jsonSize(v), false
	}
	if size = jsonSize(v); size > maxBytes {
		// A copy: text may share its memory with other cells.
		s := strings.Clone(cutUTF8(text, maxBytes))
		return s, len(s), true
	}
	return v, size, false
}

// textValue maps the text form of a non-null value of type oid.
//
//   - bool: true or false
//   - integers, oid, float4/8, numeric: json.Number; NaN and the
//     infinities, which JSON has no number for, stay text
//   - json, jsonb: decoded (numbers as json.Number)
//   - timestamptz: RFC 3339 in UTC; timestamp: the same without an offset
//     (it has none); date: RFC 3339 full-date, which is its ISO text.
//     Values Go's time cannot spell the same way (infinity, BC, years past
//     9999) stay PostgreSQL's text.
//   - arrays of the types pgx knows: []any, nested per dimension, elements
//     mapped by these rules; the lower bounds of a non-default array are
//     dropped
//   - everything else (text types, uuid, bytea as \x hex, interval, time,
//     inet, money, enums, ranges, composites, ...): PostgreSQL's text form
func textValue(oid uint32, text string) any {
	switch oid {
	case pgtype.BoolOID:
		switch text {
		case "t":
			return true
		case "f":
			return false
		}
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.OIDOID,
		pgtype.Float4OID, pgtype.Float8OID, pgtype.NumericOID:
		if isJSONNumber(text) {
			return json.Number(text)
		}
	case pgtype.JSONOID, pgtype.JSONBOID:
		if v, ok := decodeJSON(text); ok {
			return v
		}
	case pgtype.TimestamptzOID:
		if t, err := time.Parse("2006-01-02 15:04:05.999999999Z07", text); err == nil && inFourDigitYears(t) {
			return t.UTC().Format(time.RFC3339Nano)
		}
	case pgtype.TimestampOID:
		if t, err := time.Parse("2006-01-02 15:04:05.999999999", text); err == nil && inFourDigitYears(t) {
			return t.Format("2006-01-02T15:04:05.999999999")
		}
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID, pgtype.UUIDOID:
		// The commonest columns: text as it is, without the array lookup.
	default:
		if elem, ok := arrayElems()[oid]; ok {
			if v, err := parseArray(text, elem); err == nil {
				return v
			}
		}
	}
	return text
}

// mapLimit is the longest text form cellValue maps under a bound of
// maxBytes. Mapping can shrink a value (quotes and escapes in arrays,
// whitespace in json, the offset of a timestamp), so the text may be
// somewhat longer than the bound and still fit; far beyond it, decoding
// would only cost memory.
func mapLimit(maxBytes int) int {
	if maxBytes > math.MaxInt/4 {
		return math.MaxInt
	}
	return 4 * maxBytes
}

func inFourDigitYears(t time.Time) bool { return t.Year() >= 1 && t.Year() <= 9999 }

// isJSONNumber reports whether s is a number in JSON's grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// decodeJSON decodes one JSON document with numbers as json.Number.
func decodeJSON(text string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

// jsonSize is the size a value counts for against the byte bounds: the
// length of its JSON text, not counting the quotes and escapes around
// strings (a string counts its UTF-8 bytes).
func jsonSize(v any) int {
	switch v := v.(type) {
	case nil:
		return len("null")
	case bool:
		if v {
			return len("true")
		}
		return len("false")
	case string:
		return len(v)
	case json.Number:
		return len(v)
	case []any:
		n := 2 + max(len(v)-1, 0)
		for _, e := range v {
			n += jsonSize(e)
		}
		return n
	case map[string]any:
		n := 2 + max(len(v)-1, 0)
		for k, e := range v {
			n += len(k) + 1 + jsonSize(e)
		}
		return n
	}
	return 0
}

// arrayElems maps the array types pgx registers to their element types.
// Arrays of other types (enums, domains, extension types) stay text. It is
// built on the first array value, not at start-up: a pgx type map costs
// every process about half a millisecond, and only sql_query needs it.
var arrayElems = sync.OnceValue(func() map[uint32]uint32 {
	m := map[uint32]uint32{}
	tm := pgtype.NewMap()
	for _, oid := range []uint32{
		pgtype.BoolArrayOID, pgtype.QCharArrayOID, pgtype.NameArrayOID,
		pgtype.Int2ArrayOID, pgtype.Int4ArrayOID, pgtype.Int8ArrayOID,
		pgtype.OIDArrayOID, pgtype.Float4ArrayOID, pgtype.Float8ArrayOID,
		pgtype.NumericArrayOID, pgtype.TextArrayOID, pgtype.BPCharArrayOID,
		pgtype.VarcharArrayOID, pgtype.ByteaArrayOID, pgtype.UUIDArrayOID,
		pgtype.JSONArrayOID, pgtype.JSONBArrayOID, pgtype.DateArrayOID,
		pgtype.TimestampArrayOID, pgtype.TimestamptzArrayOID,
		pgtype.TimeArrayOID, pgtype.TimetzArrayOID, pgtype.IntervalArrayOID,
		pgtype.InetArrayOID, pgtype.CIDRArrayOID, pgtype.MacaddrArrayOID,
		pgtype.XMLArrayOID,
	} {
		t, ok := tm.TypeForOID(oid)
		if !ok {
			continue
		}
		if ac, ok := t.Codec.(*pgtype.ArrayCodec); ok {
			m[oid] = ac.ElementType.OID
		}
	}
	return m
})

var errArrayText = errors.New("unexpected array text")

// parseArray parses PostgreSQL's text output of an array whose elements
// are of type elem (and use ',' as delimiter, true of every type in
// arrayElems) into nested []any.
func parseArray(text string, elem uint32) (any, error) {
	if strings.HasPrefix(text, "[") {
		// Dimension decoration, written when a lower bound is not 1.
		i := strings.IndexByte(text, '=')
		if i < 0 {
			return nil, errArrayText
		}
		text = text[i+1:]
	}
	p := arrayParser{s: text, elem: elem}
	v, err := p.array(1)
	if err != nil {
		return nil, err
	}
	if p.i != len(p.s) {
		return nil, errArrayText
	}
	return v, nil
}

type arrayParser struct {
	s    string
	i    int
	elem uint32
}

func (p *arrayParser) array(depth int) ([]any, error) {
	if depth > maxArrayDims || p.i >= len(p.s) || p.s[p.i] != '{' {
		return nil, errArrayText
	}
	p.i++
	out := []any{}
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return out, nil
	}
	for {
		if p.i >= len(p.s) {
			return nil, errArrayText
		}
		switch p.s[p.i] {
		case '{':
			sub, err := p.array(depth + 1)
			if err != nil {
				return nil, err
			}
			out = append(out, sub)
		case '"':
			s, err := p.quoted()
			if err != nil {
				return nil, err
			}
			out = append(out, textValue(p.elem, s))
		default:
			start := p.i
			for p.i < len(p.s) && p.s[p.i] != ',' && p.s[p.i] != '}' {
				if p.s[p.i] == '"' || p.s[p.i] == '{' || p.s[p.i] == '\\' {
					return nil, errArrayText
				}
				p.i++
			}
			tok := p.s[start:p.i]
			switch {
			case tok == "":
				return nil, errArrayText
			case strings.EqualFold(tok, "NULL"):
				out = append(out, nil)
			default:
				out = append(out, textValue(p.elem, tok))
			}
		}
		if p.i >= len(p.s) {
			return nil, errArrayText
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return out, nil
		default:
			return nil, errArrayText
		}
	}
}

// quoted reads a double-quoted element, in which a backslash escapes the
// next byte.
func (p *arrayParser) quoted() (string, error) {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case '\\':
			if p.i+1 >= len(p.s) {
				return "", errArrayText
			}
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		case '"':
			p.i++
			return b.String(), nil
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", errArrayText
}

// classify maps a failure to the kind a caller sees.
func classify(err error) ports.SQLErrorKind {
	// A connection that could not be established is unavailable, even
	// when the server answered with an error (bad password, no such
	// database, too many connections, shutting down).
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || errors.Is(err, ErrSessionSettings) {
		return ports.SQLUnavailable
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if pe.Code == "53400" && strings.Contains(pe.Message, "temp_file_limit") {
			// configuration_limit_exceeded, raised for temp_file_limit
			// and a few other server limits; only this one is the
			// caller's doing.
			return ports.SQLTempFiles
		}
		return pgErrorKind(pe.Code)
	}
	switch {
	case errors.Is(err, ErrClosed):
		return ports.SQLUnavailable
	case errors.Is(err, context.DeadlineExceeded), pgconn.Timeout(err):
		return ports.SQLTimeout
	case errors.Is(err, context.Canceled):
		return ports.SQLFailed
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return ports.SQLUnavailable
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return ports.SQLUnavailable
	}
	return ports.SQLFailed
}

// pgErrorKind maps an SQLSTATE
// (https://www.postgresql.org/docs/current/errcodes-appendix.html).
func pgErrorKind(code string) ports.SQLErrorKind {
	switch code {
	case "57014": // query_canceled: statement_timeout, or a cancel request
		return ports.SQLTimeout
	case "08P01": // protocol_violation: a Bind whose values do not match the Parse
		return ports.SQLInvalid
	case "25006", // read_only_sql_transaction
		"42501": // insufficient_privilege
		return ports.SQLRejected
	case "53300", // too_many_connections
		"57P01", // admin_shutdown
		"57P02", // crash_shutdown
		"57P03": // cannot_connect_now
		return ports.SQLUnavailable
	}
	switch {
	case strings.HasPrefix(code, "42"), // syntax error or access rule violation
		strings.HasPrefix(code, "22"): // data exception (a value of the wrong type)
		return ports.SQLInvalid
	case strings.HasPrefix(code, "08"): // connection exception
		return ports.SQLUnavailable
	}
	return ports.SQLFailed
}
