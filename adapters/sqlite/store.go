// Package sqlite is the embedded store that several server processes on
// one machine share: one SQLite file (modernc.org/sqlite, pure Go) under
// ARROWHEAD_DATA_DIR, in WAL mode with synchronous=FULL. It replaces the
// single-process bbolt file (adapters/bolt) for the state it holds: a
// person running one stdio server per MCP client gets one set of
// memories, kv entries and working sets, not one per client.
//
// # Using it
//
// The composition root (adapters/wire) opens the store once per process
// and hands it to each adapter:
//
//	store, err := sqlite.Open(sqlite.Config{Dir: s.DataDir})
//	err = store.Write(ctx, func(tx *Tx) error { _, err := tx.ExecContext(ctx, ...); return err })
//	err = store.Read(ctx, func(tx *Tx) error { ...; return nil })
//
// # Guarantees
//
//   - Durability: Write returns nil only once its transaction is
//     committed and the write-ahead log fsynced (synchronous=FULL). SIGKILL
//     of any process after that loses nothing.
//   - Several processes: SQLite's own locks serialise writers across
//     processes; a writer that finds the file busy waits (busy_timeout)
//     and is retried (retryBusy), so contention is a delay, never an
//     error a caller sees. Readers never wait for writers (WAL), and every
//     Read sees every commit acknowledged before it began, whichever
//     process made it.
//   - Group commit: concurrent Write calls of one process share one
//     transaction and one fsync (internal/groupcommit), each call inside
//     its own savepoint, so a call that fails is rolled back alone. A
//     failure of the store itself (a full disk, an I/O error, damage)
//     rolls the whole transaction back: every call of the batch is then
//     refused, none half-applied.
//   - A full disk refuses writes, never deletes: a reserve file held
//     beside the store gives the deletes room in the log (reserve.go),
//     and /ready reports the state (Health).
//   - Damage is refused, never half-served: Open refuses a file that is
//     not a SQLite database, or whose tables fail PRAGMA quick_check, with
//     ErrCorrupt, which names ARROWHEAD_DATA_DIR. The vector index's
//     chunk table, too large to check at every start, is checked once per
//     process before its first read or write (checkTable); damage found
//     there refuses the vectors and marks the store down on /ready.
//
// # Concurrency contract
//
// A Store is safe for concurrent use by many goroutines and many
// processes. Inside fn, use only tx, do not call Read or Write again
// (the writer connection is the one fn holds), and keep it short. A Write
// fn may run more than once (a batch interrupted by a busy file is rerun
// whole), so it must reset what it reports and take every random or clock
// value from outside.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/arrowhead-go/arrowhead/internal/groupcommit"
	"github.com/arrowhead-go/arrowhead/ports"
)

const (
	// FileName is the store's file inside ARROWHEAD_DATA_DIR (its -wal and
	// -shm companions sit beside it).
	FileName = "arrowhead.sqlite"
	// DefaultBusyTimeout is how long SQLite itself waits for another
	// process's lock before a read reports the file busy; retryBusy then
	// tries again until MaxBusyWait has passed.
	DefaultBusyTimeout = 5 * time.Second
	// MaxBusyWait bounds the whole wait for a busy file: a process that
	// holds the write lock this long is stuck, and the caller is told the
	// store is busy rather than left waiting.
	MaxBusyWait = 60 * time.Second
	// pageSize is SQLite's default page size, which the store keeps.
	pageSize = 4096
	// minPoll and maxPoll bound the wait between two tries for a lock
	// another process holds: short, since a commit holds it for about one
	// fsync, and a process that polls slowly never gets a turn.
	minPoll = 100 * time.Microsecond
	maxPoll = 2 * time.Millisecond
	// readConns is how many read connections a process keeps: reads run
	// beside the one writer and each other.
	readConns = 4
)

// Errors of the store. None carries a path, a key or a value.
var (
	ErrCorrupt = errors.New("the store file in ARROWHEAD_DATA_DIR is damaged; move it aside (keep it for recovery) and start again")
	ErrNewer   = errors.New("the store file in ARROWHEAD_DATA_DIR was written by a newer build")
	ErrClosed  = errors.New("the embedded store is closed")
	// ErrFull is ports.ErrStoreFull: the write was refused whole.
	ErrFull = fmt.Errorf("the embedded store's disk is full: writes other than deletes are refused until space is freed: %w", ports.ErrStoreFull)
	ErrBusy = errors.New("the embedded store stayed busy: another process holds its write lock")
)

