//go:build linux

package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/adapters/sandboxtest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// childModeEnv makes the test binary, re-run, act as a server child (see
// TestMain) rather than run tests.
const childModeEnv = "ARROWHEAD_SANDBOX_TEST_CHILD"

// openDescriptorsCode prints the descriptors above 2 a command holds.
const openDescriptorsCode = `import os, json
fds = []
for fd in range(3, 1024):
    try:
        os.fstat(fd)
        fds.append(fd)
    except OSError:
        pass
print(json.dumps(fds))
`

// fdChildReport is what the descriptor child prints.
type fdChildReport struct {
	// Inherited are the descriptors 3, 4 and 5 as the child received them:
	// open and not close-on-exec, so the test is not vacuous.
	Inherited []bool `json:"inherited"`
	Seen      []int  `json:"seen"`
	Stderr    string `json:"stderr"`
	Err       string `json:"err"`
	// Unavailable is true when the runner cannot run on this host.
	Unavailable bool `json:"unavailable"`
}

// runDescriptorChild is the child's side: a server that inherited three
// descriptors without close-on-exec runs a command that lists its own.
func runDescriptorChild(runner, workdir string) int {
	var rep fdChildReport
	for fd := 3; fd <= 5; fd++ {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		rep.Inherited = append(rep.Inherited, err == nil && flags&unix.FD_CLOEXEC == 0)
	}
	r, err := sandbox.New(context.Background(), sandbox.Config{Runner: runner, Workdir: workdir})
	if err == nil {
		var res ports.RunResult
		res, err = r.Run(context.Background(), ports.RunRequest{
			Argv: append(slices.Clone(sandboxtest.Python), openDescriptorsCode), Limits: sandboxtest.Limits})
		if err == nil {
			rep.Stderr = string(res.Stderr)
			err = json.Unmarshal(res.Stdout, &rep.Seen)
		}
	}
	if err != nil {
		rep.Err, rep.Unavailable = err.Error(), errors.Is(err, sandbox.ErrUnavailable)
	}
	_ = json.NewEncoder(os.Stdout).Encode(rep)
	return 0
}

// TestInheritedDescriptorsDoNotReachCommands starts a server child that
// inherits a regular file, a listening socket and a pipe (as from a
// supervisor, socket activation or an MCP client), and checks that a
// command sees none of them.
func TestInheritedDescriptorsDoNotReachCommands(t *testing.T) {
	sandboxtest.RequirePython(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root only"), 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sock, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()

	for _, runner := range []string{ports.RunnerSubprocess, ports.RunnerBubblewrap} {
		t.Run(runner, func(t *testing.T) {
			skipRefusedSubprocess(t, runner)
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(self, "-test.run=^$")
			cmd.Env = append(os.Environ(), childModeEnv+"=fds:"+runner+":"+sandboxtest.Workdir(t))
			cmd.ExtraFiles = []*os.File{file, sock, pr}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("child: %v (%s)", err, out)
			}
			var rep fdChildReport
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatalf("child said %q", out)
			}
			if !slices.Equal(rep.Inherited, []bool{true, true, true}) {
				t.Fatalf("the child did not inherit the three descriptors: %v", rep.Inherited)
			}
			if rep.Unavailable {
				sandboxtest.SkipOrFail(t, "%s", rep.Err)
			}
			if rep.Err != "" {
				t.Fatal(rep.Err)
			}
			if len(rep.Seen) != 0 {
				t.Fatalf("the command holds descriptors %v (stderr %q)", rep.Seen, rep.Stderr)
			}
		})
	}
}

// childMain dispatches a re-run test binary acting as a server child;
// mode is kind:runner:workdir.
func childMain(mode string) int {
	parts := strings.SplitN(mode, ":", 3)
	if len(parts) != 3 {
		return 2
	}
	switch parts[0] {
	case "fds":
		return runDescriptorChild(parts[1], parts[2])
	case "tenants":
		return runTenantChild(parts[1], parts[2])
	}
	return 2
}
