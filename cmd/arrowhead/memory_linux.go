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
// afterwards. MADV_DONTNEED on a private file mapping only unmaps clean page
// cache pages; whatever the server needs next is faulted back in from the
// page cache. Failure is harmless and ignored.
func releaseStartupPages() {
	// Start-up garbage (catalog building, schema rendering) goes back to
	// the OS too.
	debug.FreeOSMemory()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// address perms offset dev inode pathname
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
	}
}
