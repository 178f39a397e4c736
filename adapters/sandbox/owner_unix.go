//go:build unix

package sandbox

import (
	"io/fs"
	"syscall"
)

// owner returns a file's uid and gid.
func owner(st fs.FileInfo) (uid, gid int, ok bool) {
	if sys, isStat := st.Sys().(*syscall.Stat_t); isStat {
		return int(sys.Uid), int(sys.Gid), true
	}
	return 0, 0, false
}
