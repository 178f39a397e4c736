//go:build linux

package fs

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arrowhead-go/arrowhead/ports"
)

// direntBufferBytes is the getdents64 buffer of one listing.
const direntBufferBytes = 32 << 10

// Offsets in a linux_dirent64 record: d_ino (8 bytes), d_off (8), then
// d_reclen (2), d_type (1) and the NUL-terminated name.
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

// direntry is one name of a directory listing, with its type.
type direntry struct {
	name string
	typ  byte // unix.DT_*
}

// lister is one listing walked from the openat2 root handle: the same
// served files in the same lexical order as the portable walk, read with
// raw descriptors. A directory read through an os.Root lstats every entry
// as it lists it, and opening a subdirectory through one costs an lstat,
// an open, an fstat and a second open to list it; here each subdirectory
// is one openat of its bare name with O_NOFOLLOW|O_DIRECTORY from its
// verified parent's descriptor (the kernel refuses a symlink or a
// non-directory in that same call, so nothing can be swapped between a
// check and the open), the names and types come from getdents64, and only
// a served regular file is lstat'ed, for its size and time.
type lister struct {
	t         *tree
	ctx       context.Context
	limit     int
	buf       []byte
	files     []ports.FileInfo
	truncated bool
	// visit, when set, receives each served file's path instead of files
	// collecting it, with no lstat: a search re-checks the type when it
	// opens the file, so the listing need not. Returning true stops.
	visit func(rel string) bool
}

// listBeneath lists the served files under the directory start ("" is the
// root, otherwise a clean, served-looking relative path), or hands their
// paths to visit when it is set. ok is false when
// the start directory cannot be opened this way (missing, not a directory,
// a symlink on the way, no openat2): the caller then takes the portable
// path, which decides what that means.
func (t *tree) listBeneath(ctx context.Context, start string, limit int, visit func(string) bool) (files []ports.FileInfo, truncated, ok bool, err error) {
	b := t.beneath
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, false, false, nil
	}
	dir := start
	if dir == "" {
		dir = "."
	}
	fd, err := unix.Openat2(b.fd, dir, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: beneathResolve,
	})
	if err != nil {
		return nil, false, false, nil
	}
	l := &lister{t: t, ctx: ctx, limit: limit, buf: make([]byte, direntBufferBytes), visit: visit}
	_, err = l.dir(fd, start, componentCount(start))
	if err != nil {
		return nil, false, true, err
	}
	return l.files, l.truncated, true, nil
}

// dir lists the directory fd (closing it) whose relative path is base;
// stop reports that the listing is complete (the limit was reached).
func (l *lister) dir(fd int, base string, depth int) (stop bool, err error) {
	entries, err := l.read(fd)
	if err != nil {
		unix.Close(fd)
		return true, err
	}
	// A name whose type the filesystem does not report is lstat'ed now,
	// since the order depends on whether it is a directory.
	for i := range entries {
		if entries[i].typ == unix.DT_UNKNOWN {
			var st unix.Stat_t
			if unix.Fstatat(fd, entries[i].name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				entries[i].typ = modeType(st.Mode)
			}
		}
	}
	// Sorting directories as "name/" makes the depth-first order equal to
	// the lexical order of full paths ("a-b.md" < "a/x.md"), as in walk.
	slices.SortFunc(entries, func(a, b direntry) int { return strings.Compare(a.key(), b.key()) })
	defer unix.Close(fd)
	for _, e := range entries {
		rel := e.name
		if base != "" {
			rel = base + "/" + e.name
		}
		switch {
		case e.typ == unix.DT_DIR:
			if l.t.hidden(e.name) || depth+1 >= MaxDepth {
				continue
			}
			sub, err := unix.Openat(fd, e.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue // raced with a rename or replaced by a symlink: skip
			}
			if stop, err := l.dir(sub, rel, depth+1); stop || err != nil {
				return true, err
			}
		case e.typ == unix.DT_REG && l.t.isServedName(e.name) && l.visit != nil:
			if l.visit(rel) {
				return true, nil
			}
		case e.typ == unix.DT_REG && l.t.isServedName(e.name):
			var st unix.Stat_t
			if unix.Fstatat(fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
				continue
			}
			if len(l.files) == l.limit {
				l.truncated = true
				return true, nil
			}
			l.files = append(l.files, ports.FileInfo{Path: rel, Size: st.Size, ModTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec)})
		}
	}
	return false, nil
}

// read returns the entries of the directory fd, without "." and "..".
func (l *lister) read(fd int) ([]direntry, error) {
	if err := l.ctx.Err(); err != nil {
		return nil, err
	}
	var entries []direntry
	for {
		n, err := unix.Getdents(fd, l.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			// A directory removed mid-walk has nothing to list.
			return entries, nil
		}
		if n <= 0 {
			return entries, nil
		}
		for off := 0; off+direntName <= n; {
			reclen := int(binary.NativeEndian.Uint16(l.buf[off+direntReclen:]))
			if reclen <= direntName || off+reclen > n {
				return entries, nil // a malformed record ends the listing
			}
			name := l.buf[off+direntName : off+reclen]
			if i := slices.Index(name, 0); i >= 0 {
				name = name[:i]
			}
			if s := string(name); s != "." && s != ".." && s != "" {
				entries = append(entries, direntry{name: s, typ: l.buf[off+direntType]})
			}
			off += reclen
		}
	}
}

func (e direntry) key() string {
	if e.typ == unix.DT_DIR {
		return e.name + "/"
	}
	return e.name
}

// modeType is the DT_* type of an lstat mode.
func modeType(mode uint32) byte {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFREG:
		return unix.DT_REG
	case unix.S_IFLNK:
		return unix.DT_LNK
	}
	return unix.DT_UNKNOWN
}
