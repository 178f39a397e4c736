package fs

import (
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"math"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

// tree is the read side shared by the document corpus and the repository:
// a directory served through an os.Root, where every path is resolved one
// verified component at a time, a symlink anywhere in a path is refused
// (ports.ErrOutsideJail) wherever it points, and only regular files with a
// served name are listed or read. Which names are served is the store's
// policy, given by the fields below; the resolution is the same for both.
// A tree is immutable after construction and safe for concurrent use.
type tree struct {
	root *os.Root
	dir  string
	// exts are the allowed final extensions (".md"); names are exact base
	// names served whatever their extension (the repository's go.mod).
	exts  map[string]bool
	names map[string]bool
	// maxRead caps every read, whatever the caller asks.
	maxRead int64
	// hidden reports a path component no served path may contain: the
	// corpus's temporary names, the repository's excluded directories. A
	// walk never descends into a hidden directory, and a direct path
	// through one is not found.
	hidden func(component string) bool
	// vet, when set, checks a file's content once it is read (the
	// repository's binary sniff); its error is returned instead of the data.
	vet func(data []byte) error
	// typeRefusal is what Read and Stat return for a path whose name is
	// not served (the repository's ports.ErrFileType); nil means
	// ports.ErrNotFound, the corpus's answer.
	typeRefusal error
	// beneath, when the kernel offers openat2 (Linux), is a handle on the
	// root directory from which a read resolves its whole path in one
	// call, the kernel refusing symlinks and escapes (beneath_linux.go);
	// nil means every read resolves component by component.
	beneath *beneathRoot
}

// beneathRoot is the root directory handle openat2 resolves from. Reads
// hold it shared and close takes it exclusively, so a read that outlives
// the store (a search's read-ahead finishing after its caller) never uses
// a descriptor number the process has since reused.
type beneathRoot struct {
	mu     sync.RWMutex
	f      *os.File
	fd     int
	closed bool
}

func (b *beneathRoot) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		b.f.Close()
	}
}

// close releases the root handles.
func (t *tree) close() error {
	if t.beneath != nil {
		t.beneath.close()
	}
	return t.root.Close()
}

// visitFunc is called for every non-directory entry of a walk and for
// every directory the walk does not descend into (reserved names, entries
// beyond MaxDepth). dir is the verified handle of the entry's parent; rel
// is the entry's corpus-relative path. Returning true stops the walk.
type visitFunc func(dir *os.Root, rel string, e os.DirEntry) (stop bool, err error)

