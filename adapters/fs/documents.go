package fs

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/core/security"
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
	root     *os.Root
	dir      string
	exts     map[string]bool
	maxRead  int64
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
		root:     r,
		dir:      abs,
		exts:     exts,
		maxRead:  positiveOr(cfg.MaxReadBytes, DefaultMaxReadBytes),
		maxWrite: positiveOr(cfg.MaxWriteBytes, DefaultMaxWriteBytes),
		quota:    positiveOr(cfg.QuotaBytes, DefaultQuotaBytes),
		paths:    make(map[string]*pathLock),
	}
	used, err := d.scan(context.Background(), true)
	if err != nil {
		r.Close()
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
func (d *Documents) Close() error { return d.root.Close() }

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
		if st, ok := d.docInfo(e); ok {
			used += st.Size()
		}
		return false, nil
	})
	return used, err
}

// visitFunc is called for every non-directory entry of a walk and for
// every directory the walk does not descend into (reserved names, entries
// beyond MaxDepth). dir is the verified handle of the entry's parent; rel
// is the entry's corpus-relative path. Returning true stops the walk.
type visitFunc func(dir *os.Root, rel string, e os.DirEntry) (stop bool, err error)

// docInfo returns the lstat of a walked entry that is a document: a
// regular file (not a symlink) with an allowed name. A directory read
// through an os.Root lstats every entry relative to the directory's handle
// as it lists it, so Info costs no further call and follows no link.
func (d *Documents) docInfo(e os.DirEntry) (os.FileInfo, bool) {
	if !e.Type().IsRegular() || !d.isDocName(e.Name()) {
		return nil, false
	}
	st, err := e.Info()
	if err != nil || !st.Mode().IsRegular() {
		return nil, false
	}
	return st, true
}

// walk visits the tree under start (whose corpus-relative path is base) in
// lexical order of the full slash-separated paths, never following a
// symlink: each subdirectory is opened through its verified parent and
// checked to be the directory the listing named.
func (d *Documents) walk(ctx context.Context, start *os.Root, base string, visit visitFunc) error {
	_, err := d.walkDir(ctx, start, base, 0, visit)
	return err
}

func (d *Documents) walkDir(ctx context.Context, dir *os.Root, base string, depth int, visit visitFunc) (bool, error) {
	if err := ctx.Err(); err != nil {
		return true, err
	}
	f, err := dir.Open(".")
	if err != nil {
		// A directory that vanished mid-walk has nothing to list.
		return false, nil
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return false, nil
	}
	// Sorting directories as "name/" makes the depth-first order equal to
	// the lexical order of full paths ("a-b.md" < "a/x.md").
	key := func(e os.DirEntry) string {
		if e.IsDir() {
			return e.Name() + "/"
		}
		return e.Name()
	}
	slices.SortFunc(entries, func(a, b os.DirEntry) int { return strings.Compare(key(a), key(b)) })
	for _, e := range entries {
		name := e.Name()
		rel := name
		if base != "" {
			rel = base + "/" + name
		}
		if !e.IsDir() || strings.HasPrefix(name, TempPrefix) || depth+1 >= MaxDepth {
			stop, err := visit(dir, rel, e)
			if stop || err != nil {
				return true, err
			}
			continue
		}
		sub, err := openVerifiedDir(dir, name)
		if err != nil {
			continue // raced with a rename or replaced by a symlink: skip
		}
		stop, err := d.walkDir(ctx, sub, rel, depth+1, visit)
		sub.Close()
		if stop || err != nil {
			return true, err
		}
	}
	return false, nil
}

// openVerifiedDir opens name in dir as a sub-root, refusing a symlink: the
// entry is lstat'ed first, and the handle opened afterwards must be that
// same directory, so a swap between the two steps is caught.
func openVerifiedDir(dir *os.Root, name string) (*os.Root, error) {
	sub, _, err := openVerifiedDirInfo(dir, name)
	return sub, err
}

// openVerifiedDirInfo is openVerifiedDir also returning the directory's
// lstat, its identity for later revalidation.
func openVerifiedDirInfo(dir *os.Root, name string) (*os.Root, os.FileInfo, error) {
	st, err := dir.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if st.Mode()&iofs.ModeSymlink != 0 {
		return nil, nil, ports.ErrOutsideJail
	}
	if !st.IsDir() {
		return nil, nil, ports.ErrNotFound
	}
	sub, err := dir.OpenRoot(name)
	if err != nil {
		return nil, nil, err
	}
	got, err := sub.Stat(".")
	if err != nil || !os.SameFile(st, got) {
		sub.Close()
		return nil, nil, ports.ErrNotFound
	}
	return sub, st, nil
}

