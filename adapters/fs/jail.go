// Package fs holds the filesystem adapters: jails rooted with os.OpenRoot,
// so every path is resolved by the kernel relative to an open directory and
// no symlink (or race) can lead outside it.
package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Jail reads regular files under one root. It implements ports.FileJail.
type Jail struct {
	root *os.Root
	dir  string
}

var _ ports.FileJail = (*Jail)(nil)

// OpenJail opens dir as a jail root. The directory must exist.
func OpenJail(dir string) (*Jail, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving the jail root: %w", err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("opening the jail root: %w", err)
	}
	return &Jail{root: r, dir: abs}, nil
}

// Close releases the root directory handle.
func (j *Jail) Close() error { return j.root.Close() }

// Dir returns the absolute jail root.
func (j *Jail) Dir() string { return j.dir }

// ReadFile reads rel (a validated, slash-separated relative path). Symlinks
// are followed only while they stay inside the root; the size is checked on
// the open file and enforced again while reading.
func (j *Jail) ReadFile(ctx context.Context, rel string, maxBytes int64) ([]byte, ports.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, ports.FileInfo{}, err
	}
	f, err := j.root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, ports.FileInfo{}, mapOpenError(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, ports.FileInfo{}, ports.ErrNotFound
	}
	if !st.Mode().IsRegular() {
		return nil, ports.FileInfo{}, ports.ErrNotRegular
	}
	if st.Size() > maxBytes {
		return nil, ports.FileInfo{}, ports.ErrTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, ports.FileInfo{}, errors.New("reading the file failed")
	}
	if int64(len(data)) > maxBytes {
		return nil, ports.FileInfo{}, ports.ErrTooLarge
	}
	return data, ports.FileInfo{Path: rel, Size: int64(len(data)), ModTime: st.ModTime()}, nil
}

// mapOpenError turns an os error (which carries the path) into a sentinel.
func mapOpenError(err error) error {
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return ports.ErrNotFound
	case isEscape(err):
		return ports.ErrOutsideJail
	case errors.Is(err, iofs.ErrPermission):
		return ports.ErrNotFound
	}
	return ports.ErrNotFound
}

// isEscape reports the error os.Root returns for a path or symlink that
// leaves the root.
func isEscape(err error) bool {
	var pe *iofs.PathError
	if errors.As(err, &pe) {
		return pe.Err != nil && pe.Err.Error() == "path escapes from parent"
	}
	return false
}