// fileInfo returns the lstat of a walked entry the tree serves: a regular
// file (not a symlink) with a served name. A directory read
// through an os.Root lstats every entry relative to the directory's handle
// as it lists it, so Info costs no further call and follows no link.
func (t *tree) fileInfo(e os.DirEntry) (os.FileInfo, bool) {
	if !e.Type().IsRegular() || !t.isServedName(e.Name()) {
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
func (t *tree) walk(ctx context.Context, start *os.Root, base string, visit visitFunc) error {
	_, err := t.walkDir(ctx, start, base, componentCount(base), visit)
	return err
}

// componentCount is how many components the relative path rel has ("" has
// none): a walk from it descends only while a path stays within MaxDepth.
func componentCount(rel string) int {
	if rel == "" {
		return 0
	}
	return strings.Count(rel, "/") + 1
}

func (t *tree) walkDir(ctx context.Context, dir *os.Root, base string, depth int, visit visitFunc) (bool, error) {
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
		if !e.IsDir() || t.hidden(name) || depth+1 >= MaxDepth {
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
		stop, err := t.walkDir(ctx, sub, rel, depth+1, visit)
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

// servedPath validates a caller path lexically (core/security) and as a
// served name. The returned error is ports.ErrOutsideJail for traversal and
// absolute forms; ok is false when the path cannot name a served file (a
// hidden component anywhere, another extension, too deep).
func (t *tree) servedPath(rel string) (clean string, ok bool, err error) {
	clean, err = security.CleanRelPath(rel)
	if err != nil {
		if errors.Is(err, security.ErrPathParent) || errors.Is(err, security.ErrPathAbsolute) {
			return "", false, ports.ErrOutsideJail
		}
		return "", false, nil
	}
	// One pass over the components, without splitting: this runs for
	// every file a search reads.
	depth, last := 0, ""
	for rest := clean; rest != ""; depth++ {
		last, rest, _ = strings.Cut(rest, "/")
		if depth == MaxDepth || t.hidden(last) {
			return "", false, nil
		}
	}
	return clean, t.isServedName(last), nil
}

// unserved is the refusal of a path servedPath did not accept: the
// store's type refusal when only the final name is at fault, not found
// otherwise (a hidden component, too deep).
func (t *tree) unserved(clean string) error {
	if clean == "" || t.typeRefusal == nil {
		return ports.ErrNotFound
	}
	return t.typeRefusal
}

// isServedName reports whether a base name is served: not hidden, and
// either one of the exact names or carrying an allowed extension after a
// non-empty stem (".md" alone is a hidden file with no extension).
func (t *tree) isServedName(name string) bool {
	if t.hidden(name) {
		return false
	}
	if t.names[name] {
		return true
	}
	ext := path.Ext(name)
	return ext != "" && len(ext) < len(name) && t.exts[ext]
}

// openParent resolves the directory holding clean, one verified component
// at a time. With create set, missing directories are made (mode 0750).
// The caller closes the returned root unless it is t.root.
func (t *tree) openParent(clean string, create bool) (*os.Root, string, error) {
	dirPart, base := path.Split(clean)
	dir, _, err := t.openDir(strings.TrimSuffix(dirPart, "/"), create, false)
	return dir, base, err
}

// openDir resolves the directory dirRel ("" is the root) one verified
// component at a time, returning with ids set the lstat of each component.
// With create set, missing directories are made (mode 0750). The caller
// closes the returned root unless it is t.root.
func (t *tree) openDir(dirRel string, create, ids bool) (*os.Root, []os.FileInfo, error) {
	cur := t.root
	if dirRel == "" {
		return cur, nil, nil
	}
	var infos []os.FileInfo
	for _, name := range strings.Split(dirRel, "/") {
		next, st, err := openVerifiedDirInfo(cur, name)
		if create && errors.Is(err, iofs.ErrNotExist) {
			if mkErr := cur.Mkdir(name, dirPerm); mkErr != nil && !errors.Is(mkErr, iofs.ErrExist) {
				t.closeRoot(cur)
				return nil, nil, ioFailure("creating a directory", mkErr)
			}
			next, st, err = openVerifiedDirInfo(cur, name)
		}
		t.closeRoot(cur)
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

func (t *tree) closeRoot(r *os.Root) {
	if r != t.root {
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

// lstatRegular checks that base in dir is a regular file (not a symlink).
func lstatRegular(dir *os.Root, base string) (os.FileInfo, error) {
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

// stat describes a served file.
func (t *tree) stat(ctx context.Context, rel string) (ports.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return ports.FileInfo{}, err
	}
	clean, ok, err := t.servedPath(rel)
	if err != nil {
		return ports.FileInfo{}, err
	}
	if !ok {
		return ports.FileInfo{}, t.unserved(clean)
	}
	dir, base, err := t.openParent(clean, false)
	if err != nil {
		return ports.FileInfo{}, err
	}
	defer t.closeRoot(dir)
	st, err := lstatRegular(dir, base)
	if err != nil {
		return ports.FileInfo{}, err
	}
	return ports.FileInfo{Path: clean, Size: st.Size(), ModTime: st.ModTime()}, nil
}

// readInto reads a served file into buf[:0], refusing one above maxBytes
// or above maxRead, whichever is lower (maxBytes <= 0 means maxRead). The
// returned slice aliases buf when it was large enough.
func (t *tree) readInto(ctx context.Context, rel string, maxBytes int64, buf []byte) ([]byte, ports.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, ports.FileInfo{}, err
	}
	clean, ok, err := t.servedPath(rel)
	if err != nil {
		return nil, ports.FileInfo{}, err
	}
	if !ok {
		return nil, ports.FileInfo{}, t.unserved(clean)
	}
	if t.beneath != nil {
		if data, info, done, err := t.readBeneath(clean, maxBytes, buf); done {
			return data, info, err
		}
	}
	dir, base, err := t.openParent(clean, false)
	if err != nil {
		return nil, ports.FileInfo{}, err
	}
	defer t.closeRoot(dir)
	return t.readIn(dir, clean, base, maxBytes, buf)
}

// readIn reads the served file base in its verified directory dir.
func (t *tree) readIn(dir *os.Root, clean, base string, maxBytes int64, buf []byte) ([]byte, ports.FileInfo, error) {
	if maxBytes <= 0 || maxBytes > t.maxRead {
		maxBytes = t.maxRead
	}
	st, err := lstatRegular(dir, base)
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
	if t.vet != nil {
		if err := t.vet(data); err != nil {
			return nil, ports.FileInfo{}, err
		}
	}
	return data, ports.FileInfo{Path: clean, Size: int64(len(data)), ModTime: got.ModTime()}, nil
}

// ReadSession reads the files of one store in turn for one goroutine (a
// search). It keeps the verified handle of the directory it read from
// last, so that consecutive files of one directory, as List returns them,
// resolve it once: before each read the held directory is revalidated with
// one lstat per path component (each must still be the same real
// directory, not a symlink), so a read through a session refuses exactly
// what the store's Read refuses. A ReadSession is not safe for concurrent
// use; Close releases it.
type ReadSession struct {
	t      *tree
	dirRel string        // the held directory, root-relative
	dir    *os.Root      // nil when none is held
	ids    []os.FileInfo // lstat of each component of dirRel when opened
}

var _ search.ReadSession = (*ReadSession)(nil)

// Read is ReadInto without a buffer.
func (s *ReadSession) Read(ctx context.Context, rel string, maxBytes int64) ([]byte, ports.FileInfo, error) {
	return s.ReadInto(ctx, rel, maxBytes, nil)
}

// ReadInto is the store's ReadInto through the session's held directory.
func (s *ReadSession) ReadInto(ctx context.Context, rel string, maxBytes int64, buf []byte) ([]byte, ports.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, ports.FileInfo{}, err
	}
	t := s.t
	clean, ok, err := t.servedPath(rel)
	if err != nil {
		return nil, ports.FileInfo{}, err
	}
	if !ok {
		return nil, ports.FileInfo{}, t.unserved(clean)
	}
	if t.beneath != nil {
		// One openat2 from the root checks the whole path; there is no
		// directory worth holding.
		if data, info, done, err := t.readBeneath(clean, maxBytes, buf); done {
			return data, info, err
		}
	}
	dirPart, base := path.Split(clean)
	dirRel := strings.TrimSuffix(dirPart, "/")
	if dirRel == "" {
		return t.readIn(t.root, clean, base, maxBytes, buf)
	}
	if s.dir == nil || s.dirRel != dirRel || !s.stillValid() {
		s.release()
		dir, ids, err := t.openDir(dirRel, false, true)
		if err != nil {
			return nil, ports.FileInfo{}, err
		}
		s.dir, s.dirRel, s.ids = dir, dirRel, ids
	}
	return t.readIn(s.dir, clean, base, maxBytes, buf)
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
		st, err := s.t.root.Lstat(s.dirRel[:end])
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
// replaced by rename, never rewritten in place, and the repository is
// never written by this process, so the size taken from the open handle is
// the file's; a file cut short meanwhile (an edit made outside the store)
// reads as gone, and bytes appended meanwhile are not read, so the cap
// checked on the size holds. Skipping the read that would confirm EOF
// saves a system call per file.
func readExactly(r io.Reader, buf []byte, size int64) ([]byte, error) {
	if int64(cap(buf)) < size {
		buf = make([]byte, size)
	}
	buf = buf[:size]
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, ports.ErrNotFound
		}
		return nil, ioFailure("reading the file", err)
	}
	return buf, nil
}

// list returns the served files under prefix in lexical order, at most
// limit of them. prefix matches on path-component boundaries ("notes" and
// "notes/" cover "notes/a.md", never "notes-old/a.md"); a prefix naming a
// served file lists that file. Symlinks, hidden names, other extensions
// and directories are never listed. limit must be positive.
func (t *tree) list(ctx context.Context, prefix string, limit int) ([]ports.FileInfo, bool, error) {
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
	start := t.root
	if trimmed != "" {
		parts := strings.Split(trimmed, "/")
		if len(parts) > MaxDepth || slices.ContainsFunc(parts, t.hidden) {
			return nil, false, nil
		}
	}
	if t.beneath != nil {
		if files, truncated, ok, err := t.listBeneath(ctx, trimmed, limit, nil); ok {
			return files, truncated, err
		}
	}
	if trimmed != "" {
		dir, base, err := t.openParent(trimmed, false)
		if err != nil {
			if errors.Is(err, ports.ErrOutsideJail) {
				return nil, false, err
			}
			return nil, false, nil
		}
		defer t.closeRoot(dir)
		sub, err := openVerifiedDir(dir, base)
		switch {
		case err == nil:
			defer sub.Close()
			start = sub
		case errors.Is(err, ports.ErrOutsideJail):
			return nil, false, ports.ErrOutsideJail
		case clean == trimmed && t.isServedName(base):
			// The prefix may name a single file.
			st, err := lstatRegular(dir, base)
			if err != nil {
				return nil, false, nil
			}
			return []ports.FileInfo{{Path: trimmed, Size: st.Size(), ModTime: st.ModTime()}}, false, nil
		default:
			return nil, false, nil
		}
	}
	var (
		files     []ports.FileInfo
		truncated bool
	)
	err = t.walk(ctx, start, trimmed, func(_ *os.Root, rel string, e os.DirEntry) (bool, error) {
		st, ok := t.fileInfo(e)
		if !ok {
			return false, nil
		}
		if len(files) == limit {
			truncated = true
			return true, nil
		}
		files = append(files, ports.FileInfo{Path: rel, Size: st.Size(), ModTime: st.ModTime()})
		return false, nil
	})
	if err != nil {
		return nil, false, err
	}
	return files, truncated, nil
}

// WalkPaths hands visit the paths List would return for prefix, in the
// same lexical order, as the walk finds them, until visit returns true or
// the tree is exhausted. Where openat2 serves the walk no file is stat'ed
// (the reader checks each file as it opens it), so a search can start on
// the first files while the rest are still being listed; elsewhere it
// walks List's whole answer. It implements search.Walker.
func (t *tree) WalkPaths(ctx context.Context, prefix string, visit func(rel string) (stop bool)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	clean, err := security.CleanRelPrefix(prefix)
	if err != nil {
		if errors.Is(err, security.ErrPathParent) || errors.Is(err, security.ErrPathAbsolute) {
			return ports.ErrOutsideJail
		}
		return nil
	}
	trimmed := strings.TrimSuffix(clean, "/")
	if trimmed != "" {
		parts := strings.Split(trimmed, "/")
		if len(parts) > MaxDepth || slices.ContainsFunc(parts, t.hidden) {
			return nil
		}
	}
	if t.beneath != nil {
		if _, _, ok, err := t.listBeneath(ctx, trimmed, 1, visit); ok {
			return err
		}
	}
	files, _, err := t.list(ctx, prefix, math.MaxInt)
	if err != nil {
		return err
	}
	for _, f := range files {
		if visit(f.Path) {
			return nil
		}
	}
	return nil
}