// Config configures the store.
type Config struct {
	// Dir is the data directory (ARROWHEAD_DATA_DIR); it is created, with
	// mode 0700, when missing. The file inside it is FileName, mode 0600.
	Dir string
	// BusyTimeout is SQLite's busy_timeout for reads; 0 means
	// DefaultBusyTimeout. Writes poll for the lock themselves.
	BusyTimeout time.Duration
	// ReserveBytes is the space held back for deletes on a full disk
	// (reserve.go); 0 means DefaultReserveBytes.
	ReserveBytes int64
	// MinFreeBytes is the free space on the directory's file system
	// under which Health reports degraded (ARROWHEAD_DATA_MIN_FREE_BYTES);
	// 0 checks none.
	MinFreeBytes int64
	// TokenIssuer is the one issuer the server accepts tokens from; when
	// set, a token caller's data stored under its bare subject before
	// principals were keyed by issuer is carried over to its key on its
	// first access (carry.go). Empty carries nothing: a program that
	// names its own callers by bare subject leaves it so.
	TokenIssuer string
}

// Store is the open store file. See the package documentation for its
// guarantees and concurrency contract.
type Store struct {
	w       *sql.DB // one connection: the process's one writer
	r       *sql.DB // read connections (query_only)
	ws      stmtCache
	rs      stmtCache
	turn    *turn // the fair hand-over of the write lock between processes
	group   groupcommit.Group[writeCall]
	reserve reserve
	minFree int64
	path    string

	closed  atomic.Bool
	damaged atomic.Bool

	checkMu sync.Mutex       // guards checked
	checked map[string]error // lazyChecked tables checked in this process
	// carryPrefix starts the keys whose legacy data is carried over
	// ("iss=<TokenIssuer> sub="), empty for none; carried holds the keys
	// this process found carried over already.
	carryPrefix string
	carryIssuer string
	carried     sync.Map
	// fault is the store's own error that refused the last batch (an
	// I/O error, a read-only file), nil once a batch commits: Health
	// reports it.
	fault atomic.Pointer[error]
}

// writeCall is one Write or Delete call in a group commit.
type writeCall struct {
	fn func(*Tx) error
	// frees is true for a Delete: it runs while the disk is full.
	frees bool
}

// Path is the store file's path, for the operator's tools (never for an
// error message).
func (s *Store) Path() string { return s.path }

// sqliteHeader opens every SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

// Open opens (creating when absent) the store file in cfg.Dir, checks it,
// and brings its schema up to date: a damaged file is refused with
// ErrCorrupt.
func Open(cfg Config) (*Store, error) {
	if cfg.Dir == "" {
		return nil, errors.New("ARROWHEAD_DATA_DIR is empty")
	}
	busy := cfg.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, diskErr("creating ARROWHEAD_DATA_DIR", err)
	}
	path := filepath.Join(cfg.Dir, FileName)
	// Created here with mode 0600 (SQLite would use 0644); its -wal and
	// -shm files take the same mode from it.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, diskErr("opening the store file", err)
	}
	err = checkHeader(f)
	f.Close()
	if err != nil {
		return nil, err
	}
	t, err := openTurn(path)
	if err != nil {
		return nil, err
	}
	w, err := openDB(path, busy, true)
	if err != nil {
		t.close()
		return nil, err
	}
	size := cfg.ReserveBytes
	if size <= 0 {
		size = DefaultReserveBytes
	}
	s := &Store{w: w, path: path, turn: t, minFree: cfg.MinFreeBytes, reserve: reserve{path: path + ReserveSuffix, size: size}}
	if cfg.TokenIssuer != "" {
		s.carryPrefix, s.carryIssuer = ports.TokenKeyPrefix+cfg.TokenIssuer+" sub=", cfg.TokenIssuer
	}
	s.ws.db = w
	err = s.prepare()
	if err != nil && s.reserve.held() && s.lowOnRoom() {
		// Opening needs room too: the shared-memory index and the log
		// are created again after the last process closed the file.
		if err = s.reserve.release(); err == nil {
			err = s.prepare()
		}
	}
	if err != nil {
		w.Close()
		t.close()
		return nil, err
	}
	if s.r, err = openDB(path, busy, false); err != nil {
		w.Close()
		t.close()
		return nil, err
	}
	s.rs.db = s.r
	// A disk with no room for the reserve opens the store full: it reads
	// and deletes, and writes again once there is room.
	s.reserve.ensure()
	return s, nil
}

