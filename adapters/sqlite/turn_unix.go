//go:build unix

package sqlite

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// turn hands the write lock between processes fairly. SQLite's own lock
// has no queue: a process committing back to back takes it again the
// moment it lets go, and a process polling for it can wait for ever (seen
// in TestSIGKILLDuringWriteBurstsLosesNothingAcknowledged: one process
// acknowledged nothing). So every write transaction first takes an
// exclusive flock on the writer file, waiting in the kernel rather than
// polling; a process that waits says so with a shared flock on the want
// file, and a process that finishes a commit while another wants the
// lock steps aside for yieldWait before it takes it again.
type turn struct {
	writer, want *os.File
}

// yieldWait is how long a process that just committed leaves the lock to
// a waiting one: enough for the woken waiter to be scheduled.
const yieldWait = 300 * time.Microsecond

func openTurn(path string) (*turn, error) {
	w, err := os.OpenFile(path+"-writer", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, diskErr("opening the store's lock file", err)
	}
	want, err := os.OpenFile(path+"-want", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		w.Close()
		return nil, diskErr("opening the store's lock file", err)
	}
	return &turn{writer: w, want: want}, nil
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// acquire takes the writer lock, waiting for it in the kernel.
func (t *turn) acquire() error {
	if flock(t.writer, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		return nil
	}
	if err := flock(t.want, syscall.LOCK_SH); err != nil {
		return err
	}
	err := flock(t.writer, syscall.LOCK_EX)
	_ = flock(t.want, syscall.LOCK_UN)
	return err
}

// release lets the writer lock go, and steps aside when another process
// waits for it.
func (t *turn) release() {
	_ = flock(t.writer, syscall.LOCK_UN)
	if flock(t.want, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		_ = flock(t.want, syscall.LOCK_UN)
		return
	}
	time.Sleep(yieldWait)
}

func (t *turn) close() error {
	return errors.Join(t.writer.Close(), t.want.Close())
}
