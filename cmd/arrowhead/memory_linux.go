//go:build linux

package main

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
)

// releaseStartupPages drops this process's mappings of its own executable
// from its page tables once initialization is done. Package initialisation
// touches code all over a large binary, and the kernel's fault-around maps
// 64 KiB of neighbours at every touch, so tens of megabytes of clean,
// file-backed pages stay resident although only a small working set is used
// afterwards. MADV_DONTNEED on a private file mapping discards its pages,
// and whatever the server needs next is faulted back in from the file.
// That is only harmless for pages still identical to the file: a
// read-only mapping can hold pages the dynamic linker wrote before it
// made them read-only (a cgo build's RELRO page: .dynamic, .got and the
// lazy resolver's address), and discarding those sends the next
// first-time libc call to address 0. So a mapping is released only when
// /proc/self/smaps counts no anonymous (copied-on-write) page in it.
// Failure is harmless and ignored.
func releaseStartupPages() {
	// Start-up garbage (catalog building, schema rendering) goes back to
	// the OS too.
	debug.FreeOSMemory()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return
	}
	defer f.Close()
	// A mapping's header line is followed by its "Key: value kB" lines;
	// the candidate is released once they showed it holds nothing
	// anonymous.
	var start, end uint64
	candidate, clean := false, false
	release := func() {
		if candidate && clean {
			_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
		}
		candidate = false
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if fields[0] == "Anonymous:" {
			clean = len(fields) >= 2 && fields[1] == "0"
			continue
		}
		if strings.HasSuffix(fields[0], ":") {
			continue // another of the mapping's counters
		}
		// address perms offset dev inode pathname
		release()
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		s, err1 := strconv.ParseUint(lo, 16, 64)
		e, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || e <= s {
			continue
		}
		start, end, candidate, clean = s, e, true, false
	}
	release()
}
