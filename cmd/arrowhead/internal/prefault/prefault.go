// Package prefault maps the heap's next pages from a second thread while
// the arrowhead command starts, so the thread running package
// initialisation and the server's assembly finds them mapped.
//
// Start-up allocates about 7 MB with the collector held off
// (cmd/arrowhead/internal/startgc), every byte of it on pages the process
// has never touched, and the first touch of a page is a fault: about 2 µs
// on hardware, 15-20 µs on the virtual machines this server often runs
// on, where the hypervisor builds its own page-table entry as well. That
// was a third of stdio start-up there. Start-up has a second core to
// spare; from it, this package asks the kernel to populate the heap's
// pages (madvise MADV_POPULATE_WRITE) just ahead of the allocator and
// reads each one once, which builds the hypervisor's entry too.
//
// The heap grows upward from the address of the first objects, in chunks
// the runtime maps read-write as it needs them, so the helper walks
// upward from an object this package allocates and waits while the next
// chunk is not yet mapped (the kernel refuses to populate it). It never
// writes: populating keeps a page's contents, and the read is of memory
// the kernel has just confirmed is mapped. It stops at Stop, after
// maxRun, or maxAhead above where it began. Where any of this does not
// apply (not Linux, a kernel before 5.14, a single processor) it does
// nothing.
package prefault

import "sync/atomic"

// stopped ends the helper (Stop).
var stopped atomic.Bool

// Stop ends the helper: start-up is over. It is safe to call more than
// once and from any goroutine.
func Stop() { stopped.Store(true) }
