package fs

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Defaults for DocumentsConfig, matching ARROWHEAD_DOCS_ROOT,
// ARROWHEAD_DOC_ALLOWED_EXTENSIONS, ARROWHEAD_DOC_MAX_BYTES,
// ARROWHEAD_DOC_WRITE_MAX_BYTES and ARROWHEAD_DOC_WRITE_QUOTA_BYTES.
const (
	DefaultDocsRoot      = "documents"
	DefaultMaxReadBytes  = 1_000_000
	DefaultMaxWriteBytes = 1_000_000
	DefaultQuotaBytes    = 50_000_000
)

// defaultExtensions are the document extensions served when
// DocumentsConfig.Extensions is empty (ARROWHEAD_DOC_ALLOWED_EXTENSIONS's
// default).
var defaultExtensions = []string{".json", ".md", ".txt"}

// TempPrefix starts the name of every temporary file the store creates. A
// caller path with a component starting with it is refused, listings and
// searches never show such a file, and OpenDocuments removes leftovers.
const TempPrefix = ".arrowhead-tmp-"

// MaxDepth bounds the directory components of a document path. The store
// holds one directory handle per level while it resolves or walks, so the
// bound also bounds open descriptors.
const MaxDepth = 64

const (
	// dirPerm and filePerm are the modes of what the store creates (before
	// the umask).
	dirPerm  = 0o750
	filePerm = 0o640
	// tempAttempts bounds retries when a random temp name collides.
	tempAttempts = 8
)

// testHookBeforeCommit, when set by a test, runs once a write's temporary
// file is durable and before it is linked or renamed into place.
var testHookBeforeCommit func()

// DocumentsConfig configures OpenDocuments. A zero or negative size takes
// its Default* value: there is no "unlimited".
type DocumentsConfig struct {
	// Root is the corpus directory, created (mode 0750) when missing.
	Root string
	// Extensions are the allowed final extensions (".md"); empty means
	// .json, .md and .txt. They are lowercased, and matching is
	// case-sensitive: "notes.MD" is not a document.
	Extensions []string
	// MaxReadBytes caps a single document read, whatever the caller asks.
	MaxReadBytes int64
	// MaxWriteBytes caps a single document write.
	MaxWriteBytes int64
	// QuotaBytes caps the total size of all documents in the corpus.
	QuotaBytes int64
}

// Documents is the jailed document corpus. It implements
// ports.DocumentStore on an os.Root: every path is resolved by the kernel
// relative to verified directory handles, one component at a time, and a
// symlink anywhere in a document path is refused (ports.ErrOutsideJail),
// wherever it points. Documents are therefore exactly the regular files with
// an allowed extension reachable from the root through real directories,
// which is also what List returns.
//
// Writes are atomic: a temporary file is created with O_EXCL in the target's
// directory, written and fsynced, then hard-linked to the target (CreateOnly:
// the link fails if the target exists, so there is no clobber and no race)
// or renamed over it (Replace), and the directory is fsynced.
//
// The corpus quota is accounted in memory: usage is computed by one walk at
// OpenDocuments (or Rescan) and every write reserves its growth under a
// mutex before touching the disk, so concurrent writers never overshoot.
// The store assumes it is the only writer of its corpus: edits made to the
// directory by anything else are reconciled only by Rescan or a restart.
// Concurrent writes to the same document are serialised per path.
//
// A search reads through a ReadSession (OpenReadSession), which resolves a
// shared directory once for consecutive documents and revalidates it on
// every read.
//
// Documents is safe for concurrent use.
type Documents struct {
	tree
	maxWrite int64
	quota    int64

	// barrier is held shared by every write and exclusively by Rescan, so
	// a rescan never races a write's reservation.
	barrier sync.RWMutex

	mu    sync.Mutex // guards used and paths
	used  int64
	paths map[string]*pathLock
}

