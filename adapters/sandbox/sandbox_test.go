//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/adapters/sandboxtest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Loopback ports the network probe may use.
const portLow, portHigh = 56790, 56799

func contract(t *testing.T, runner string) {
	sandboxtest.RequirePython(t)
	skipRefusedSubprocess(t, runner)
	dir := sandboxtest.Workdir(t)
	r, err := sandbox.New(context.Background(), sandbox.Config{Runner: runner, Workdir: dir})
	if errors.Is(err, sandbox.ErrUnavailable) {
		// No bwrap, or no user namespaces for an unprivileged server.
		sandboxtest.SkipOrFail(t, "%v", err)
	}
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	sandboxtest.Run(t, r, sandboxtest.Config{Workdir: dir, RunPrefix: "run-", PortLow: portLow, PortHigh: portHigh})
}

// skipRefusedSubprocess skips a subprocess test under a non-root server,
// where the runner is refused by design (TestTenantsAreSeparated checks
// the refusal).
func skipRefusedSubprocess(t *testing.T, runner string) {
	t.Helper()
	if runner == ports.RunnerSubprocess && os.Geteuid() != 0 {
		t.Skip("the subprocess runner is refused for a non-root server")
	}
}

func TestSubprocessContract(t *testing.T) { contract(t, ports.RunnerSubprocess) }

func TestBubblewrapContract(t *testing.T) { contract(t, ports.RunnerBubblewrap) }

// TestBubblewrapContractWithoutCgroups runs the default runner as on a host
// (or for a server) without a cgroup it may use: per-process limits and
// sized tmpfs mounts only, and a receipt that says so.
func TestBubblewrapContractWithoutCgroups(t *testing.T) {
	defer sandbox.SetCgroupRoot(filepath.Join(t.TempDir(), "no-cgroups"))()
	contract(t, ports.RunnerBubblewrap)
}

func TestStartupRefusesMissingBinaries(t *testing.T) {
	for _, tc := range []struct {
		runner, prlimit, bwrap string
	}{
		{ports.RunnerBubblewrap, "/usr/bin/prlimit", "/nonexistent/bwrap"},
		{ports.RunnerBubblewrap, "/nonexistent/prlimit", "/usr/bin/bwrap"},
	} {
		restore := sandbox.SetBinaries(tc.prlimit, tc.bwrap)
		_, err := sandbox.New(context.Background(), sandbox.Config{Runner: tc.runner, Workdir: sandboxtest.Workdir(t)})
		restore()
		if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "/nonexistent/") {
			t.Errorf("%s without %s %s: err %v, want ErrUnavailable naming the binary", tc.runner, tc.prlimit, tc.bwrap, err)
		}
	}
}

func TestStartupRefusesUnusableWorkdir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"", file, filepath.Join(t.TempDir(), "a:b")} {
		if _, err := sandbox.New(context.Background(), sandbox.Config{Runner: ports.RunnerSubprocess, Workdir: dir}); !errors.Is(err, sandbox.ErrWorkdir) {
			t.Errorf("workdir %q: err %v, want ErrWorkdir", dir, err)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("the unreachable-scratch probe needs a root server")
	}
	// Under a directory only root may enter, the sandbox uid cannot reach
	// its scratch: the probe must say so at start-up.
	private := filepath.Join(t.TempDir(), "scratch")
	for _, runner := range []string{ports.RunnerSubprocess, ports.RunnerBubblewrap} {
		_, err := sandbox.New(context.Background(), sandbox.Config{Runner: runner, Workdir: private})
		if !errors.Is(err, sandbox.ErrWorkdir) {
			t.Errorf("%s with an unreachable scratch root: err %v, want ErrWorkdir", runner, err)
		}
	}
}

func TestStartupRemovesAbandonedScratch(t *testing.T) {
	dir := sandboxtest.Workdir(t)
	abandoned, live := filepath.Join(dir, "run-abandoned"), filepath.Join(dir, "run-live")
	for _, d := range []string{abandoned, live} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// A live run elsewhere holds its directory's lock.
	f, err := os.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	_, err = sandbox.New(context.Background(), sandbox.Config{Runner: ports.RunnerSubprocess, Workdir: dir})
	if errors.Is(err, sandbox.ErrUnavailable) {
		sandboxtest.SkipOrFail(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abandoned); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an abandoned scratch directory survived start-up: %v", err)
	}
	if _, err := os.Stat(filepath.Join(live, "sub")); err != nil {
		t.Errorf("a live run's scratch directory was removed: %v", err)
	}
}

func TestAutoChoosesTheConfinedRunnerOrRefuses(t *testing.T) {
	sandboxtest.RequirePython(t)
	r, err := sandbox.New(context.Background(), sandbox.Config{Runner: sandbox.RunnerAuto, Workdir: sandboxtest.Workdir(t)})
	if errors.Is(err, sandbox.ErrUnavailable) {
		sandboxtest.SkipOrFail(t, "%v", err)
	}
	if err != nil || r.Name() != ports.RunnerBubblewrap {
		t.Fatalf("auto chose %v (err %v), want bubblewrap", r, err)
	}
	// Without bwrap nothing confines a command's writes for every server:
	// auto refuses, saying why, rather than fall back.
	defer sandbox.SetBinaries("/usr/bin/prlimit", "/nonexistent/bwrap")()
	_, err = sandbox.New(context.Background(), sandbox.Config{Runner: sandbox.RunnerAuto, Workdir: sandboxtest.Workdir(t)})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "no confined runner") || !strings.Contains(err.Error(), "/nonexistent/bwrap") {
		t.Fatalf("auto without bwrap: err %v", err)
	}
}
