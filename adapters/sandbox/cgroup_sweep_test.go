//go:build linux

package sandbox_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/ports"
)

// TestStartupSweepsGroupsOfCrashedServers leaves what a crashed server
// leaves (a run group with a process still in it, its owner gone), a
// group of a server still running (this one) and an empty group of an
// older server without an owner in its name, then starts detection again:
// the crashed server's group is gone and its process killed, the empty
// one is gone, the running server's group is untouched.
func TestStartupSweepsGroupsOfCrashedServers(t *testing.T) {
	scope, parents := sandbox.DetectCgroups()
	if scope == ports.LimitScopeProcess {
		// A host without delegated cgroups is a supported set-up (per-
		// process limits), not a missing test service.
		t.Skip("this host gives the server no cgroup of its own to make run groups in")
	}
	// This process's own pid with another start time: a server that
	// crashed and whose pid was reused.
	dead := sandbox.CgroupPrefix + strconv.Itoa(os.Getpid()) + ".1-0000000000000001"
	live := sandbox.CgroupPrefix + sandbox.OwnerTag() + "-0000000000000002"
	legacy := sandbox.CgroupPrefix + "0000000000000003"
	for _, p := range parents {
		for _, name := range []string{dead, live, legacy} {
			if err := os.Mkdir(filepath.Join(p, name), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { _ = os.Remove(filepath.Join(p, live)) })
	}
	orphan := exec.Command("sleep", "300")
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orphan.Process.Kill() })
	for _, p := range parents {
		if err := os.WriteFile(filepath.Join(p, dead, "cgroup.procs"), []byte(strconv.Itoa(orphan.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
	}

	sandbox.DetectCgroups()
	for _, p := range parents {
		for name, want := range map[string]bool{dead: false, live: true, legacy: false} {
			if _, err := os.Stat(filepath.Join(p, name)); (err == nil) != want {
				t.Errorf("%s in %s: present %v, want %v", name, p, err == nil, want)
			}
		}
	}
	done := make(chan error, 1)
	go func() { done <- orphan.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("the crashed server's process ended with %v, want killed", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the crashed server's process still runs")
	}
}
