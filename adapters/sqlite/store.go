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
//     transaction and one fsync (groupcommit.go), each call inside its own
//     savepoint, so a call that fails is rolled back alone.
//   - Damage is a start-up error: Open refuses a file that is not a
//     SQLite database or fails PRAGMA quick_check with ErrCorrupt, which
//     names ARROWHEAD_DATA_DIR, never serving half of it.
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
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
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
	ErrFull    = errors.New("the embedded store's disk is full")
	ErrBusy    = errors.New("the embedded store stayed busy: another process holds its write lock")
)

// Config configures the store.
type Config struct {
	// Dir is the data directory (ARROWHEAD_DATA_DIR); it is created, with
	// mode 0700, when missing. The file inside it is FileName, mode 0600.
	Dir string
	// BusyTimeout is SQLite's busy_timeout for reads; 0 means
	// DefaultBusyTimeout. Writes poll for the lock themselves.
	BusyTimeout time.Duration
}

// Store is the open store file. See the package documentation for its
// guarantees and concurrency contract.
type Store struct {
	w     *sql.DB // one connection: the process's one writer
	r     *sql.DB // read connections (query_only)
	ws    stmtCache
	rs    stmtCache
	turn  *turn // the fair hand-over of the write lock between processes
	group groupCommit
	path  string
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
	s := &Store{w: w, path: path, turn: t}
	s.ws.db = w
	if err := s.prepare(); err != nil {
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
		return s.w.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
	})
	if err != nil {
		return classify("opening the store file", err)
	}
	if mode != "wal" {
		return errors.New("the store file in ARROWHEAD_DATA_DIR cannot use a write-ahead log (is the directory on a network file system?)")
	}
	if err := s.quickCheck(ctx); err != nil {
		return err
	}
	return s.migrate(ctx)
}

// quickCheck runs PRAGMA quick_check: SQLite's check of every page's
// structure (not of indexes against their tables, which integrity_check
// adds at several times the cost).
func (s *Store) quickCheck(ctx context.Context) error {
	var got string
	err := retryBusy(ctx, func() error {
		rows, err := s.w.QueryContext(ctx, "PRAGMA quick_check(1)")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := rows.Scan(&got); err != nil {
				return err
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
	return classify("reading the store file", err)
}

// Write runs fn in a write transaction shared with the Write calls of
// this process that arrive together (group commit), inside a savepoint of
// its own: an error from fn rolls back what fn did, and only that, and is
// returned as is. Write returns nil only once the transaction is durable.
func (s *Store) Write(ctx context.Context, fn func(tx *Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.group.run(fn, s.commitGroup)
}

// commitGroup runs calls in one transaction, each in a savepoint, and
// commits: results[i] is calls[i]'s own error, or the commit's.
func (s *Store) commitGroup(calls []groupCall) []error {
	results := make([]error, len(calls))
	ctx := context.Background() // the calls' callers wait; the batch must finish
	if err := s.turn.acquire(); err != nil {
		err = diskErr("locking the store file", err)
		for i := range results {
			results[i] = err
		}
		return results
	}
	defer s.turn.release()
	err := retryBusy(ctx, func() error {
		clear(results)
		sqlTx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer sqlTx.Rollback()
		tx := &Tx{Tx: sqlTx, stmts: &s.ws}
		for i, c := range calls {
			if _, err := tx.ExecContext(ctx, "SAVEPOINT call"); err != nil {
				return err
			}
			if err := c.fn(tx); err != nil {
				if isBusy(err) {
					return err // the whole batch waits and reruns
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
		return tx.Commit()
	})
	s.ws.done(ctx)
	if err != nil {
		err = classify("writing the store file", err)
		for i := range results {
			if results[i] == nil || isSQLite(results[i]) {
				results[i] = err
			}
		}
		return results
	}
	for i, r := range results {
		if isSQLite(r) {
			results[i] = classify("writing the store file", r)
		}
	}
	return results
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
