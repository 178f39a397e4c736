//go:build linux && (amd64 || arm64)

package prefault

// touch reads one byte of each page in [addr, addr+n), which must be
// mapped. It is written in assembly so no Go pointer ever holds an address
// the collector would not recognise as an object.
func touch(addr, n uintptr)
