// Package bolt is the previous release's embedded transactional store: a
// single bbolt file (go.etcd.io/bbolt) under ARROWHEAD_DATA_DIR that held
// every piece of in-process durable state: the embedded vector index's
// collections, the working sets, the agent memory, and tasks and their
// timers (their stores are adapters/bolt/boltstores). One file meant one
// lock, one fsync discipline and one corruption check for all of them.
// The server now keeps that state in adapters/sqlite, which several
// processes share, and opens this file only to import it once
// (adapters/wire).
//
// # Using it
//
// Whoever opens the file (adapters/wire for the import, tests writing the
// old format) does so once per process with Open and hands each store its
// own Namespace, a top-level bucket claimed by name:
//
//	store, err := bolt.Open(bolt.ConfigFromSettings(s))
//	ns, err := store.Namespace("vectors")
//	err = ns.Update(ctx, func(b *bbolt.Bucket) error { return b.Put(k, v) })
//	err = ns.View(ctx, func(b *bbolt.Bucket) error { v := b.Get(k); ...; return nil })
//
// Inside its bucket an adapter is free to nest buckets, use cursors and
// choose its own encoding. Values that must detect bit rot are wrapped with
// Seal and read back with Unseal: bbolt checksums only its meta pages.
//
// # Guarantees
//
//   - Durability: Update returns nil only after the transaction is
//     committed and fsynced (fdatasync of the data pages, then of the meta
//     page). A write is acknowledged only once it is durable; SIGKILL or a
//     power cut after that loses nothing. A crash during a commit leaves the
//     previous commit, which is what bbolt's two alternating meta pages are
//     for.
//   - One process: the file is locked (flock on Unix) for as long as the
//     store is open. A second Open, from another process or from this one,
//     waits LockTimeout and then fails with ErrLocked, which names
//     ARROWHEAD_DATA_DIR. The kernel drops the lock when the process dies,
//     so a crash never leaves a stale lock.
//   - Damage is a start-up error: Open walks every bucket and page and runs
//     bbolt's consistency check, so a truncated, overwritten or foreign file
//     fails with ErrCorrupt instead of opening as an empty store. A fault
//     or panic while reading a damaged page later is returned as ErrCorrupt
//     too, never a crash.
//
// # Concurrency contract
//
// A Store and its Namespaces are safe for concurrent use. Update calls are
// serialised across the whole store (bbolt has one writer); View calls run
// concurrently with each other and with the writer, each on a consistent
// snapshot as of its start. Inside fn:
//
//   - the bucket and every slice it returns are valid only until fn
//     returns: copy what you keep;
//   - do not call Update or View again (a nested Update deadlocks, a
//     nested View can block the writer's file growth);
//   - do not reach other namespaces through Bucket.Tx(): a namespace is an
//     adapter's private state;
//   - keep it short: the store has one writer, and a long View delays the
//     file growth a later Update may need.
//
// ctx is checked before the transaction begins; a transaction that has
// begun runs to its commit or rollback (bbolt transactions cannot be
// interrupted), so bound the work fn does rather than relying on ctx.
package bolt

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/internal/groupcommit"
)

const (
	// FileName is the store's file inside ARROWHEAD_DATA_DIR.
	FileName = "arrowhead.db"
	// DefaultLockTimeout is how long Open waits for another holder of the
	// file to let go: long enough for a restarting server's predecessor to
	// finish closing, short enough to fail start-up promptly.
	DefaultLockTimeout = time.Second
	// sealBytes is the length of Seal's checksum trailer.
	sealBytes = 4
)

// Errors of the store. None carries a path, a key or a value.
var (
	ErrLocked    = errors.New("ARROWHEAD_DATA_DIR is in use by another process: its store file is locked")
	ErrCorrupt   = errors.New("the store file in ARROWHEAD_DATA_DIR is damaged")
	ErrClosed    = errors.New("the embedded store is closed")
	ErrNamespace = errors.New("invalid embedded store namespace")
)

