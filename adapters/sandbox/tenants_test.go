//go:build linux

package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/adapters/sandboxtest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// tenantA leaves files in every shared writable place and in its scratch,
// then stays alive while tenant B looks.
const tenantA = `import os, time
for d in ("/tmp", "/var/tmp", "/dev/shm", "."):
    try:
        open(os.path.join(d, "tenant-a-left-this"), "w").write("a's data")
    except OSError:
        pass
print("left", flush=True)
time.sleep(3)
`

// tenantBCode looks for tenant A's files and for the server's own.
const tenantBCode = `import os, json, sys
base = sys.argv[1]
def can_read(p):
    try:
        open(p).read()
        return True
    except OSError:
        return False
def can_write(p):
    try:
        open(p, "w").write("b")
        return True
    except OSError:
        return False
seen = []
for d in ("/tmp", "/var/tmp", "/dev/shm"):
    try:
        seen += [d + "/" + n for n in os.listdir(d) if "tenant-a" in n]
    except OSError:
        pass
print(json.dumps({"seen": seen,
  "scratch_root": os.path.exists(base + "/scratch"),
  "data": can_read(base + "/data/memories.db"), "repo": can_read(base + "/repo/main.go"),
  "home": can_read(base + "/home/.netrc"), "corpus": can_read(base + "/corpus/doc.md"),
  "write_repo": can_write(base + "/repo/planted.go"), "write_data": can_write(base + "/data/planted"),
  "write_home": can_write(base + "/home/planted")}))
`

// tenantReport is what the tenant child prints.
type tenantReport struct {
	Unavailable bool   `json:"unavailable"`
	Err         string `json:"err"`
	A           string `json:"a"`
	B           string `json:"b"`
	BStderr     string `json:"b_stderr"`
	Receipt     ports.Enforcement
}

// runTenantChild is a server whose own files (an embedded store, a
// repository, a corpus, $HOME) live under base, serving two tenants at
// once.
func runTenantChild(runner, base string) int {
	var rep tenantReport
	defer func() { _ = json.NewEncoder(os.Stdout).Encode(&rep) }()
	for rel, body := range map[string]string{"data/memories.db": "tenant memories", "repo/main.go": "package main",
		"corpus/doc.md": "# doc", "home/.netrc": "machine x password y"} {
		p := filepath.Join(base, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			rep.Err = err.Error()
			return 0
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			rep.Err = err.Error()
			return 0
		}
	}
	r, err := sandbox.New(context.Background(), sandbox.Config{Runner: runner, Workdir: filepath.Join(base, "scratch")})
	if err != nil {
		rep.Err, rep.Unavailable = err.Error(), errors.Is(err, sandbox.ErrUnavailable)
		return 0
	}
	var wg sync.WaitGroup
	var resA ports.RunResult
	var errA error
	wg.Add(1)
	go func() {
		defer wg.Done()
		resA, errA = r.Run(context.Background(), ports.RunRequest{Argv: append(slices.Clone(sandboxtest.Python), tenantA), Limits: sandboxtest.Limits})
	}()
	time.Sleep(time.Second)
	resB, errB := r.Run(context.Background(), ports.RunRequest{Argv: append(slices.Clone(sandboxtest.Python), tenantBCode, base), Limits: sandboxtest.Limits})
	wg.Wait()
	if err := errors.Join(errA, errB); err != nil {
		rep.Err = err.Error()
		return 0
	}
	rep.A, rep.B, rep.BStderr, rep.Receipt = string(resA.Stdout), string(resB.Stdout), string(resB.Stderr), resB.Enforced
	return 0
}

