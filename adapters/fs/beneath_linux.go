//go:build linux

package fs

import (
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arrowhead-go/arrowhead/ports"
)

// beneathResolve makes the kernel refuse, while it resolves a path, any
// symlink in it (the final component too), any ".." or absolute jump out
// of the directory it starts from, and magic links: exactly the tree's
// rule, checked in one openat2 call instead of one lstat per component.
const beneathResolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// beneathRetries bounds the retries after EAGAIN, which openat2 returns
// when a rename elsewhere in the filesystem raced the resolution.
const beneathRetries = 3

// openBeneath opens the tree's root directory for openat2-based reads,
// or returns nil when the kernel has no openat2 (before Linux 5.6, or
// under a seccomp filter that refuses it): reads then take the portable
// path. The handle must be the directory r holds.
func openBeneath(r *os.Root, dir string) *beneathRoot {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	want, err1 := r.Stat(".")
	got, err2 := f.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(want, got) || !got.IsDir() {
		f.Close()
		return nil
	}
	fd, err := unix.Openat2(int(f.Fd()), ".", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: beneathResolve})
	if err != nil {
		f.Close()
		return nil
	}
	unix.Close(fd)
	return &beneathRoot{f: f, fd: int(f.Fd())}
}

// open resolves clean beneath the root, retrying a lookup a rename raced.
// A closed root answers EBADF.
func (b *beneathRoot) open(clean string) (int, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return -1, unix.EBADF
	}
	for attempt := 0; ; attempt++ {
		fd, err := unix.Openat2(b.fd, clean, &unix.OpenHow{
			// O_NONBLOCK keeps a FIFO from blocking the open; the fstat
			// after it refuses one.
			Flags:   unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY,
			Resolve: beneathResolve,
		})
		if err == nil || attempt == beneathRetries || !(errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR)) {
			return fd, err
		}
	}
}

// readBeneath reads the served file clean (already validated lexically
// and as a name) with one openat2 from the root: no symlink anywhere, no
// escape, decided by the kernel during the lookup. ok is false when the
// caller must take the portable path instead (a rename kept racing the
// lookup).
func (t *tree) readBeneath(clean string, maxBytes int64, buf []byte) (data []byte, info ports.FileInfo, ok bool, err error) {
	fd, err := t.beneath.open(clean)
	switch {
	case err == nil:
	case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
		return nil, ports.FileInfo{}, false, nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return nil, ports.FileInfo{}, true, ports.ErrOutsideJail
	default:
		return nil, ports.FileInfo{}, true, ports.ErrNotFound
	}
	// The descriptor is used raw: an *os.File would try to register a
	// regular file with the poller (an fcntl and a refused epoll_ctl) and
	// set a finalizer, a third of the cost of a small read.
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, ports.FileInfo{}, true, ports.ErrNotFound
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, ports.FileInfo{}, true, ports.ErrNotRegular
	}
	if maxBytes <= 0 || maxBytes > t.maxRead {
		maxBytes = t.maxRead
	}
	if st.Size > maxBytes {
		return nil, ports.FileInfo{}, true, ports.ErrTooLarge
	}
	data, err = readExactly(rawFD(fd), buf, st.Size)
	if err != nil {
		return nil, ports.FileInfo{}, true, err
	}
	if t.vet != nil {
		if err := t.vet(data); err != nil {
			return nil, ports.FileInfo{}, true, err
		}
	}
	mtime := time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
	return data, ports.FileInfo{Path: clean, Size: int64(len(data)), ModTime: mtime}, true, nil
}

// rawFD reads a descriptor with read(2), retrying an interrupted call.
type rawFD int

func (fd rawFD) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(fd), p)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}
