// Package startgc holds the garbage collector off while the arrowhead
// command starts, until Resume.
//
// Package initialisation allocates about 6 MB (JSON Schema meta-schemas in
// mcp-go's validator, the SQL parser's tables and the CA bundle its error
// package parses, settings and catalog tables), and serving set-up more.
// At the default pacing (a first goal of 4 MB) that is two collections
// during initialisation and a third racing the client's first requests: a
// few milliseconds of the stdio start-up budget. Held off, one collection
// after start-up does the same work off the path of the first answer.
//
// While held, a 64 MiB soft memory limit stands in for the pacing, so a
// server that is busy from its first second still collects before it grows
// past it. The hold starts when this package initialises, which the linker
// schedules once runtime/debug is initialised: before most third-party
// packages, not before all. GOGC or GOMEMLIMIT set in the environment wins:
// then nothing is changed.
package startgc

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
)

// heldLimit is the soft memory limit while the collector is held off.
const heldLimit = 64 << 20

var (
	held   bool
	resume sync.Once
)

func init() {
	_, gogc := os.LookupEnv("GOGC")
	_, limit := os.LookupEnv("GOMEMLIMIT")
	if gogc || limit {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(heldLimit)
	held = true
}

// Resume restores the default pacing (GOGC=100, no memory limit) if init
// held the collector off. It is safe to call more than once and from any
// goroutine; only the first call acts.
func Resume() {
	resume.Do(func() {
		if held {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
		}
	})
}