// pathLock serialises writers of one document; refs counts holders and
// waiters so the entry can be dropped when idle.
type pathLock struct {
	mu   sync.Mutex
	refs int
}

var _ ports.DocumentStore = (*Documents)(nil)

// OpenDocuments opens (creating if needed) the corpus root, removes
// temporary files left by an interrupted write, and computes the corpus
// usage, all in one walk.
func OpenDocuments(cfg DocumentsConfig) (*Documents, error) {
	exts, err := extensionSet(cfg.Extensions)
	if err != nil {
		return nil, err
	}
	dir := cmp.Or(cfg.Root, DefaultDocsRoot)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, errors.New("resolving the document root failed")
	}
	if err := os.MkdirAll(abs, dirPerm); err != nil {
		return nil, ioFailure("creating the document root", err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, ioFailure("opening the document root", err)
	}
	d := &Documents{
		tree: tree{
			root:    r,
			beneath: openBeneath(r, abs),
			dir:     abs,
			exts:    exts,
			maxRead: positiveOr(cfg.MaxReadBytes, DefaultMaxReadBytes),
			hidden:  isTempName,
			// A name of another type is refused as such, so a reader can
			// say which setting serves documents instead of "not found".
			typeRefusal: ports.ErrNotDocument,
		},
		maxWrite: positiveOr(cfg.MaxWriteBytes, DefaultMaxWriteBytes),
		quota:    positiveOr(cfg.QuotaBytes, DefaultQuotaBytes),
		paths:    make(map[string]*pathLock),
	}
	used, err := d.scan(context.Background(), true)
	if err != nil {
		d.close()
		return nil, err
	}
	d.used = used
	return d, nil
}

func positiveOr(v, def int64) int64 {
	if v <= 0 {
		return def
	}
	return v
}