// checkHeader refuses a non-empty file that is not a SQLite database
// before SQLite sees it: SQLite would refuse it too, but with "file is
// not a database" only at the first statement.
func checkHeader(f *os.File) error {
	head := make([]byte, len(sqliteHeader))
	n, err := io.ReadFull(f, head)
	switch {
	case n == 0 && (err == io.EOF || err == nil):
		return nil // new file
	case err != nil && err != io.ErrUnexpectedEOF:
		return diskErr("reading the store file", err)
	case string(head[:n]) != sqliteHeader:
		return fmt.Errorf("%w: it is not a SQLite database", ErrCorrupt)
	}
	return nil
}

func openDB(path string, busy time.Duration, writer bool) (*sql.DB, error) {
	q := url.Values{}
	if writer {
		// The writer polls for the lock itself (retryBusy), every
		// millisecond or two: SQLite's busy handler backs off to 100 ms
		// sleeps, and a process that commits back to back would win the
		// lock each time it is free, starving the other processes.
		busy = 0
	}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "synchronous(FULL)")
	if writer {
		// BEGIN IMMEDIATE takes the write lock up front: a deferred
		// transaction that reads and then writes can fail with
		// SQLITE_BUSY_SNAPSHOT when another process committed in between,
		// which no wait resolves.
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}).String())
	if err != nil {
		return nil, fmt.Errorf("opening the store file: %w", err)
	}
	if writer {
		db.SetMaxOpenConns(1)
	} else {
		db.SetMaxOpenConns(readConns)
	}
	db.SetMaxIdleConns(readConns)
	db.SetConnMaxIdleTime(0)
	return db, nil
}

// prepare switches the file to WAL, checks it and creates or upgrades its
// tables. Several processes may prepare one new file at once: the schema
// is written inside one immediate transaction that looks first.
func (s *Store) prepare() error {
	ctx := context.Background()
	var mode string
	err := retryBusy(ctx, func() error {
		// Deletes on a full disk give pages back to the file system
		// (incremental vacuum); this takes effect only in a file that
		// has no tables yet, and so is kept from its creation. Only a
		// new file is asked: the pragma writes, and an existing file may
		// sit on a full disk.
		var pages int
		if err := s.w.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
			return err
		}
		if pages == 0 {
			if _, err := s.w.ExecContext(ctx, "PRAGMA auto_vacuum=INCREMENTAL"); err != nil {
				return err
			}
		}
		return s.w.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
	})
	if err != nil {
		return classify("opening the store file", err)
	}
	if mode != "wal" {
		return errors.New("the store file in ARROWHEAD_DATA_DIR cannot use a write-ahead log (is the directory on a network file system?)")
	}
	// What the log holds beyond the store file must fit in the reserve:
	// on a full disk, copying it in is what lets the log start over.
	if _, err := s.w.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint=%d", max(s.reserve.size/2/pageSize, 16))); err != nil {
		return classify("opening the store file", err)
	}
	if err := s.quickCheck(ctx); err != nil {
		return err
	}
	return s.migrate(ctx)
}

// lazyChecked are the tables too large to check at every start (the
// vector index's chunks: hundreds of megabytes for 100,000 vectors): each
// is checked once per process before its first read or write instead
// (checkTable), so no answer comes from an unchecked table.
var lazyChecked = []string{"vec_chunk"}

