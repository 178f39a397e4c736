// Package tmpfs gives tests a small file system of their own, to fill:
// a tmpfs of a given size, mounted on a new directory and unmounted when
// the test ends. Mounting needs root (CI runs as root); elsewhere the
// test is skipped with a loud message, or failed when
// ARROWHEAD_REQUIRE_INTEGRATION=1.
package tmpfs

import (
	"os"
	"os/exec"
	"testing"
)

// RequireEnv turns a missing capability into a failure.
const RequireEnv = "ARROWHEAD_REQUIRE_INTEGRATION"

// Mount mounts a tmpfs of size (mount(8)'s size option: "2m") on a new
// directory and returns it.
func Mount(t testing.TB, size string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "arrowhead-tmpfs-")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput()
	if err != nil {
		_ = os.Remove(dir)
		msg := "mounting a tmpfs (needs root and mount(8)): " + err.Error() + ": " + string(out)
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("INTEGRATION REQUIRED (%s=1) but unavailable: %s", RequireEnv, msg)
		}
		t.Skipf("\n*** SKIPPING %s: %s\n*** Set %s=1 to make this a failure.", t.Name(), msg, RequireEnv)
	}
	t.Cleanup(func() {
		// Lazily, so a file a failed test left open does not keep it.
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("unmounting the test's tmpfs: %v: %s", err, out)
			return
		}
		_ = os.Remove(dir)
	})
	return dir
}
