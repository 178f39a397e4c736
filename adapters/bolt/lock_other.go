//go:build !unix

package bolt

import (
	"os"
	"time"
)

// lockFile leaves the lock to bbolt (LockFileEx on Windows), which takes
// it when it opens the file, after checkFile has read it.
func lockFile(*os.File, time.Duration) error { return nil }