// quickCheck runs PRAGMA quick_check (SQLite's check of every page's
// structure; integrity_check adds indexes against their tables at several
// times the cost) on every table and its indexes, except lazyChecked, so
// a start is fast however large the vector index has grown.
func (s *Store) quickCheck(ctx context.Context) error {
	var tables []string
	err := retryBusy(ctx, func() error {
		tables = tables[:0]
		rows, err := s.w.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE type = 'table'")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				return err
			}
			if !slices.Contains(lazyChecked, name) {
				tables = append(tables, name)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return classify("checking the store file", err)
	}
	for _, t := range tables {
		if err := s.checkOne(ctx, s.w, t); err != nil {
			return err
		}
	}
	return nil
}

// checkTable checks a lazyChecked table once per process; a damaged table
// stays refused (ErrCorrupt) for the life of the process.
func (s *Store) checkTable(ctx context.Context, table string) error {
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	if err, done := s.checked[table]; done {
		return err
	}
	// On a read connection: the check takes a while on a large table, and
	// this process's writes go on beside it.
	err := s.checkOne(ctx, s.r, table)
	if errors.Is(err, ErrCorrupt) {
		s.damaged.Store(true) // /ready says so
	}
	if errors.Is(err, ErrCorrupt) || err == nil {
		if s.checked == nil {
			s.checked = map[string]error{}
		}
		s.checked[table] = err // a transient failure is tried again
	}
	return err
}

// checkOne runs PRAGMA quick_check on one table and its indexes.
func (s *Store) checkOne(ctx context.Context, db *sql.DB, table string) error {
	var got string
	err := retryBusy(ctx, func() error {
		rows, err := db.QueryContext(ctx, fmt.Sprintf("PRAGMA quick_check(%q)", table))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := rows.Scan(&got); err != nil {
				return err
			}
			if got != "ok" {
				break
			}
		}
		return rows.Err()
	})
	if err != nil {
		return classify("checking the store file", err)
	}
	if got != "ok" {
		return fmt.Errorf("%w: its integrity check failed", ErrCorrupt)
	}
	return nil
}

// Close releases the connections. Calls after Close fail with ErrClosed.
func (s *Store) Close() error {
	s.closed.Store(true)
	s.rs.close()
	s.ws.close()
	err := errors.Join(s.r.Close(), s.w.Close(), s.turn.close())
	if err != nil {
		return fmt.Errorf("closing the store file: %w", err)
	}
	return nil
}

// Read runs fn in a read transaction: one consistent snapshot, which
// includes every commit acknowledged before Read began, by any process.
func (s *Store) Read(ctx context.Context, fn func(tx *Tx) error) error {
	err := retryBusy(ctx, func() error {
		tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer tx.Rollback()
		return fn(&Tx{Tx: tx, stmts: &s.rs})
	})
	s.rs.done(ctx)
	return s.note(classify("reading the store file", err))
}

// Write runs fn in a write transaction shared with the Write calls of
// this process that arrive together (group commit), inside a savepoint of
// its own: an error from fn rolls back what fn did, and only that, and is
// returned as is. Write returns nil only once the transaction is durable.
// While the disk is full it refuses fn without running it (ErrFull).
func (s *Store) Write(ctx context.Context, fn func(tx *Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.group.Run(writeCall{fn: fn}, s.commitGroup)
}

// Delete is Write for a call that only removes or shrinks what is stored:
// it runs on a full disk too, in the space the reserve held, so a caller
// can always free space.
func (s *Store) Delete(ctx context.Context, fn func(tx *Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.group.Run(writeCall{fn: fn, frees: true}, s.commitGroup)
}

// commitGroup commits calls, gathered by s.group, and returns each one's
// result. While the disk is full (the reserve is missing) only the
// deletes run. A batch that fills the disk is rolled back whole; the
// reserve is then released and the deletes among it run again.
func (s *Store) commitGroup(calls []writeCall) []error {
	results := make([]error, len(calls))
	if err := s.turn.acquire(); err != nil {
		err = diskErr("locking the store file", err)
		for i := range results {
			results[i] = err
		}
		return results
	}
	defer s.turn.release()

	full := s.reserve.ensure()
	run := s.admit(calls, full, results)
	err := s.runBatch(calls, run, results)
	if errors.Is(err, ErrFull) && !full {
		full = true
		if rerr := s.reserve.release(); rerr != nil {
			err = rerr
		} else {
			// The store file grows into the reserve's space by what the
			// log holds, and the log can start over for the deletes.
			s.checkpoint(true)
			run = s.admit(calls, full, results)
			err = s.runBatch(calls, run, results)
		}
	}
	if errors.Is(err, ErrFull) && len(run) > 1 {
		// Even the reserve cannot hold these deletes in one transaction:
		// empty the log and run them one by one.
		s.checkpoint(true)
		for _, i := range run {
			if err := s.runBatch(calls, []int{i}, results); err != nil {
				results[i] = err
			}
		}
		err = nil
	}
	if err != nil {
		for _, i := range run {
			if results[i] == nil || isSQLite(results[i]) {
				results[i] = err
			}
		}
	}
	if slices.ContainsFunc(run, func(i int) bool { return calls[i].frees && results[i] == nil }) && (full || s.lowOnSpace()) {
		s.reclaim()
	}
	s.ws.done(context.Background())
	return results
}

// admit returns the indexes of the calls that may run: all of them, or
// while full only the deletes, the others being refused with ErrFull.
func (s *Store) admit(calls []writeCall, full bool, results []error) []int {
	run := make([]int, 0, len(calls))
	for i, c := range calls {
		if full && !c.frees {
			results[i] = ErrFull
			continue
		}
		run = append(run, i)
	}
	return run
}

// runBatch runs the calls at indexes run in one transaction, each in a
// savepoint, and commits. It sets results[i] to call i's own error and
// returns nil once committed, or returns the batch's error with nothing of
// it applied: an error of the store itself (storeFault) from any call
// rolls the whole transaction back, since SQLite may already have done so.
func (s *Store) runBatch(calls []writeCall, run []int, results []error) error {
	if len(run) == 0 {
		return nil
	}
	ctx := context.Background() // the calls' callers wait; the batch must finish
	err := retryBusy(ctx, func() error {
		for _, i := range run {
			results[i] = nil
		}
		sqlTx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer sqlTx.Rollback()
		tx := &Tx{Tx: sqlTx, stmts: &s.ws}
		for _, i := range run {
			if _, err := tx.ExecContext(ctx, "SAVEPOINT call"); err != nil {
				return err
			}
			if err := calls[i].fn(tx); err != nil {
				if isBusy(err) || storeFault(err) {
					return err // the whole batch fails, or waits and reruns
				}
				results[i] = err
				if _, err := tx.ExecContext(ctx, "ROLLBACK TO call"); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, "RELEASE call"); err != nil {
				return err
			}
		}
		if hook := testHookBeforeCommit; hook != nil {
			if err := hook(); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
	if err != nil {
		for _, i := range run {
			results[i] = nil
		}
		err = s.note(classify("writing the store file", err))
		if !errors.Is(err, ErrFull) {
			s.fault.Store(&err)
		}
		return err
	}
	s.fault.Store(nil)
	for _, i := range run {
		if isSQLite(results[i]) {
			results[i] = s.note(classify("writing the store file", results[i]))
		}
	}
	return nil
}

// testHookBeforeCommit, when set by a test, runs before each batch's
// commit: an error from it fails the batch as a failed commit would.
var testHookBeforeCommit func() error

// reclaim runs after deletes on a full disk, or one low on space: it gives the pages they
// freed back to the file system and empties the log, then puts the
// reserve back if that made room for it. Each step is best effort: what
// fails now is tried again after the next delete.
func (s *Store) reclaim() {
	ctx := context.Background()
	_ = retryBusy(ctx, func() error {
		_, err := s.w.ExecContext(ctx, "PRAGMA incremental_vacuum")
		return err
	})
	s.checkpoint(true)
	s.reserve.ensure()
}

// lowOnSpace reports whether the free space on the store's file system is
// under Config.MinFreeBytes: deletes then give back what they free.
func (s *Store) lowOnSpace() bool {
	free, err := freeBytes(s.path)
	return err == nil && free < s.minFree
}

// lowOnRoom reports whether the file system has less free space than the
// reserve holds: what fails there may fail for want of room.
func (s *Store) lowOnRoom() bool {
	free, err := freeBytes(s.path)
	return err == nil && free < s.reserve.size
}

// checkpoint copies the log into the store file; with truncate it also
// empties the log file, giving its blocks back, when no reader of any
// process still needs it.
func (s *Store) checkpoint(truncate bool) {
	mode := "PASSIVE"
	if truncate {
		mode = "TRUNCATE"
	}
	var busy, logged, done int
	_ = s.w.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &logged, &done)
}

// note remembers a damaged file for Health and returns err.
func (s *Store) note(err error) error {
	if errors.Is(err, ErrCorrupt) {
		s.damaged.Store(true)
	}
	return err
}

// HealthName is the store's name in /ready.
const HealthName = "embedded-store"

// Name implements ports.HealthReporter.
func (s *Store) Name() string { return HealthName }

// Health implements ports.HealthReporter.
func (s *Store) Health(ctx context.Context) ports.HealthState {
	st, _ := s.HealthReason(ctx)
	return st
}

// HealthReason implements ports.HealthExplainer: down when the store is
// closed, damaged, full (only deletes are accepted) or its last write
// failed for a reason of its own; degraded when the free space on its
// file system is under Config.MinFreeBytes; ok otherwise. It reads the
// store (one small query) and the file system, and writes only to put a
// released reserve back when there is room again.
func (s *Store) HealthReason(ctx context.Context) (ports.HealthState, string) {
	if s.closed.Load() {
		return ports.HealthDown, ErrClosed.Error()
	}
	if s.damaged.Load() {
		return ports.HealthDown, ErrCorrupt.Error()
	}
	err := s.Read(ctx, func(tx *Tx) error {
		var n int
		return tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n)
	})
	if err != nil {
		if ctx.Err() != nil {
			return ports.HealthDown, "the embedded store did not answer in time"
		}
		return ports.HealthDown, "the embedded store cannot be read: " + err.Error()
	}
	if s.reserve.ensure() {
		return ports.HealthDown, ErrFull.Error()
	}
	if f := s.fault.Load(); f != nil {
		return ports.HealthDown, "the embedded store's last write failed: " + (*f).Error()
	}
	if s.lowOnSpace() {
		return ports.HealthDegraded, "the free space on the embedded store's disk is under ARROWHEAD_DATA_MIN_FREE_BYTES"
	}
	return ports.HealthOK, ""
}

// retryBusy runs fn again while it fails because another process holds
// the lock SQLite's own busy_timeout gave up on, for at most MaxBusyWait.
func retryBusy(ctx context.Context, fn func() error) error {
	deadline := time.Now().Add(MaxBusyWait)
	wait := minPoll
	for {
		err := fn()
		if !isBusy(err) {
			return err
		}
		if time.Now().After(deadline) {
			return ErrBusy
		}
		// Jittered, so processes polling for one lock do not move in step.
		t := time.NewTimer(wait/2 + rand.N(wait))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, maxPoll)
	}
}

func sqliteCode(err error) (int, bool) {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff, true
	}
	return 0, false
}

func isSQLite(err error) bool { _, ok := sqliteCode(err); return ok }

func isBusy(err error) bool {
	code, ok := sqliteCode(err)
	return ok && (code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED)
}

// storeFault is an error of the store itself rather than of one call:
// SQLite may have rolled the whole transaction back on it (a full disk,
// an I/O error, no memory), or the file cannot be written at all.
func storeFault(err error) bool {
	code, ok := sqliteCode(err)
	if !ok {
		return false
	}
	switch code {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_CORRUPT,
		sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
		return true
	}
	return false
}

// classify maps SQLite's errors onto the store's; its message never
// carries SQL, a path or a value.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrConnDone) || err.Error() == "sql: database is closed" {
		return ErrClosed // database/sql exports no error for a closed DB
	}
	code, ok := sqliteCode(err)
	if !ok {
		return err
	}
	switch code {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%w: %s", ErrCorrupt, op)
	case sqlite3.SQLITE_FULL:
		return ErrFull
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return ErrBusy
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN:
		return fmt.Errorf("%s: the file or its directory is not writable", op)
	case sqlite3.SQLITE_IOERR:
		return fmt.Errorf("%s: an I/O error", op)
	}
	return fmt.Errorf("%s: SQLite error %d", op, code)
}

// diskErr keeps the operation and the system error (ENOSPC, EACCES...),
// never the path.
func diskErr(op string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: %w", op, err)
}
