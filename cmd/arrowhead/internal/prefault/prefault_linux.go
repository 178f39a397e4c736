//go:build linux

package prefault

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const (
	// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14).
	madvPopulateWrite = 23
	pageSize          = 4096
	// step is how much is populated and read at a time: far enough
	// ahead of the allocator, which takes about 30 pages a millisecond
	// while the command starts, and small enough to stay close to it.
	step = 64 << 10
	// maxAhead bounds the walk: start-up's heap with room to spare.
	maxAhead = 32 << 20
	// maxRun bounds how long the helper waits for the heap to grow: a
	// start on a loaded machine takes several times the usual 0.1 s.
	maxRun = 2 * time.Second
	// The wait for the next chunk to be mapped starts short and
	// doubles, so a heap that has stopped growing costs few wake-ups.
	minWait = 50 * time.Microsecond
	maxWait = 5 * time.Millisecond
)

// anchor is the object the walk starts from: the heap's pages below it
// are in use already.
var anchor *[64]byte

// walked is how far the helper got, once it has stopped.
var walked atomic.Uintptr

func init() {
	if runtime.GOMAXPROCS(0) < 2 {
		return // no second core: the helper would take turns with start-up
	}
	anchor = new([64]byte)
	go func() { walked.Store(walk(uintptr(unsafe.Pointer(anchor)), maxAhead, maxRun, &stopped)) }()
}

// walk populates and reads [from, from+limit) a step at a time, waiting
// while the next step is not mapped yet, until stop is set or for at most
// d. It returns how many bytes it populated and read.
func walk(from, limit uintptr, d time.Duration, stop *atomic.Bool) (done uintptr) {
	// Aligned to step, so no step straddles the runtime's chunks (4 MiB
	// aligned): the first one, holding the anchor, is mapped whole.
	next := from &^ (step - 1)
	end := next + limit
	deadline := time.Now().Add(d)
	wait := minWait
	for next < end && !stop.Load() {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, next, step, madvPopulateWrite); errno != 0 {
			if done == 0 {
				// The first step is mapped (it holds the anchor):
				// the kernel does not know MADV_POPULATE_WRITE.
				return done
			}
			// Not mapped yet (or reserved without access): the
			// runtime maps the next chunk when the heap needs it.
			if time.Now().After(deadline) {
				return done
			}
			time.Sleep(wait)
			wait = min(2*wait, maxWait)
			continue
		}
		touch(next, step)
		done += step
		next += step
		wait = minWait
	}
	return done
}
