//go:build linux

package main

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// TestReleasedStartupPagesKeepTheProcessWhole: after releaseStartupPages
// the process still calls into libc for the first time. In a dynamically
// linked (cgo) build the page the dynamic linker relocated and then made
// read-only (RELRO: .dynamic, .got and the head of .got.plt with the lazy
// resolver's address) is a private, dirty mapping of the executable; the
// release once discarded it, and the next first-time libc call jumped to
// address 0. The work runs in a child process
// (this test binary, re-run) so a crash fails the test instead of the run.
func TestReleasedStartupPagesKeepTheProcessWhole(t *testing.T) {
	if os.Getenv("ARROWHEAD_TEST_RELEASE_CHILD") == "1" {
		releaseStartupPages()
		// Many one-page spans: the runtime's span list outgrows its
		// first block and frees it, the first munmap of the process,
		// whose lazily bound libc entry goes through the resolver
		// pointer in the relocated page.
		var keep [][]byte
		for range 20000 {
			keep = append(keep, make([]byte, 8<<10))
		}
		runtime.KeepAlive(keep)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestReleasedStartupPagesKeepTheProcessWhole$")
	cmd.Env = append(os.Environ(), "ARROWHEAD_TEST_RELEASE_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the process did not survive its released start-up pages: %v\n%.2000s", err, out)
	}
}
