//go:build !unix

package sandbox

import "io/fs"

// owner is unknown off Unix.
func owner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }
