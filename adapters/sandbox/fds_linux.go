package sandbox

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// errDescriptors: the server's inherited descriptors could not be marked
// close-on-exec, so a command might see them.
var errDescriptors = errors.New("the server's open descriptors could not be kept from the command")

// sealDescriptors marks every descriptor above 2 close-on-exec, so nothing
// the server inherited (a supervisor's file, a socket-activation listener,
// the client's extra pipes) reaches a command, bwrap or the engine client.
// Go opens its own descriptors close-on-exec; inherited ones are not, and a
// library linked into the server may open more, so this runs before every
// start rather than once. Go has no hook between fork and exec, and the
// flag is harmless to the server itself: it only means "not across exec",
// and a descriptor handed to a child on purpose (ExtraFiles) is dup'ed onto
// a fresh number in the child, which clears the flag there.
func sealDescriptors() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	// Kernels before 5.11: walk the table.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return errDescriptors
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			continue // the directory's own descriptor, closed meanwhile
		}
		if flags&unix.FD_CLOEXEC == 0 {
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err != nil {
				return errDescriptors
			}
		}
	}
	return nil
}
