package wire

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
)

// TestModCacheServable: a root server serves a module cache whose own top
// directories the sandbox uid may read, whatever their parents (a cache
// under /root, 0700); one it may not read is refused, so start-up warns.
func TestModCacheServable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the layout rules differ for a root server; this checks those")
	}
	closed := filepath.Join(t.TempDir(), "root")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	mc := filepath.Join(closed, "go", "pkg", "mod")
	if err := os.MkdirAll(filepath.Join(mc, "cache", "download"), 0o755); err != nil {
		t.Fatal(err)
	}
	id := sandbox.NobodyID
	if !modCacheServable(mc, id, id) {
		t.Error("a readable cache under a closed parent is refused")
	}
	if err := os.Chmod(filepath.Join(mc, "cache", "download"), 0o700); err != nil {
		t.Fatal(err)
	}
	if modCacheServable(mc, id, id) {
		t.Error("a cache whose downloads the sandbox uid cannot read is served")
	}
	if err := os.Chmod(filepath.Join(mc, "cache", "download"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(mc, 0o750); err != nil {
		t.Fatal(err)
	}
	if modCacheServable(mc, id, id) {
		t.Error("a cache the sandbox uid cannot list is served")
	}
	if modCacheServable(filepath.Join(closed, "missing"), id, id) {
		t.Error("a missing cache is served")
	}
}