// docPath validates a caller path lexically and as a document name. The
// returned error is ports.ErrOutsideJail for traversal and absolute forms;
// ok is false when the path cannot name a document.
func (d *Documents) docPath(rel string) (clean string, ok bool, err error) {
	clean, err = security.CleanRelPath(rel)
	if err != nil {
		if errors.Is(err, security.ErrPathParent) || errors.Is(err, security.ErrPathAbsolute) {
			return "", false, ports.ErrOutsideJail
		}
		return "", false, nil
	}
	parts := strings.Split(clean, "/")
	if len(parts) > MaxDepth {
		return "", false, nil
	}
	for _, p := range parts {
		if strings.HasPrefix(p, TempPrefix) {
			return "", false, nil
		}
	}
	return clean, d.isDocName(parts[len(parts)-1]), nil
}

// isDocName reports whether a base name carries an allowed extension after
// a non-empty stem (".md" alone is a hidden file with no extension) and is
// not a temporary file.
func (d *Documents) isDocName(name string) bool {
	if strings.HasPrefix(name, TempPrefix) {
		return false
	}
	ext := path.Ext(name)
	return ext != "" && len(ext) < len(name) && d.exts[ext]
}

// openParent resolves the directory holding clean, one verified component
// at a time. With create set, missing directories are made (mode 0750).
// The caller closes the returned root unless it is d.root.
func (d *Documents) openParent(clean string, create bool) (*os.Root, string, error) {
	dirPart, base := path.Split(clean)
	dir, _, err := d.openDir(strings.TrimSuffix(dirPart, "/"), create, false)
	return dir, base, err
}

// openDir resolves the directory dirRel ("" is the root) one verified
// component at a time, returning with ids set the lstat of each component.
// With create set, missing directories are made (mode 0750). The caller
// closes the returned root unless it is d.root.
func (d *Documents) openDir(dirRel string, create, ids bool) (*os.Root, []os.FileInfo, error) {
	cur := d.root
	if dirRel == "" {
		return cur, nil, nil
	}
	var infos []os.FileInfo
	for _, name := range strings.Split(dirRel, "/") {
		next, st, err := openVerifiedDirInfo(cur, name)
		if create && errors.Is(err, iofs.ErrNotExist) {
			if mkErr := cur.Mkdir(name, dirPerm); mkErr != nil && !errors.Is(mkErr, iofs.ErrExist) {
				d.closeRoot(cur)
				return nil, nil, ioFailure("creating a directory", mkErr)
			}
			next, st, err = openVerifiedDirInfo(cur, name)
		}
		d.closeRoot(cur)
		if err != nil {
			return nil, nil, mapResolveError(err)
		}
		if ids {
			infos = append(infos, st)
		}
		cur = next
	}
	return cur, infos, nil
}

func (d *Documents) closeRoot(r *os.Root) {
	if r != d.root {
		r.Close()
	}
}

// mapResolveError turns an error met while resolving a path into a
// sentinel that carries no path.
func mapResolveError(err error) error {
	switch {
	case errors.Is(err, ports.ErrOutsideJail), isEscape(err):
		return ports.ErrOutsideJail
	case errors.Is(err, ports.ErrNotFound), errors.Is(err, iofs.ErrNotExist):
		return ports.ErrNotFound
	case errors.Is(err, syscall.ENOTDIR):
		return ports.ErrNotFound
	}
	return ports.ErrNotFound
}

// lstatDoc checks that base in dir is a regular file (not a symlink).
func lstatDoc(dir *os.Root, base string) (os.FileInfo, error) {
	st, err := dir.Lstat(base)
	if err != nil {
		return nil, mapResolveError(err)
	}
	switch {
	case st.Mode()&iofs.ModeSymlink != 0:
		return nil, ports.ErrOutsideJail
	case !st.Mode().IsRegular():
		return nil, ports.ErrNotRegular
	}
	return st, nil
}

// Stat describes a document.
func (d *Documents) Stat(ctx context.Context, rel string) (ports.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return ports.FileInfo{}, err
	}
	clean, ok, err := d.docPath(rel)
	if err != nil {
		return ports.FileInfo{}, err
	}
	if !ok {
		return ports.FileInfo{}, ports.ErrNotFound
	}
	dir, base, err := d.openParent(clean, false)
	if err != nil {
		return ports.FileInfo{}, err
	}
	defer d.closeRoot(dir)
	st, err := lstatDoc(dir, base)
	if err != nil {
		return ports.FileInfo{}, err
	}
	return ports.FileInfo{Path: clean, Size: st.Size(), ModTime: st.ModTime()}, nil
}

