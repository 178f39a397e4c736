//go:build !unix

package inmem

import "os"

// lockFile is a no-op where flock is unavailable: on such systems nothing
// stops two processes from opening the same index directory, so give each
// process its own ARROWHEAD_DATA_DIR.
func lockFile(*os.File) error { return nil }
