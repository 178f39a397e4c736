//go:build linux

package prefault

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// resident counts the pages of b the kernel has mapped (mincore).
func resident(t *testing.T, b []byte) int {
	t.Helper()
	vec := make([]byte, (len(b)+pageSize-1)/pageSize)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// region maps size bytes of fresh anonymous memory, step aligned, and
// returns it with its address.
func region(t *testing.T, size int) ([]byte, uintptr) {
	t.Helper()
	raw, err := syscall.Mmap(-1, 0, size+step, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(raw) })
	base := uintptr(unsafe.Pointer(&raw[0]))
	off := int((base+step-1)&^(step-1) - base)
	return raw[off : off+size], base + uintptr(off)
}

func populateSupported(t *testing.T) {
	t.Helper()
	b, addr := region(t, step)
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, addr, step, madvPopulateWrite); errno != 0 {
		t.Skipf("the kernel refuses MADV_POPULATE_WRITE (%v): the helper does nothing here", errno)
	}
	_ = b
}

func TestWalkMapsEveryPageAndKeepsContents(t *testing.T) {
	populateSupported(t)
	b, addr := region(t, 8*step)
	b[3*step+5] = 42 // a value already there must survive
	before := resident(t, b)
	var stop atomic.Bool
	if got := walk(addr, uintptr(len(b)), time.Second, &stop); got != uintptr(len(b)) {
		t.Fatalf("walk covered %d bytes, want %d", got, len(b))
	}
	if n, want := resident(t, b), len(b)/pageSize; n != want {
		t.Fatalf("%d of %d pages resident after the walk (%d before)", n, want, before)
	}
	if b[3*step+5] != 42 {
		t.Fatal("the walk changed the memory it mapped")
	}
}

// The heap's next chunk is reserved without access until the runtime maps
// it: the walk waits there, then stops at its deadline without touching it
// (a read of an inaccessible page would crash the test).
func TestWalkWaitsAtInaccessibleMemory(t *testing.T) {
	populateSupported(t)
	b, addr := region(t, 4*step)
	if err := syscall.Mprotect(b[2*step:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	start := time.Now()
	got := walk(addr, uintptr(len(b)), 30*time.Millisecond, &stop)
	if got != 2*step {
		t.Fatalf("walk covered %d bytes, want the %d before the inaccessible part", got, 2*step)
	}
	if waited := time.Since(start); waited < 30*time.Millisecond {
		t.Fatalf("walk gave up after %v, before its deadline", waited)
	}
}

// Memory made accessible while the walk waits is walked: the runtime
// mapping the heap's next chunk.
func TestWalkContinuesWhenMemoryIsMapped(t *testing.T) {
	populateSupported(t)
	b, addr := region(t, 4*step)
	if err := syscall.Mprotect(b[2*step:], syscall.PROT_NONE); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	done := make(chan uintptr, 1)
	go func() { done <- walk(addr, uintptr(len(b)), 5*time.Second, &stop) }()
	time.Sleep(20 * time.Millisecond)
	if err := syscall.Mprotect(b[2*step:], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		if got != uintptr(len(b)) {
			t.Fatalf("walk covered %d bytes, want %d", got, len(b))
		}
	case <-time.After(3 * time.Second):
		t.Fatal("walk did not continue once the memory was mapped")
	}
}

func TestWalkStops(t *testing.T) {
	populateSupported(t)
	_, addr := region(t, 4*step)
	var stop atomic.Bool
	stop.Store(true)
	if got := walk(addr, 4*step, time.Second, &stop); got != 0 {
		t.Fatalf("a stopped walk covered %d bytes", got)
	}
}

// The helper init started walks the test binary's own heap and ends at
// Stop.
func TestHelperWalksTheHeapUntilStop(t *testing.T) {
	populateSupported(t)
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one processor: init starts no helper")
	}
	Stop()
	deadline := time.Now().Add(3 * time.Second)
	for walked.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the helper had walked nothing, or did not end at Stop")
		}
		time.Sleep(time.Millisecond)
	}
}
