package sqlite

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// The reserve keeps deletes working on a full disk. In WAL mode a delete
// writes too: its pages go to the write-ahead log, which must grow by a
// few pages when the log has no room left to reuse. So the store keeps a
// file of ReserveBytes beside its own (FileName + ReserveSuffix), shared
// by every process on the directory:
//
//   - The log is copied into the store file (checkpoint) whenever it
//     holds half the reserve's size (wal_autocheckpoint): on a full disk
//     the store file must grow by what the log holds before the log can
//     start over, and the reserve is what it grows into.
//   - A write that fails because the disk is full removes the file, the
//     log is copied in, and the deletes gathered with the write run
//     again, in the log's own space.
//   - While the file is missing, the store is full: writes other than
//     deletes are refused before they run (ErrFull), so they cannot take
//     the space the deletes need, and /ready says so.
//   - After a delete while full, the store gives freed pages back to the
//     file system (incremental vacuum) and empties its log, and puts the
//     reserve back once the disk has room for it and as much again, which
//     ends the full state for every process.
//
// A missing reserve at open (a new directory, or one left full) is the
// same state: the store opens, reads and deletes, and writes again once
// the reserve is back.
const (
	// ReserveSuffix names the reserve file beside the store file.
	ReserveSuffix = "-reserve"
	// DefaultReserveBytes is the reserve's size: twice the log SQLite
	// keeps by default (1,000 pages) before it copies it in.
	DefaultReserveBytes = 8 << 20
)

type reserve struct {
	path string
	size int64
}

// held reports whether the reserve file is in place, whole.
func (r *reserve) held() bool {
	fi, err := os.Stat(r.path)
	return err == nil && fi.Size() >= r.size
}

// ensure puts the reserve in place when it is missing and the disk has
// room for it and as much again (so that taking it does not leave the
// disk full at once), and reports whether the store counts as full: the
// reserve is missing and the disk has no room to put it back. A reserve
// that cannot be written for another reason (a read-only directory) does
// not make the store full: its writes then fail, and say why, on their
// own. Several processes may race here: each allocates a file of its own
// and renames it over the reserve, which leaves one.
func (r *reserve) ensure() (full bool) {
	if r.held() {
		return false
	}
	if free, err := freeBytes(r.path); err == nil && free < 2*r.size {
		return true
	}
	tmp := r.path + "." + strconv.Itoa(os.Getpid())
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return noRoom(err)
	}
	err = allocate(f, r.size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, r.path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return noRoom(err)
	}
	return false
}

// noRoom reports whether err is the file system's "no space" (or quota).
func noRoom(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// release removes the reserve, giving its space to the deletes.
func (r *reserve) release() error {
	if err := os.Remove(r.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return diskErr("releasing the store's reserve", err)
	}
	return nil
}

// writeZeros allocates size bytes of f by writing them, where the file
// system cannot reserve blocks without writing.
func writeZeros(f *os.File, size int64) error {
	buf := make([]byte, 64<<10)
	for off := int64(0); off < size; off += int64(len(buf)) {
		n := min(int64(len(buf)), size-off)
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			return err
		}
	}
	return nil
}