// Read returns a document's bytes, refusing one above maxBytes or above
// the configured MaxReadBytes, whichever is lower (maxBytes <= 0 means the
// configured cap).
func (d *Documents) Read(ctx context.Context, rel string, maxBytes int64) ([]byte, ports.FileInfo, error) {
	return d.ReadInto(ctx, rel, maxBytes, nil)
}

// ReadInto is Read appending into buf[:0], so a caller reading many
// documents in turn (a search) can reuse one buffer. The returned slice
// aliases buf when it was large enough.
func (d *Documents) ReadInto(ctx context.Context, rel string, maxBytes int64, buf []byte) ([]byte, ports.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, ports.FileInfo{}, err
	}
	if maxBytes <= 0 || maxBytes > d.maxRead {
		maxBytes = d.maxRead
	}
	clean, ok, err := d.docPath(rel)
	if err != nil {
		return nil, ports.FileInfo{}, err
	}
	if !ok {
		return nil, ports.FileInfo{}, ports.ErrNotFound
	}
	dir, base, err := d.openParent(clean, false)
	if err != nil {
		return nil, ports.FileInfo{}, err
	}
	defer d.closeRoot(dir)
	return readIn(dir, clean, base, maxBytes, buf)
}

// readIn reads the document base in its verified directory dir.
func readIn(dir *os.Root, clean, base string, maxBytes int64, buf []byte) ([]byte, ports.FileInfo, error) {
	st, err := lstatDoc(dir, base)
	if err != nil {
		return nil, ports.FileInfo{}, err
	}
	if st.Size() > maxBytes {
		return nil, ports.FileInfo{}, ports.ErrTooLarge
	}
	// O_NONBLOCK keeps a FIFO swapped in after the lstat from blocking the
	// open; the identity check below then refuses it.
	f, err := dir.OpenFile(base, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, ports.FileInfo{}, mapResolveError(err)
	}
	defer f.Close()
	got, err := f.Stat()
	if err != nil || !os.SameFile(st, got) || !got.Mode().IsRegular() {
		return nil, ports.FileInfo{}, ports.ErrNotFound
	}
	if got.Size() > maxBytes {
		return nil, ports.FileInfo{}, ports.ErrTooLarge
	}
	data, err := readExactly(f, buf, got.Size())
	if err != nil {
		return nil, ports.FileInfo{}, err
	}
	return data, ports.FileInfo{Path: clean, Size: int64(len(data)), ModTime: got.ModTime()}, nil
}

// ReadSession reads documents in turn for one goroutine (a search). It
// keeps the verified handle of the directory it read from last, so that
// consecutive documents of one directory, as List returns them, resolve it
// once: before each read the held directory is revalidated with one lstat
// per path component (each must still be the same real directory, not a
// symlink), so a read through a session refuses exactly what Read refuses.
// A ReadSession is not safe for concurrent use; Close releases it.
type ReadSession struct {
	d      *Documents
	dirRel string        // the held directory, corpus-relative
	dir    *os.Root      // nil when none is held
	ids    []os.FileInfo // lstat of each component of dirRel when opened
}

var _ search.ReadSession = (*ReadSession)(nil)

// OpenReadSession starts a ReadSession. It implements search.SessionOpener,
// which search.StoreSource uses when the store offers it.
func (d *Documents) OpenReadSession() search.ReadSession { return &ReadSession{d: d} }

// Read is ReadInto without a buffer.
func (s *ReadSession) Read(ctx context.Context, rel string, maxBytes int64) ([]byte, ports.FileInfo, error) {
	return s.ReadInto(ctx, rel, maxBytes, nil)
}

// ReadInto is Documents.ReadInto through the session's held directory.
func (s *ReadSession) ReadInto(ctx context.Context, rel string, maxBytes int64, buf []byte) ([]byte, ports.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, ports.FileInfo{}, err
	}
	d := s.d
	if maxBytes <= 0 || maxBytes > d.maxRead {
		maxBytes = d.maxRead
	}
	clean, ok, err := d.docPath(rel)
	if err != nil {
		return nil, ports.FileInfo{}, err
	}
	if !ok {
		return nil, ports.FileInfo{}, ports.ErrNotFound
	}
	dirPart, base := path.Split(clean)
	dirRel := strings.TrimSuffix(dirPart, "/")
	if dirRel == "" {
		return readIn(d.root, clean, base, maxBytes, buf)
	}
	if s.dir == nil || s.dirRel != dirRel || !s.stillValid() {
		s.release()
		dir, ids, err := d.openDir(dirRel, false, true)
		if err != nil {
			return nil, ports.FileInfo{}, err
		}
		s.dir, s.dirRel, s.ids = dir, dirRel, ids
	}
	return readIn(s.dir, clean, base, maxBytes, buf)
}