// TestTenantsAreSeparated runs a server, as root and as an ordinary user
// (uid 65534 through setpriv when the test runs as root), serving two
// tenants at once: the second must see nothing the first left in /tmp,
// /var/tmp, /dev/shm or its scratch, and must neither read nor write the
// server's store, repository, corpus or home.
func TestTenantsAreSeparated(t *testing.T) {
	sandboxtest.RequirePython(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	modes := []string{"ordinary-user"}
	if os.Geteuid() == 0 {
		modes = append(modes, "root")
	}
	for _, runner := range []string{ports.RunnerSubprocess, ports.RunnerBubblewrap} {
		for _, mode := range modes {
			t.Run(runner+"/"+mode, func(t *testing.T) {
				// Under a directory every uid may traverse, owned by the
				// server's uid.
				outer := filepath.Dir(sandboxtest.Workdir(t))
				base := filepath.Join(outer, "server")
				if err := os.Mkdir(base, 0o755); err != nil {
					t.Fatal(err)
				}
				bin := filepath.Join(outer, "server.test")
				copyFile(t, self, bin)
				var cmd *exec.Cmd
				if mode == "ordinary-user" && os.Geteuid() == 0 {
					if err := os.Chown(base, sandbox.NobodyID, sandbox.NobodyID); err != nil {
						t.Fatal(err)
					}
					cmd = exec.Command("/usr/bin/setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", bin, "-test.run=^$")
				} else {
					cmd = exec.Command(bin, "-test.run=^$")
				}
				cmd.Env = []string{childModeEnv + "=tenants:" + runner + ":" + base, "HOME=" + filepath.Join(base, "home"), "PATH=/usr/bin:/bin"}
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("child: %v (%s)", err, out)
				}
				var rep tenantReport
				if err := json.Unmarshal(out, &rep); err != nil {
					t.Fatalf("child said %q", out)
				}
				asRoot := mode == "root"
				if rep.Unavailable && runner == ports.RunnerSubprocess && !asRoot {
					// It cannot separate a non-root server from its
					// commands, and says so at start.
					if !strings.Contains(rep.Err, "own uid") {
						t.Fatalf("the refusal does not say why: %s", rep.Err)
					}
					return
				}
				if rep.Unavailable {
					sandboxtest.SkipOrFail(t, "%s", rep.Err)
				}
				if rep.Err != "" {
					t.Fatal(rep.Err)
				}
				if rep.A != "left\n" {
					t.Fatalf("tenant A did not run: %q", rep.A)
				}
				var b struct {
					Seen        []string
					ScratchRoot bool `json:"scratch_root"`
					Data, Repo  bool
					Home        bool
					Corpus      bool
					WriteRepo   bool `json:"write_repo"`
					WriteData   bool `json:"write_data"`
					WriteHome   bool `json:"write_home"`
				}
				if err := json.Unmarshal([]byte(rep.B), &b); err != nil {
					t.Fatalf("tenant B said %q (%s)", rep.B, rep.BStderr)
				}
				if len(b.Seen) != 0 {
					t.Errorf("tenant B saw tenant A's files %v", b.Seen)
				}
				if b.ScratchRoot && rep.Receipt.Filesystem != ports.FilesystemHost {
					t.Error("tenant B sees the scratch root under a confined view")
				}
				if b.WriteRepo || b.WriteData || b.WriteHome {
					t.Errorf("tenant B wrote the server's files: repo %v data %v home %v", b.WriteRepo, b.WriteData, b.WriteHome)
				}
				if rep.Receipt.Filesystem != ports.FilesystemHost && (b.Data || b.Repo || b.Home || b.Corpus) {
					t.Errorf("under a confined view tenant B read the server's files: %+v", b)
				}
				if !asRoot && (b.Data || b.Repo || b.Home || b.Corpus) {
					t.Errorf("tenant B read a non-root server's files: %+v", b)
				}
				if rep.Receipt.SeparateUser != asRoot {
					t.Errorf("receipt separate_user %v for a server running as %s", rep.Receipt.SeparateUser, mode)
				}
				for _, d := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
					if _, err := os.Stat(filepath.Join(d, "tenant-a-left-this")); err == nil {
						_ = os.Remove(filepath.Join(d, "tenant-a-left-this"))
						t.Errorf("tenant A's file persists in the host's %s", d)
					}
				}
			})
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(fmt.Errorf("copying the test binary: %w", err))
	}
}
