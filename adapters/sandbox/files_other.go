//go:build !unix

package sandbox

import (
	"io/fs"
	"os"
)

// owner is unknown off Unix.
func owner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

// lockDir never locks off Unix, where no runner runs.
func lockDir(string, bool) (*os.File, bool) { return nil, false }