// extensionSet validates the configured extensions: each is a dot followed
// by a non-empty lowercase name without further dots or separators.
func extensionSet(list []string) (map[string]bool, error) {
	if len(list) == 0 {
		list = defaultExtensions
	}
	set := make(map[string]bool, len(list))
	for _, e := range list {
		e = strings.ToLower(strings.TrimSpace(e))
		if len(e) < 2 || e[0] != '.' || strings.ContainsAny(e[1:], `./\`) || strings.ContainsFunc(e, isControl) {
			return nil, errors.New("a document extension is malformed")
		}
		set[e] = true
	}
	return set, nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// Close releases the root directory handle.
func (d *Documents) Close() error { return d.close() }

// Dir returns the absolute corpus root.
func (d *Documents) Dir() string { return d.dir }

// Usage returns the bytes the quota currently accounts for: the documents
// on disk plus the growth reserved by writes in flight.
func (d *Documents) Usage() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.used
}

// Quota returns the corpus quota in bytes.
func (d *Documents) Quota() int64 { return d.quota }

// Rescan recomputes the corpus usage from the disk, reconciling edits made
// outside the store. It waits for writes in flight and holds new ones off
// while it walks. It does not remove temporary files: only OpenDocuments
// may assume no other writer is mid-write.
func (d *Documents) Rescan(ctx context.Context) error {
	d.barrier.Lock()
	defer d.barrier.Unlock()
	used, err := d.scan(ctx, false)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.used = used
	d.mu.Unlock()
	return nil
}

// scan walks the whole corpus once, summing document sizes and, when
// clean is set, removing leftover temporary files.
func (d *Documents) scan(ctx context.Context, clean bool) (int64, error) {
	var used int64
	err := d.walk(ctx, d.root, "", func(dir *os.Root, rel string, e os.DirEntry) (bool, error) {
		name := e.Name()
		if strings.HasPrefix(name, TempPrefix) {
			if clean && !e.IsDir() {
				if err := dir.Remove(name); err != nil && !errors.Is(err, iofs.ErrNotExist) {
					return false, ioFailure("removing a leftover temporary file", err)
				}
			}
			return false, nil
		}
		if st, ok := d.fileInfo(e); ok {
			used += st.Size()
		}
		return false, nil
	})
	return used, err
}

// isTempName reports the name of a temporary file the store creates; no
// document path may contain one.
func isTempName(name string) bool { return strings.HasPrefix(name, TempPrefix) }

// Stat describes a document.
func (d *Documents) Stat(ctx context.Context, rel string) (ports.FileInfo, error) {
	return d.stat(ctx, rel)
}

// Read returns a document's bytes, refusing one above maxBytes or above
// the configured MaxReadBytes, whichever is lower (maxBytes <= 0 means the
// configured cap).
func (d *Documents) Read(ctx context.Context, rel string, maxBytes int64) ([]byte, ports.FileInfo, error) {
	return d.readInto(ctx, rel, maxBytes, nil)
}

// ReadInto is Read appending into buf[:0], so a caller reading many
// documents in turn (a search) can reuse one buffer. The returned slice
// aliases buf when it was large enough.
func (d *Documents) ReadInto(ctx context.Context, rel string, maxBytes int64, buf []byte) ([]byte, ports.FileInfo, error) {
	return d.readInto(ctx, rel, maxBytes, buf)
}

// OpenReadSession starts a ReadSession. It implements search.SessionOpener,
// which search.Walk uses when the store offers it.
func (d *Documents) OpenReadSession() search.ReadSession { return &ReadSession{t: &d.tree} }

// List returns the documents under prefix in lexical order, at most limit
// of them. prefix matches on path-component boundaries ("notes" and
// "notes/" cover "notes/a.md", never "notes-old/a.md"); a prefix naming a
// document lists that document. Symlinks, temporary files, other
// extensions and directories are never listed. limit must be positive.
func (d *Documents) List(ctx context.Context, prefix string, limit int) ([]ports.FileInfo, bool, error) {
	return d.list(ctx, prefix, limit)
}

// Write stores data atomically at rel (see the type's documentation). A
// path that cannot name a document (another extension, a reserved
// temporary name, a path failing lexical validation) is refused with
// ports.ErrNotDocument, and so are Read and Stat of a name of another
// type (decided from the name alone); a path through a reserved temporary
// name is not found.
func (d *Documents) Write(ctx context.Context, rel string, data []byte, mode ports.WriteMode) (ports.WriteResult, error) {
	if err := ctx.Err(); err != nil {
		return ports.WriteResult{}, err
	}
	if mode != ports.CreateOnly && mode != ports.Replace {
		return ports.WriteResult{}, errors.New("unknown write mode")
	}
	clean, ok, err := d.servedPath(rel)
	if err != nil {
		return ports.WriteResult{}, err
	}
	if !ok {
		return ports.WriteResult{}, ports.ErrNotDocument
	}
	size := int64(len(data))
	if size > d.maxWrite {
		return ports.WriteResult{}, ports.ErrTooLarge
	}

	d.barrier.RLock()
	defer d.barrier.RUnlock()
	unlock := d.lockPath(clean)
	defer unlock()

	dir, base, err := d.openParent(clean, true)
	if err != nil {
		return ports.WriteResult{}, err
	}
	defer d.closeRoot(dir)

	var prev int64
	exists := false
	switch st, err := dir.Lstat(base); {
	case errors.Is(err, iofs.ErrNotExist):
	case err != nil:
		return ports.WriteResult{}, mapResolveError(err)
	case st.Mode()&iofs.ModeSymlink != 0:
		return ports.WriteResult{}, ports.ErrOutsideJail
	case !st.Mode().IsRegular():
		return ports.WriteResult{}, ports.ErrNotRegular
	case mode == ports.CreateOnly:
		return ports.WriteResult{}, ports.ErrExists
	default:
		exists, prev = true, st.Size()
	}

	delta := size - prev
	if err := d.reserve(delta); err != nil {
		return ports.WriteResult{}, err
	}
	committed := false
	defer func() {
		if !committed {
			d.release(delta)
		}
	}()

	tmp, err := writeTemp(dir, data)
	if err != nil {
		return ports.WriteResult{}, err
	}
	if testHookBeforeCommit != nil {
		testHookBeforeCommit()
	}
	if err := ctx.Err(); err != nil {
		dir.Remove(tmp)
		return ports.WriteResult{}, err
	}
	if mode == ports.CreateOnly {
		// link(2) never replaces an existing name: a document created
		// meanwhile by another process makes this fail with EEXIST.
		err = dir.Link(tmp, base)
		// Until the temp name is gone the document has two links. If the
		// removal fails (or the process dies first), the start-up sweep
		// removes that name, which leaves the document intact.
		_ = dir.Remove(tmp)
		if err != nil {
			if errors.Is(err, iofs.ErrExist) {
				return ports.WriteResult{}, ports.ErrExists
			}
			return ports.WriteResult{}, ioFailure("linking the document into place", err)
		}
	} else if err := dir.Rename(tmp, base); err != nil {
		dir.Remove(tmp)
		return ports.WriteResult{}, ioFailure("renaming the document into place", err)
	}
	committed = true
	d.commit(delta)

	res := ports.WriteResult{Path: clean, Size: size, Created: !exists, PreviousSize: prev}
	if err := syncDir(dir); err != nil {
		// The document is in place and accounted; only its durability
		// across a power loss is in doubt.
		return res, err
	}
	return res, nil
}

// writeTemp creates a fresh temporary file in dir with O_EXCL, writes data
// and fsyncs it, returning its name. On failure nothing is left behind.
func writeTemp(dir *os.Root, data []byte) (string, error) {
	var (
		f    *os.File
		name string
		err  error
	)
	for range tempAttempts {
		name, err = tempName()
		if err != nil {
			return "", err
		}
		f, err = dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
		if !errors.Is(err, iofs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", ioFailure("creating a temporary file", err)
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := cmp.Or(werr, serr, cerr); err != nil {
		dir.Remove(name)
		return "", ioFailure("writing the document", err)
	}
	return name, nil
}

func tempName() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", errors.New("generating a temporary name failed")
	}
	return TempPrefix + hex.EncodeToString(b[:]), nil
}

// syncDir makes the directory entries just changed durable. Windows cannot
// fsync a directory; NTFS journals the rename itself.
func syncDir(dir *os.Root) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	f, err := dir.Open(".")
	if err != nil {
		return ioFailure("syncing the directory", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return ioFailure("syncing the directory", err)
	}
	return nil
}

// lockPath serialises writers of one document and returns the unlock.
func (d *Documents) lockPath(clean string) func() {
	d.mu.Lock()
	l := d.paths[clean]
	if l == nil {
		l = &pathLock{}
		d.paths[clean] = l
	}
	l.refs++
	d.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		d.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(d.paths, clean)
		}
		d.mu.Unlock()
	}
}

// reserve claims a write's growth against the quota before any byte is
// written. Shrinking writes always pass; their release happens at commit.
func (d *Documents) reserve(delta int64) error {
	if delta <= 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.used+delta > d.quota {
		return ports.ErrQuota
	}
	d.used += delta
	return nil
}

// release returns a failed write's reservation.
func (d *Documents) release(delta int64) {
	if delta <= 0 {
		return
	}
	d.mu.Lock()
	d.used -= delta
	d.mu.Unlock()
}

// commit settles a successful write: growth was reserved already, a
// shrink is credited now.
func (d *Documents) commit(delta int64) {
	if delta >= 0 {
		return
	}
	d.mu.Lock()
	d.used += delta
	d.mu.Unlock()
}

// ioFailure describes a failed operation without the path an os error
// carries: only the errno text (e.g. "no space left on device") is kept.
func ioFailure(op string, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return fmt.Errorf("%s: %w", op, errno)
	}
	return errors.New(op + " failed")
}
