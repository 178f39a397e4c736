//go:build unix

package bolt

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// lockRetry is how often lockFile retries a held lock.
const lockRetry = 20 * time.Millisecond

// lockFile takes an exclusive flock on f, retrying until timeout. The
// kernel releases it when f is closed or the process dies, so a crash
// leaves no stale lock.
func lockFile(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return err
		case time.Now().After(deadline):
			return ErrLocked
		}
		time.Sleep(lockRetry)
	}
}
