//go:build unix

package sandbox

import (
	"io/fs"
	"os"
	"syscall"
)

// owner returns a file's uid and gid.
func owner(st fs.FileInfo) (uid, gid int, ok bool) {
	if sys, isStat := st.Sys().(*syscall.Stat_t); isStat {
		return int(sys.Uid), int(sys.Gid), true
	}
	return 0, 0, false
}

// lockDir opens dir and takes an exclusive lock on it, which the kernel
// drops when this process dies; wait=false fails at once when another
// process holds it. The descriptor is close-on-exec, so no command
// inherits it.
func lockDir(dir string, wait bool) (*os.File, bool) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		_ = f.Close()
		return nil, false
	}
	return f, true
}
