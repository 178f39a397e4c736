package startgc

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

func TestHeldUntilResume(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set: init leaves the collector alone")
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT is set: init leaves the collector alone")
	}
	if !held {
		t.Fatal("init did not hold the collector off")
	}
	// Reading the limit does not change it.
	if lim := debug.SetMemoryLimit(-1); lim != heldLimit {
		t.Fatalf("memory limit while held = %d, want %d", lim, heldLimit)
	}
	Resume()
	if pct := debug.SetGCPercent(100); pct != 100 {
		t.Errorf("GC percent after Resume = %d, want 100", pct)
	}
	if lim := debug.SetMemoryLimit(-1); lim != math.MaxInt64 {
		t.Errorf("memory limit after Resume = %d, want none", lim)
	}
	// Later calls do nothing.
	debug.SetGCPercent(50)
	Resume()
	if pct := debug.SetGCPercent(100); pct != 50 {
		t.Errorf("a second Resume reset the GC percent to %d", pct)
	}
}
