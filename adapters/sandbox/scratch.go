package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Scratch errors. Their text never carries a path.
var (
	errScratchPath  = errors.New("the scratch path is not a relative path inside the scratch directory")
	errScratchWrite = errors.New("writing into the scratch directory failed")
	errScratchMake  = errors.New("creating the scratch directory failed")
)

// scratchRoot is the directory every run's scratch is created under.
type scratchRoot struct {
	dir string
	id  identity
}

// openScratchRoot creates the scratch root when missing and makes it
// traversable but not listable, so a command running as the sandbox uid
// reaches its own scratch by its random name and cannot list the others.
func openScratchRoot(dir string, id identity) (*scratchRoot, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: it is empty", ErrWorkdir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: it cannot be made absolute", ErrWorkdir)
	}
	if strings.ContainsAny(abs, ",:") {
		// The container runner's mount syntax and bwrap's argv both take
		// the path whole; refuse separators rather than quote them.
		return nil, fmt.Errorf("%w: its path contains ',' or ':'", ErrWorkdir)
	}
	if err := os.MkdirAll(abs, 0o711); err != nil {
		return nil, fmt.Errorf("%w: it cannot be created", ErrWorkdir)
	}
	st, err := os.Lstat(abs)
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%w: it is not a directory", ErrWorkdir)
	}
	if err := os.Chmod(abs, 0o711); err != nil {
		return nil, fmt.Errorf("%w: its permissions cannot be set", ErrWorkdir)
	}
	if id.dropFromRoot && !traversable(abs, id) {
		return nil, fmt.Errorf("%w: uid %d cannot reach it (every parent directory must let it pass)", ErrWorkdir, id.uid)
	}
	removeAbandoned(abs)
	return &scratchRoot{dir: abs, id: id}, nil
}

// removeAbandoned removes the scratch directories a process that died
// mid-run left behind. A live run holds its directory's lock, so a
// directory whose lock can be taken belongs to nobody, whichever server
// sharing the root created it.
func removeAbandoned(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), scratchPrefix) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if lock, ok := lockDir(dir, false); ok {
			_ = removeTree(dir)
			_ = lock.Close()
		}
	}
}

// traversable reports whether id (without supplementary groups) may pass
// through dir and each of its parents.
func traversable(dir string, id identity) bool {
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return false
		}
		perm := st.Mode().Perm()
		var want fs.FileMode = 0o001
		if uid, gid, ok := owner(st); ok {
			switch {
			case uid == id.uid:
				want = 0o100
			case gid == id.gid:
				want = 0o010
			}
		}
		if perm&want == 0 {
			return false
		}
		if parent := filepath.Dir(d); parent == d {
			return true
		}
	}
}

// scratch is one run's private directory. It implements ports.Scratch.
type scratch struct {
	dir  string
	root *os.Root
	id   identity
	// lock is held for the run's life (see removeAbandoned).
	lock *os.File
	// staged is true once a file was written into it.
	staged bool
}

// create makes a fresh scratch directory owned by the sandbox uid.
func (r *scratchRoot) create() (*scratch, error) {
	dir, err := os.MkdirTemp(r.dir, scratchPrefix)
	if err != nil {
		return nil, errScratchMake
	}
	s := &scratch{dir: dir, id: r.id}
	var locked bool
	if s.lock, locked = lockDir(dir, true); !locked {
		_ = removeTree(dir)
		return nil, errScratchMake
	}
	if r.id.dropFromRoot {
		if err := os.Chown(dir, r.id.uid, r.id.gid); err != nil {
			_ = s.lock.Close()
			_ = removeTree(dir)
			return nil, errScratchMake
		}
	}
	if s.root, err = os.OpenRoot(dir); err != nil {
		_ = s.lock.Close()
		_ = removeTree(dir)
		return nil, errScratchMake
	}
	return s, nil
}

// WriteFile creates rel with data, and its parent directories, all owned
// by the sandbox uid so the command may change what it was given. An
// existing file is refused: staging never overwrites.
func (s *scratch) WriteFile(rel string, data []byte) error {
	name := filepath.FromSlash(rel)
	if rel == "" || !filepath.IsLocal(name) || filepath.IsAbs(name) {
		return errScratchPath
	}
	if dir := filepath.Dir(name); dir != "." {
		if err := s.mkdirs(dir); err != nil {
			return err
		}
	}
	f, err := s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return errScratchWrite
	}
	s.staged = true
	_, werr := f.Write(data)
	var cerr error
	if s.id.dropFromRoot {
		cerr = f.Chown(s.id.uid, s.id.gid)
	}
	if err := f.Close(); werr != nil || cerr != nil || err != nil {
		return errScratchWrite
	}
	return nil
}

// mkdirs creates each missing component of dir, owned by the sandbox uid.
func (s *scratch) mkdirs(dir string) error {
	parts := strings.Split(dir, string(filepath.Separator))
	for i := range parts {
		p := filepath.Join(parts[:i+1]...)
		err := s.root.Mkdir(p, 0o755)
		switch {
		case err == nil:
			if s.id.dropFromRoot {
				if err := s.root.Lchown(p, s.id.uid, s.id.gid); err != nil {
					return errScratchWrite
				}
			}
		case errors.Is(err, fs.ErrExist):
			if st, serr := s.root.Lstat(p); serr != nil || !st.IsDir() {
				return errScratchPath
			}
		default:
			return errScratchWrite
		}
	}
	return nil
}

// remove deletes the scratch directory and everything the command left,
// then lets go of its lock.
func (s *scratch) remove() error {
	_ = s.root.Close()
	err := removeTree(s.dir)
	_ = s.lock.Close()
	return err
}

// removeTree removes dir. A command running as the server's own uid may
// have left directories it cannot list or write; they are opened up and
// the removal retried. Symlinks are removed, never followed.
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return errors.New("removing the scratch directory failed")
	}
	return nil
}