// stillValid reports whether every component of the held directory's path
// is still the real directory it was when opened.
func (s *ReadSession) stillValid() bool {
	start := 0
	for _, id := range s.ids {
		end := len(s.dirRel)
		if j := strings.IndexByte(s.dirRel[start:], '/'); j >= 0 {
			end = start + j
		}
		st, err := s.d.root.Lstat(s.dirRel[:end])
		if err != nil || st.Mode()&iofs.ModeSymlink != 0 || !os.SameFile(st, id) {
			return false
		}
		start = end + 1
	}
	return true
}

func (s *ReadSession) release() {
	if s.dir != nil {
		s.dir.Close()
		s.dir, s.dirRel, s.ids = nil, "", nil
	}
}

// Close releases the held directory.
func (s *ReadSession) Close() error {
	s.release()
	return nil
}

// readExactly reads the size bytes fstat reported into buf. Documents are
// replaced by rename, never rewritten in place, so the size taken from the
// open handle is the document's; a file cut short meanwhile (an edit made
// outside the store) reads as gone, and bytes appended meanwhile are not
// read, so the cap checked on the size holds. Skipping the read that
// would confirm EOF saves a system call per document.
func readExactly(r io.Reader, buf []byte, size int64) ([]byte, error) {
	if int64(cap(buf)) < size {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, ports.ErrNotFound
		}
		return nil, ioFailure("reading the document", err)
	}
	return buf, nil
}

// List returns the documents under prefix in lexical order, at most limit
// of them. prefix matches on path-component boundaries ("notes" and
// "notes/" cover "notes/a.md", never "notes-old/a.md"); a prefix naming a
// document lists that document. Symlinks, temporary files, other
// extensions and directories are never listed. limit must be positive.
func (d *Documents) List(ctx context.Context, prefix string, limit int) ([]ports.FileInfo, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if limit <= 0 {
		return nil, false, errors.New("the list limit must be positive")
	}
	clean, err := security.CleanRelPrefix(prefix)
	if err != nil {
		if errors.Is(err, security.ErrPathParent) || errors.Is(err, security.ErrPathAbsolute) {
			return nil, false, ports.ErrOutsideJail
		}
		return nil, false, nil
	}
	trimmed := strings.TrimSuffix(clean, "/")
	start := d.root
	if trimmed != "" {
		parts := strings.Split(trimmed, "/")
		if len(parts) > MaxDepth || slices.ContainsFunc(parts, func(p string) bool { return strings.HasPrefix(p, TempPrefix) }) {
			return nil, false, nil
		}
		dir, base, err := d.openParent(trimmed, false)
		if err != nil {
			if errors.Is(err, ports.ErrOutsideJail) {
				return nil, false, err
			}
			return nil, false, nil
		}
		defer d.closeRoot(dir)
		sub, err := openVerifiedDir(dir, base)
		switch {
		case err == nil:
			defer sub.Close()
			start = sub
		case errors.Is(err, ports.ErrOutsideJail):
			return nil, false, ports.ErrOutsideJail
		case clean == trimmed && d.isDocName(base):
			// The prefix may name a single document.
			st, err := lstatDoc(dir, base)
			if err != nil {
				return nil, false, nil
			}
			return []ports.FileInfo{{Path: trimmed, Size: st.Size(), ModTime: st.ModTime()}}, false, nil
		default:
			return nil, false, nil
		}
	}
	var (
		docs      []ports.FileInfo
		truncated bool
	)
	err = d.walk(ctx, start, trimmed, func(_ *os.Root, rel string, e os.DirEntry) (bool, error) {
		st, ok := d.docInfo(e)
		if !ok {
			return false, nil
		}
		if len(docs) == limit {
			truncated = true
			return true, nil
		}
		docs = append(docs, ports.FileInfo{Path: rel, Size: st.Size(), ModTime: st.ModTime()})
		return false, nil
	})
	if err != nil {
		return nil, false, err
	}
	return docs, truncated, nil
}

// Write stores data atomically at rel (see the type's documentation). A
// path that cannot name a document (another extension, a reserved
// temporary name, a path failing lexical validation) is refused with
// ports.ErrNotDocument; Read and Stat report such paths as
// ports.ErrNotFound, since no such document can exist.
func (d *Documents) Write(ctx context.Context, rel string, data []byte, mode ports.WriteMode) (ports.WriteResult, error) {
	if err := ctx.Err(); err != nil {
		return ports.WriteResult{}, err
	}
	if mode != ports.CreateOnly && mode != ports.Replace {
		return ports.WriteResult{}, errors.New("unknown write mode")
	}
	clean, ok, err := d.docPath(rel)
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