// validNamespace keeps namespace names short, lowercase and obvious in
// `bbolt buckets` output: ^[a-z][a-z0-9_]{0,62}$, without a regexp to
// compile at start-up.
func validNamespace(s string) bool {
	if len(s) < 1 || len(s) > 63 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// crcTable is built on the first seal, not at start-up: the Castagnoli
// tables cost every process about half a millisecond to build.
var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// Config configures the store.
type Config struct {
	// Dir is the data directory (ARROWHEAD_DATA_DIR); it is created, with
	// mode 0700, when missing. The file inside it is FileName, mode 0600.
	Dir string
	// LockTimeout bounds the wait for the file lock; 0 means
	// DefaultLockTimeout.
	LockTimeout time.Duration
}

// ConfigFromSettings maps the settings onto a store configuration.
func ConfigFromSettings(s settings.Settings) Config {
	return Config{Dir: s.DataDir}
}

// Store is the open store file. See the package documentation for its
// guarantees and concurrency contract.
type Store struct {
	db *bbolt.DB

	group groupcommit.Group[func(*bbolt.Tx) error] // gathers Batch calls

	mu      sync.Mutex // guards claimed
	claimed map[string]bool
}

// Open opens (creating when absent) the store file in cfg.Dir, locks it,
// and verifies it: a damaged file is refused with ErrCorrupt.
func Open(cfg Config) (*Store, error) {
	if cfg.Dir == "" {
		return nil, errors.New("ARROWHEAD_DATA_DIR is empty")
	}
	timeout := cfg.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, diskErr("creating ARROWHEAD_DATA_DIR", err)
	}
	// The file is opened and locked here rather than by bbolt, so that it
	// can be checked (checkFile) before bbolt maps it: a damaged page that
	// bbolt.Open itself reads makes it panic with the file mapped, and a
	// mapping keeps the lock held until the process exits.
	file, err := os.OpenFile(filepath.Join(cfg.Dir, FileName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, diskErr("opening the store file", err)
	}
	if err := lockFile(file, timeout); err != nil {
		file.Close()
		if errors.Is(err, ErrLocked) {
			return nil, err
		}
		return nil, diskErr("locking the store file", err)
	}
	if err := checkFile(file); err != nil {
		file.Close()
		return nil, err
	}
	opts := &bbolt.Options{
		Timeout: timeout,
		// The map freelist stays fast as a large file fragments. The
		// freelist is synced (NoFreelistSync false): opening reads it
		// instead of rebuilding it on a goroutine of bbolt's, which would
		// crash the process on a damaged page.
		FreelistType: bbolt.FreelistMapType,
		// bbolt's own flock then succeeds at once on the locked file.
		OpenFile: func(string, int, os.FileMode) (*os.File, error) { return file, nil },
	}
	var db *bbolt.DB
	err = guard(func() error {
		var err error
		db, err = bbolt.Open(file.Name(), 0o600, opts)
		return err
	})
	if err != nil {
		if db == nil {
			file.Close() // after a panic; bbolt closed it on an error
		}
		return nil, openErr(err)
	}
	s := &Store{db: db, claimed: map[string]bool{}}
	if err := s.verify(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// openErr classifies bbolt.Open's failure.
func openErr(err error) error {
	switch {
	case errors.Is(err, ErrCorrupt):
		return err
	case errors.Is(err, berrors.ErrTimeout):
		return ErrLocked
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum),
		errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrInvalidMapping):
		return fmt.Errorf("%w: it is not a store file this build can read", ErrCorrupt)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return diskErr("opening the store file", err)
	}
	// bbolt's remaining open failures are about the file's contents
	// ("file size too small", a meta page out of range).
	return fmt.Errorf("%w: its header is inconsistent", ErrCorrupt)
}

// Close releases the file and its lock, after open transactions end.
// Calls after Close fail with ErrClosed.
func (s *Store) Close() error {
	err := s.db.Close()
	if err != nil {
		return diskErr("closing the store file", err)
	}
	return nil
}

// Namespace claims the top-level bucket name for one adapter, creating it
// when absent. A name can be claimed once per Store: two adapters never
// share a bucket by accident.
func (s *Store) Namespace(name string) (*Namespace, error) {
	if !validNamespace(name) {
		return nil, fmt.Errorf("%w: a name is a lowercase identifier", ErrNamespace)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.claimed[name] {
		return nil, fmt.Errorf("%w: %s is claimed already", ErrNamespace, name)
	}
	// A write transaction commits with two fdatasyncs even when it changes
	// nothing, which on a busy disk is tens of milliseconds of every
	// start-up: look first, and write only to create the bucket.
	exists := false
	err := s.run(false, func(tx *bbolt.Tx) error {
		exists = tx.Bucket([]byte(name)) != nil
		return nil
	})
	if err == nil && !exists {
		err = s.run(true, func(tx *bbolt.Tx) error {
			_, err := tx.CreateBucketIfNotExists([]byte(name))
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	s.claimed[name] = true
	return &Namespace{s: s, name: []byte(name)}, nil
}

// Namespace is one adapter's top-level bucket.
type Namespace struct {
	s    *Store
	name []byte
}

// Update runs fn in a read-write transaction on the namespace's bucket and
// commits it when fn returns nil: Update returns nil only once the commit
// is on disk. An error from fn rolls everything fn did back and is
// returned as is.
func (n *Namespace) Update(ctx context.Context, fn func(b *bbolt.Bucket) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return n.s.run(true, func(tx *bbolt.Tx) error { return n.within(tx, fn) })
}

// Batch is Update for many concurrent small writers: the calls that
// arrive together share one transaction and one fsync (group commit, see
// groupcommit.go), and Batch returns nil only once that commit is on disk.
// The calls of a batch run in arrival order, each seeing the writes of
// those before it. fn may run more than once (a batch whose call failed is
// rolled back and rerun without it), so it must reset whatever it reports
// and take every random or clock value from outside.
func (n *Namespace) Batch(ctx context.Context, fn func(b *bbolt.Bucket) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return n.s.runBatch(func(tx *bbolt.Tx) error { return n.within(tx, fn) })
}

// View runs fn in a read-only transaction on the namespace's bucket: a
// consistent snapshot, concurrent with other Views and with the writer.
func (n *Namespace) View(ctx context.Context, fn func(b *bbolt.Bucket) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return n.s.run(false, func(tx *bbolt.Tx) error { return n.within(tx, fn) })
}

func (n *Namespace) within(tx *bbolt.Tx, fn func(b *bbolt.Bucket) error) error {
	b := tx.Bucket(n.name)
	if b == nil {
		return fmt.Errorf("%w: a namespace bucket is missing", ErrCorrupt)
	}
	return fn(b)
}

// run is every transaction: guarded, with bbolt's own errors classified.
func (s *Store) run(write bool, fn func(tx *bbolt.Tx) error) error {
	return s.classify(guard(func() error {
		if write {
			return s.db.Update(fn)
		}
		return s.db.View(fn)
	}))
}

// runBatch is a group-committed write transaction, guarded like run.
func (s *Store) runBatch(fn func(tx *bbolt.Tx) error) error {
	return s.classify(s.group.Run(fn, s.commitGroup))
}

// commitGroup commits calls, gathered by s.group, and returns each one's
// result. bbolt has no savepoints: when a call fails, the transaction
// rolls back and is run again without it. Every call before the failed
// one then runs again on the state it ran on, so the failure stands as
// that call's answer.
func (s *Store) commitGroup(calls []func(*bbolt.Tx) error) []error {
	results := make([]error, len(calls))
	pending := calls
	index := make([]int, len(calls)) // pending[i] is calls[index[i]]
	for i := range index {
		index[i] = i
	}
	for len(pending) > 0 {
		failed, err := s.commitOnce(pending)
		if failed < 0 {
			for _, i := range index {
				results[i] = err
			}
			break
		}
		results[index[failed]] = err
		pending = append(pending[:failed:failed], pending[failed+1:]...)
		index = append(index[:failed:failed], index[failed+1:]...)
	}
	return results
}

// commitOnce runs calls in order in one write transaction. When one
// fails (or panics on a damaged page), the transaction rolls back and its
// index is returned with its error; otherwise failed is -1 and err is the
// commit's.
func (s *Store) commitOnce(calls []func(*bbolt.Tx) error) (failed int, err error) {
	failed = -1
	err = guard(func() error {
		return s.db.Update(func(tx *bbolt.Tx) error {
			for i, fn := range calls {
				if err := guard(func() error { return fn(tx) }); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
	})
	return failed, err
}

// classify maps bbolt's own errors onto the store's.
func (s *Store) classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, berrors.ErrDatabaseNotOpen):
		return ErrClosed
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return diskErr("writing the store file", err)
	}
	return err
}

// guard runs fn so that reading a damaged file fails instead of crashing:
// bbolt reads pages through a memory map, where a page past the end of a
// truncated file faults, and it panics on a page it cannot decode. Both
// become ErrCorrupt. The message names no key or value (bbolt's panic
// texts quote keys).
func guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			what := "a page could not be decoded"
			if _, ok := r.(runtime.Error); ok {
				what = "a page could not be read"
			}
			err = fmt.Errorf("%w: %s", ErrCorrupt, what)
		}
	}()
	return fn()
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

// Seal returns value followed by a CRC-32C of key and value, so Unseal
// notices a damaged value and a value found under the wrong key.
func Seal(key, value []byte) []byte {
	out := make([]byte, len(value), len(value)+sealBytes)
	copy(out, value)
	return binary.LittleEndian.AppendUint32(out, sealSum(key, value))
}

// Unseal checks a value written by Seal under key and returns it without
// its checksum (a sub-slice of sealed: valid as long as sealed is). A
// mismatch is ErrCorrupt.
func Unseal(key, sealed []byte) ([]byte, error) {
	if len(sealed) < sealBytes {
		return nil, fmt.Errorf("%w: a value is cut short", ErrCorrupt)
	}
	value := sealed[:len(sealed)-sealBytes]
	if binary.LittleEndian.Uint32(sealed[len(value):]) != sealSum(key, value) {
		return nil, fmt.Errorf("%w: a value fails its checksum", ErrCorrupt)
	}
	return value, nil
}

func sealSum(key, value []byte) uint32 {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(key)))
	h := crc32.Update(0, crcTable(), n[:])
	h = crc32.Update(h, crcTable(), key)
	return crc32.Update(h, crcTable(), value)
}
