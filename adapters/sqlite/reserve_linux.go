package sqlite

import (
	"os"
	"path/filepath"
	"syscall"
)

// allocate gives f size bytes of real blocks: fallocate where the file
// system has it (tmpfs and ext4 do), written zeros elsewhere.
func allocate(f *os.File, size int64) error {
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, size); err == nil {
		return nil
	} else if err == syscall.ENOSPC {
		return err
	}
	return writeZeros(f, size)
}

// freeBytes is the space an unprivileged writer may still use on the file
// system holding path's directory.
func freeBytes(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
