// Package sandboxtest is the contract suite of ports.Runner: one set of
// hostile commands every runner must survive (endless loops, fork bombs,
// memory hogs, floods of output, escaping background children, reading the
// environment, trying to be root), and a check of every claim in a run's
// enforcement receipt against what a command observes from inside. A
// receipt that claims no network must mean a connection fails; one that
// claims the host's network must mean it succeeds. The commands are Python
// (python3 on the sandbox PATH).
package sandboxtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Config describes the runner under test.
type Config struct {
	// Workdir is the runner's scratch root, checked to be left empty of run
	// directories.
	Workdir string
	// RunPrefix names the run directories under Workdir.
	RunPrefix string
	// PortLow and PortHigh bound the loopback ports the network probe may
	// listen on.
	PortLow, PortHigh int
}

// Limits are ample for the well-behaved commands of the suite.
var Limits = ports.RunLimits{
	Wall: 20 * time.Second, CPUSeconds: 10, MemoryBytes: 512 << 20, Processes: 64,
	FileBytes: 16 << 20, OpenFiles: 256, OutputBytes: 1 << 20,
}

// Python is the interpreter's argv prefix: isolated mode, code from -c.
var Python = []string{"python3", "-I", "-c"}

// Run runs the contract suite against r.
func Run(t *testing.T, r ports.Runner, cfg Config) {
	if cfg.Workdir == "" || cfg.RunPrefix == "" || cfg.PortLow <= 0 || cfg.PortHigh < cfg.PortLow {
		t.Fatal("sandboxtest: Config needs the workdir, the run prefix and a port range")
	}
	s := suite{r: r, cfg: cfg}
	t.Run("OutputAndExitCode", s.outputAndExitCode)
	t.Run("Stdin", s.stdin)
	t.Run("ScratchIsFreshAndRemoved", s.scratchIsFreshAndRemoved)
	t.Run("StageErrorAborts", s.stageErrorAborts)
	t.Run("UnknownProgram", s.unknownProgram)
	t.Run("WallTimeoutKills", s.wallTimeoutKills)
	t.Run("EndlessLoopHitsCPULimit", s.endlessLoop)
	t.Run("MemoryHog", s.memoryHog)
	t.Run("ForkBomb", s.forkBomb)
	t.Run("HugeOutputIsCutAndKilled", s.hugeOutput)
	t.Run("EndlessOutput", s.endlessOutput)
	t.Run("BackgroundChildDies", s.backgroundChild)
	t.Run("Cancellation", s.cancellation)
	t.Run("EnvironmentIsScrubbed", s.environment)
	t.Run("NotRoot", s.notRoot)
	t.Run("ReceiptLimitsHold", s.receiptLimits)
	t.Run("ReceiptNetworkHolds", s.receiptNetwork)
	t.Run("ReceiptFilesystemHolds", s.receiptFilesystem)
	t.Run("Concurrent", s.concurrent)
	t.Run("PlacementFields", s.placement)
	t.Run("MountAtBehindAClosedDirectory", s.mountAt)
	t.Run("MalformedPlacementRefused", s.malformedPlacement)
	t.Run("ForkedMemoryBalloon", s.forkedMemoryBalloon)
	t.Run("StorageBalloons", s.storageBalloons)
}

type suite struct {
	r   ports.Runner
	cfg Config
}

// python runs code under lim.
func (s suite) python(t *testing.T, code string, lim ports.RunLimits) ports.RunResult {
	t.Helper()
	res, err := s.r.Run(context.Background(), ports.RunRequest{Argv: append(slices.Clone(Python), code), Limits: lim})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	s.checkReceipt(t, res, lim)
	return res
}

// checkReceipt checks what every receipt must say.
func (s suite) checkReceipt(t *testing.T, res ports.RunResult, lim ports.RunLimits) {
	t.Helper()
	e := res.Enforced
	if res.Runner != s.r.Name() || res.Runner == "" {
		t.Errorf("result runner %q, runner name %q", res.Runner, s.r.Name())
	}
	if e.Environment != "scrubbed" {
		t.Errorf("receipt environment %q, want scrubbed", e.Environment)
	}
	if e.Network != ports.NetworkHost && e.Network != ports.NetworkNone {
		t.Errorf("receipt network %q", e.Network)
	}
	switch e.Filesystem {
	case ports.FilesystemHost, ports.FilesystemSystemReadOnly, ports.FilesystemImageReadOnly:
	default:
		t.Errorf("receipt filesystem %q", e.Filesystem)
	}
	switch e.LimitScope {
	case ports.LimitScopeCgroupV2, ports.LimitScopeCgroupV1, ports.LimitScopeProcess, ports.LimitScopeContainer:
	default:
		t.Errorf("receipt limit scope %q", e.LimitScope)
	}
	if os.Geteuid() == 0 && (e.UID == 0 || !e.SeparateUser) {
		t.Errorf("the server is root but the receipt says uid %d, separate %v", e.UID, e.SeparateUser)
	}
	l := e.Limits
	if l.WallSeconds != lim.Wall.Seconds() || l.OutputBytes != lim.OutputBytes {
		t.Errorf("receipt wall %v output %d, requested %v %d", l.WallSeconds, l.OutputBytes, lim.Wall, lim.OutputBytes)
	}
	if l.CPUSeconds <= 0 || l.CPUSeconds > lim.CPUSeconds || l.MemoryBytes <= 0 || l.MemoryBytes > lim.MemoryBytes ||
		l.Processes <= 0 || l.Processes > lim.Processes || l.FileBytes <= 0 || l.FileBytes > lim.FileBytes ||
		l.OpenFiles <= 0 || l.OpenFiles > lim.OpenFiles {
		t.Errorf("receipt limits %+v are not within the requested %+v", l, lim)
	}
}

func (s suite) outputAndExitCode(t *testing.T) {
	res := s.python(t, "import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)", Limits)
	if string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" || res.ExitCode != 3 {
		t.Fatalf("stdout %q stderr %q exit %d", res.Stdout, res.Stderr, res.ExitCode)
	}
	if res.TimedOut || res.Truncated || res.Duration <= 0 {
		t.Fatalf("timed out %v truncated %v duration %v", res.TimedOut, res.Truncated, res.Duration)
	}
}

func (s suite) stdin(t *testing.T) {
	res, err := s.r.Run(context.Background(), ports.RunRequest{
		Argv:   []string{"python3", "-I", "-"},
		Stdin:  []byte("import sys\nprint('from stdin', sys.argv)\n"),
		Limits: Limits,
	})
	if err != nil || string(res.Stdout) != "from stdin ['-']\n" || res.ExitCode != 0 {
		t.Fatalf("err %v stdout %q stderr %q exit %d", err, res.Stdout, res.Stderr, res.ExitCode)
	}
}

// runDirs lists the run directories under the workdir.
func (s suite) runDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(s.cfg.Workdir)
	if err != nil {
		t.Fatalf("reading the workdir: %v", err)
	}
	var dirs []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), s.cfg.RunPrefix) {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs
}

func (s suite) scratchIsFreshAndRemoved(t *testing.T) {
	code := `import os, json
print(json.dumps({"cwd_entries": sorted(os.listdir(".")),
  "staged": open("pkg/sub/data.txt").read(),
  "cwd": os.getcwd(), "home": os.environ.get("HOME")}))
open("left-behind.txt", "w").write("x")
os.makedirs("made/here")
os.chmod("made", 0)
`
	stage := func(_ context.Context, sc ports.Scratch) error {
		if err := sc.WriteFile("pkg/sub/data.txt", []byte("staged bytes")); err != nil {
			return err
		}
		if err := sc.WriteFile("../escape.txt", []byte("x")); err == nil {
			return errors.New("a path leaving the scratch was accepted")
		}
		if err := sc.WriteFile("/abs.txt", []byte("x")); err == nil {
			return errors.New("an absolute path was accepted")
		}
		return nil
	}
	var firstCwd string
	for i := range 2 {
		res, err := s.r.Run(context.Background(), ports.RunRequest{
			Argv: append(slices.Clone(Python), code), Stage: stage, Limits: Limits})
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		var got struct {
			CwdEntries []string `json:"cwd_entries"`
			Staged     string   `json:"staged"`
			Cwd        string   `json:"cwd"`
			Home       string   `json:"home"`
		}
		if err := json.Unmarshal(res.Stdout, &got); err != nil {
			t.Fatalf("run %d: stdout %q stderr %q", i, res.Stdout, res.Stderr)
		}
		if !slices.Equal(got.CwdEntries, []string{"pkg"}) || got.Staged != "staged bytes" {
			t.Fatalf("run %d saw %+v (the scratch must hold only what was staged)", i, got)
		}
		// Build and test caches (Go's) key entries by the package
		// directory: a scratch path that changed per run would make
		// every run rebuild.
		if got.Home != got.Cwd {
			t.Fatalf("run %d: HOME %q is not the scratch %q", i, got.Home, got.Cwd)
		}
		if i == 0 {
			firstCwd = got.Cwd
		} else if got.Cwd != firstCwd {
			t.Fatalf("the scratch moved between runs: %q, then %q", firstCwd, got.Cwd)
		}
		if res.ExitCode != 0 {
			t.Fatalf("run %d exit %d: %s", i, res.ExitCode, res.Stderr)
		}
		if dirs := s.runDirs(t); len(dirs) != 0 {
			t.Fatalf("run %d left scratch directories behind: %v", i, dirs)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.cfg.Workdir), "escape.txt")); err == nil {
		t.Fatal("a staged file escaped the scratch")
	}
}

func (s suite) stageErrorAborts(t *testing.T) {
	boom := errors.New("stage failed")
	_, err := s.r.Run(context.Background(), ports.RunRequest{
		Argv:   append(slices.Clone(Python), "open('/proc/self/status')"),
		Stage:  func(context.Context, ports.Scratch) error { return boom },
		Limits: Limits,
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want the stage's error", err)
	}
	if dirs := s.runDirs(t); len(dirs) != 0 {
		t.Fatalf("a failed stage left scratch directories behind: %v", dirs)
	}
}

func (s suite) unknownProgram(t *testing.T) {
	_, err := s.r.Run(context.Background(), ports.RunRequest{Argv: []string{"no-such-program-arrowhead"}, Limits: Limits})
	if s.r.Name() == ports.RunnerContainer {
		return // the image's PATH decides, inside the container
	}
	if !errors.Is(err, ports.ErrProgramNotFound) {
		t.Fatalf("err %v, want ErrProgramNotFound", err)
	}
	if _, err := s.r.Run(context.Background(), ports.RunRequest{Limits: Limits}); err == nil {
		t.Fatal("an empty argv was accepted")
	}
	if _, err := s.r.Run(context.Background(), ports.RunRequest{Argv: []string{"true"}}); err == nil {
		t.Fatal("zero limits were accepted")
	}
}

func (s suite) wallTimeoutKills(t *testing.T) {
	lim := Limits
	lim.Wall = 1 * time.Second
	res := s.python(t, "import time\nprint('sleeping', flush=True)\ntime.sleep(60)", lim)
	if !res.TimedOut || res.ExitCode == 0 {
		t.Fatalf("timed out %v exit %d", res.TimedOut, res.ExitCode)
	}
	if res.Duration > 10*time.Second {
		t.Fatalf("the wall budget of 1s took %v to enforce", res.Duration)
	}
	if string(res.Stdout) != "sleeping\n" {
		t.Fatalf("output before the kill was lost: %q", res.Stdout)
	}
}

func (s suite) endlessLoop(t *testing.T) {
	lim := Limits
	lim.CPUSeconds = 1
	res := s.python(t, "while True:\n    pass", lim)
	if res.TimedOut {
		t.Fatalf("the CPU limit did not stop the loop before the wall budget (%v)", res.Duration)
	}
	// SIGKILL (soft and hard limit equal) or SIGXCPU.
	if res.ExitCode != 128+9 && res.ExitCode != 128+24 {
		t.Fatalf("exit %d, want death by SIGKILL or SIGXCPU; stderr %q", res.ExitCode, res.Stderr)
	}
}

func (s suite) memoryHog(t *testing.T) {
	lim := Limits
	lim.MemoryBytes = 256 << 20
	res := s.python(t, "b = bytearray(1 << 30)\nprint('allocated', len(b))", lim)
	if res.ExitCode == 0 || strings.Contains(string(res.Stdout), "allocated") {
		t.Fatalf("a 1 GiB allocation under a 256 MiB limit succeeded: exit %d stdout %q", res.ExitCode, res.Stdout)
	}
	if !strings.Contains(string(res.Stderr), "MemoryError") && res.ExitCode < 128 {
		t.Fatalf("exit %d stderr %q, want a MemoryError or a kill", res.ExitCode, res.Stderr)
	}
}

func (s suite) forkBomb(t *testing.T) {
	lim := Limits
	lim.Processes = 16
	code := `import os, time
n = 0
try:
    while n < 5000:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
    print("forked", n)
except OSError as e:
    print("refused after", n)
`
	res := s.python(t, code, lim)
	out := strings.TrimSpace(string(res.Stdout))
	after, ok := strings.CutPrefix(out, "refused after ")
	if !ok {
		t.Fatalf("the process limit of 16 did not stop the fork bomb: %q (stderr %q)", out, res.Stderr)
	}
	if n, err := strconv.Atoi(after); err != nil || n >= 16 {
		t.Fatalf("forked %q processes under a limit of 16", after)
	}
	if res.TimedOut || res.Duration > 10*time.Second {
		t.Fatalf("the sleeping children held the call open: timed out %v after %v", res.TimedOut, res.Duration)
	}
	// A true bomb: every child forks too.
	res = s.python(t, "import os\nfor _ in range(50):\n    try:\n        os.fork()\n    except OSError:\n        pass\n", lim)
	if res.TimedOut {
		t.Fatalf("the bomb ran out the wall budget")
	}
	res = s.python(t, "print('still works')", Limits)
	if string(res.Stdout) != "still works\n" {
		t.Fatalf("a run after the bomb failed: %q %q", res.Stdout, res.Stderr)
	}
}

func (s suite) hugeOutput(t *testing.T) {
	lim := Limits
	lim.OutputBytes = 10000
	res := s.python(t, "import sys\nsys.stdout.write('x' * 50_000_000)\nsys.stdout.flush()\nimport time\ntime.sleep(30)", lim)
	if !res.Truncated {
		t.Fatal("output over the cap was not marked truncated")
	}
	if n := len(res.Stdout) + len(res.Stderr); n > lim.OutputBytes || n == 0 {
		t.Fatalf("kept %d bytes under a cap of %d", n, lim.OutputBytes)
	}
	if res.TimedOut || res.Duration > 10*time.Second || res.ExitCode == 0 {
		t.Fatalf("the flood was not killed at the cap: timed out %v, %v, exit %d", res.TimedOut, res.Duration, res.ExitCode)
	}
}

func (s suite) endlessOutput(t *testing.T) {
	lim := Limits
	lim.OutputBytes = 64 << 10
	res := s.python(t, "import sys\nwhile True:\n    print('y' * 100)\n    print('z' * 100, file=sys.stderr)", lim)
	if !res.Truncated || res.TimedOut || len(res.Stdout)+len(res.Stderr) > lim.OutputBytes {
		t.Fatalf("truncated %v timed out %v kept %d", res.Truncated, res.TimedOut, len(res.Stdout)+len(res.Stderr))
	}
}

// hostProcessesWith lists the host processes whose argv contains marker.
func hostProcessesWith(marker string) []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range dirs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), marker) {
			found = append(found, p)
		}
	}
	return found
}

func (s suite) backgroundChild(t *testing.T) {
	// A grandchild in a new session, holding stdout open, sleeping for a
	// duration no other process on the machine uses: after the call, no
	// process may carry it.
	marker := fmt.Sprintf("%d.%06d", 400+os.Getpid()%100, time.Now().Nanosecond()/1000)
	code := fmt.Sprintf(`import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/usr/bin/sleep", ["sleep", %q])
    os._exit(0)
print("parent done", flush=True)
`, marker)
	res := s.python(t, code, Limits)
	if string(res.Stdout) != "parent done\n" || res.ExitCode != 0 {
		t.Fatalf("stdout %q stderr %q exit %d", res.Stdout, res.Stderr, res.ExitCode)
	}
	if res.Duration > 10*time.Second || res.TimedOut {
		t.Fatalf("the background child held the call open for %v", res.Duration)
	}
	// The kernel's teardown may still be finishing the reap.
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := hostProcessesWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a background child outlived its call: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s suite) cancellation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := s.r.Run(ctx, ports.RunRequest{Argv: append(slices.Clone(Python), "import time\ntime.sleep(60)"), Limits: Limits})
	if time.Since(start) > 10*time.Second {
		t.Fatalf("cancellation took %v", time.Since(start))
	}
	if err == nil && res.ExitCode == 0 {
		t.Fatal("a cancelled run reported success")
	}
}

func (s suite) environment(t *testing.T) {
	t.Setenv("ARROWHEAD_CONTRACT_SECRET", "contract-secret-value")
	res := s.python(t, "import os, json\nprint(json.dumps(dict(os.environ)))", Limits)
	var env map[string]string
	if err := json.Unmarshal(res.Stdout, &env); err != nil {
		t.Fatalf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	// PWD is the working directory some runners announce.
	allowed := []string{"PATH", "HOME", "TMPDIR", "LANG", "LC_CTYPE", "PWD"}
	for k, v := range env {
		if !slices.Contains(allowed, k) {
			t.Errorf("the command sees %s", k)
		}
		if strings.Contains(v, "contract-secret-value") {
			t.Errorf("the server's secret reached the command in %s", k)
		}
	}
	home, _ := os.UserHomeDir()
	for _, dir := range filepath.SplitList(env["PATH"]) {
		if home != "" && home != "/" && strings.HasPrefix(dir, home) {
			t.Errorf("the command's PATH has the server's %s", dir)
		}
	}
}

func (s suite) notRoot(t *testing.T) {
	code := `import os, json
caps = [l.split()[1] for l in open("/proc/self/status") if l.startswith(("CapEff", "CapPrm"))]
try:
    os.setuid(0)
    became_root = True
except OSError:
    became_root = False
print(json.dumps({"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
  "groups": os.getgroups(), "caps": caps, "became_root": became_root}))
`
	res := s.python(t, code, Limits)
	var got struct {
		UID, EUID, GID int
		Groups         []int
		Caps           []string
		BecameRoot     bool `json:"became_root"`
	}
	if err := json.Unmarshal(res.Stdout, &got); err != nil {
		t.Fatalf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	if got.UID != res.Enforced.UID || got.EUID != res.Enforced.UID {
		t.Fatalf("the command runs as uid %d/%d, the receipt says %d", got.UID, got.EUID, res.Enforced.UID)
	}
	for _, c := range got.Caps {
		if strings.Trim(c, "0") != "" {
			t.Fatalf("the command holds capabilities %v", got.Caps)
		}
	}
	if os.Geteuid() == 0 {
		if got.UID == 0 || got.BecameRoot {
			t.Fatalf("the command is or became root: %+v", got)
		}
		for _, g := range got.Groups {
			if g != got.GID {
				t.Fatalf("the command kept supplementary groups %v", got.Groups)
			}
		}
	}
}

func (s suite) receiptLimits(t *testing.T) {
	code := `import resource, json
names = {"cpu": resource.RLIMIT_CPU, "as": resource.RLIMIT_AS, "nproc": resource.RLIMIT_NPROC,
  "fsize": resource.RLIMIT_FSIZE, "nofile": resource.RLIMIT_NOFILE}
print(json.dumps({k: resource.getrlimit(v) for k, v in names.items()}))
`
	res := s.python(t, code, Limits)
	var got map[string][2]int64
	if err := json.Unmarshal(res.Stdout, &got); err != nil {
		t.Fatalf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	l := res.Enforced.Limits
	want := map[string]int64{"cpu": int64(l.CPUSeconds), "fsize": l.FileBytes, "nofile": int64(l.OpenFiles)}
	if res.Enforced.LimitScope == ports.LimitScopeProcess {
		// Otherwise the run's group (or container) bounds memory.
		want["as"] = l.MemoryBytes
	}
	if s.r.Name() != ports.RunnerContainer {
		want["nproc"] = int64(l.Processes) // the container's is its pids limit
	}
	for k, v := range want {
		if got[k] != [2]int64{v, v} {
			t.Errorf("%s: the command sees soft/hard %v, the receipt says %d", k, got[k], v)
		}
	}
	// The file-size limit holds.
	lim := Limits
	lim.FileBytes = 1 << 20
	res = s.python(t, "f = open('big', 'wb')\nf.write(b'x' * (4 << 20))\nf.close()\nprint('wrote')", lim)
	if strings.Contains(string(res.Stdout), "wrote") {
		t.Error("a 4 MiB file was written under a 1 MiB file-size limit")
	}
}

// listen opens a loopback listener on a port in the configured range.
func (s suite) listen(t *testing.T) net.Listener {
	t.Helper()
	for p := s.cfg.PortLow; p <= s.cfg.PortHigh; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err == nil {
			t.Cleanup(func() { _ = l.Close() })
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					_ = c.Close()
				}
			}()
			return l
		}
	}
	t.Fatalf("no free port in %d-%d", s.cfg.PortLow, s.cfg.PortHigh)
	return nil
}

func (s suite) receiptNetwork(t *testing.T) {
	l := s.listen(t)
	port := l.Addr().(*net.TCPAddr).Port
	code := fmt.Sprintf(`import socket, json
try:
    socket.create_connection(("127.0.0.1", %d), timeout=3).close()
    reached = True
except OSError:
    reached = False
print(json.dumps({"reached": reached, "interfaces": sorted(n for _, n in socket.if_nameindex())}))
`, port)
	res := s.python(t, code, Limits)
	var got struct {
		Reached    bool
		Interfaces []string
	}
	if err := json.Unmarshal(res.Stdout, &got); err != nil {
		t.Fatalf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	switch res.Enforced.Network {
	case ports.NetworkNone:
		if got.Reached || !slices.Equal(got.Interfaces, []string{"lo"}) {
			t.Fatalf("the receipt says no network, but the command reached the host (%v) or sees %v", got.Reached, got.Interfaces)
		}
	case ports.NetworkHost:
		if !got.Reached {
			t.Fatal("the receipt says the host's network, but the command could not reach the host's loopback")
		}
	}
}

func (s suite) receiptFilesystem(t *testing.T) {
	// A world-readable file outside the scratch, and the server's own
	// working directory.
	dir, err := os.MkdirTemp("", "exec-contract-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(dir, "probe.txt")
	if err := os.WriteFile(probe, []byte("host file"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The server's own binary stands for the server's own files.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmpName := fmt.Sprintf("exec-contract-tmp-%d-%d", os.Getpid(), time.Now().UnixNano())
	// Under the host's view the command writes the host's /tmp.
	t.Cleanup(func() { _ = os.Remove(filepath.Join("/tmp", tmpName)) })
	code := fmt.Sprintf(`import os, json
def can_read(p):
    try:
        open(p).read()
        return True
    except OSError:
        return False
def can_write(p):
    try:
        open(p, "w").write("x")
        return True
    except OSError:
        return False
print(json.dumps({"probe": can_read(%q), "self": os.path.exists(%q), "etc_hostname": os.path.exists("/etc/hostname"),
  "write_usr": can_write("/usr/arrowhead-contract-probe"), "write_scratch": can_write("here.txt"),
  "write_tmp": can_write("/tmp/" + %q)}))
`, probe, self, tmpName)
	res := s.python(t, code, Limits)
	var got struct {
		Probe        bool `json:"probe"`
		Self         bool `json:"self"`
		EtcHostname  bool `json:"etc_hostname"`
		WriteUsr     bool `json:"write_usr"`
		WriteScratch bool `json:"write_scratch"`
		WriteTmp     bool `json:"write_tmp"`
	}
	if err := json.Unmarshal(res.Stdout, &got); err != nil {
		t.Fatalf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	if got.WriteUsr {
		_ = os.Remove("/usr/arrowhead-contract-probe")
		t.Error("the command wrote into /usr")
	}
	if !got.WriteScratch {
		t.Error("the command cannot write its scratch directory")
	}
	_, hostname := os.Stat("/etc/hostname")
	switch res.Enforced.Filesystem {
	case ports.FilesystemHost:
		// The probe sits in the host's temporary directory, which a
		// private /tmp hides; /etc stands for the rest of the host.
		if !got.Probe && !(res.Enforced.PrivateTmp && strings.HasPrefix(probe, "/tmp/")) {
			t.Error("the receipt says the host filesystem, but a world-readable host file was unreadable")
		}
		if hostname == nil && !got.EtcHostname {
			t.Error("the receipt says the host filesystem, but /etc/hostname is not there")
		}
	case ports.FilesystemSystemReadOnly, ports.FilesystemImageReadOnly:
		if got.Probe || got.Self || got.EtcHostname {
			t.Errorf("the receipt says a confined view, but the command sees host files: %+v", got)
		}
	}
	if res.Enforced.PrivateTmp || res.Enforced.Filesystem != ports.FilesystemHost {
		if !got.WriteTmp {
			t.Error("the private /tmp is not writable")
		}
		if _, err := os.Stat(filepath.Join("/tmp", tmpName)); err == nil {
			t.Error("the sandbox's /tmp is the host's")
		}
	}
}

func (s suite) concurrent(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.r.Run(context.Background(), ports.RunRequest{
				Argv: append(slices.Clone(Python), fmt.Sprintf("import os\nprint(%d, sorted(os.listdir('.')))", i)), Limits: Limits})
			want := fmt.Sprintf("%d []\n", i)
			if err != nil || string(res.Stdout) != want {
				errs <- fmt.Errorf("run %d: err %v stdout %q stderr %q", i, err, res.Stdout, res.Stderr)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// requireEnv turns a missing interpreter or bwrap into a failure (set by
// .ci/run).
const requireEnv = "ARROWHEAD_REQUIRE_INTEGRATION"

// SkipOrFail skips the test with a loud message, or fails it when
// integration tests are required.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("INTEGRATION REQUIRED (%s=1) but unavailable: %s", requireEnv, msg)
	}
	t.Skipf("\n*** SKIPPING %s: %s\n*** Set %s=1 to make this a failure.", t.Name(), msg, requireEnv)
}

// Workdir returns a fresh scratch root the sandbox uid can reach (a
// testing TempDir is private to the server's uid), removed when t ends.
func Workdir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "exec-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "scratch")
}

// RequirePython skips (or fails) t when python3 is not on the sandbox
// PATH, /usr/local/bin:/usr/bin:/bin.
func RequirePython(t testing.TB) {
	t.Helper()
	for _, d := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
		if _, err := os.Stat(filepath.Join(d, "python3")); err == nil {
			return
		}
	}
	SkipOrFail(t, "python3 is not on the sandbox PATH")
}

// hostDir makes a host directory every uid may enter and read, with mode
// perm, removed when t ends.
func hostDir(t *testing.T, perm os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "exec-contract-host-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, perm); err != nil {
		t.Fatal(err)
	}
	return dir
}

// placement checks Dir, Env, PathDirs and Mounts: the command starts in
// its working directory, sees the variables, finds a program on a PATH
// directory, reads a read-only mount it cannot write and writes a
// writable one.
func (s suite) placement(t *testing.T) {
	bin := hostDir(t, 0o755)
	if err := os.WriteFile(filepath.Join(bin, "arrowhead-contract-tool"), []byte("#!/bin/sh\necho tool ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ro := hostDir(t, 0o755)
	if err := os.WriteFile(filepath.Join(ro, "cached.txt"), []byte("cached"), 0o644); err != nil {
		t.Fatal(err)
	}
	rw := hostDir(t, 0o777)
	stage := func(_ context.Context, sc ports.Scratch) error { return sc.WriteFile("mod/sub/x.txt", []byte("x")) }
	code := fmt.Sprintf(`import os, json, subprocess
def can_write(p):
    try:
        open(p, "w").write("written")
        return True
    except OSError:
        return False
print(json.dumps({"cwd": os.getcwd(), "entries": sorted(os.listdir(".")), "foo": os.environ.get("ARROWHEAD_CONTRACT_FOO"),
  "path0": os.environ["PATH"].split(":")[0], "tool": subprocess.run(["arrowhead-contract-tool"], capture_output=True, text=True).stdout,
  "ro_read": open(%[1]q + "/cached.txt").read(), "ro_write": can_write(%[1]q + "/new.txt"), "rw_write": can_write(%[2]q + "/out.txt")}))
`, ro, rw)
	res, err := s.r.Run(context.Background(), ports.RunRequest{
		Argv: append(slices.Clone(Python), code), Stage: stage, Limits: Limits, Dir: "mod/sub",
		Env: []string{"ARROWHEAD_CONTRACT_FOO=bar"}, PathDirs: []string{bin},
		Mounts: []ports.Mount{{Host: ro}, {Host: rw, Writable: true}}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var got struct {
		Cwd     string
		Entries []string
		Foo     string
		Path0   string
		Tool    string
		RORead  string `json:"ro_read"`
		ROWrite bool   `json:"ro_write"`
		RWWrite bool   `json:"rw_write"`
	}
	if err := json.Unmarshal(res.Stdout, &got); err != nil {
		t.Fatalf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	if !strings.HasSuffix(got.Cwd, "/mod/sub") || !slices.Equal(got.Entries, []string{"x.txt"}) {
		t.Errorf("working directory %q holding %v, want .../mod/sub holding x.txt", got.Cwd, got.Entries)
	}
	if got.Foo != "bar" || got.Path0 != bin || got.Tool != "tool ran\n" {
		t.Errorf("environment: foo %q, PATH starts %q, tool said %q", got.Foo, got.Path0, got.Tool)
	}
	if got.RORead != "cached" || got.ROWrite || !got.RWWrite {
		t.Errorf("mounts: read %q, wrote the read-only one %v, wrote the writable one %v", got.RORead, got.ROWrite, got.RWWrite)
	}
	if b, err := os.ReadFile(filepath.Join(rw, "out.txt")); err != nil || string(b) != "written" {
		t.Errorf("the writable mount's file is not on the host: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(ro, "new.txt")); err == nil {
		t.Error("the read-only mount was written on the host")
	}
	// A program is found on the PATH directories too.
	res, err = s.r.Run(context.Background(), ports.RunRequest{Argv: []string{"arrowhead-contract-tool"}, Limits: Limits, PathDirs: []string{bin}})
	if err != nil || string(res.Stdout) != "tool ran\n" {
		t.Errorf("a program on PathDirs: err %v stdout %q stderr %q", err, res.Stdout, res.Stderr)
	}
}

// mountAt checks a mount shown at its At: a directory inside a parent
// closed to everyone but its owner (a root server's module cache under
// /root) is readable there and not writable, and the parent stays closed
// to a command that does not run as its owner.
func (s suite) mountAt(t *testing.T) {
	// Beside the run directories rather than in /tmp, which every runner
	// replaces: the subprocess runner shows this place, read-only.
	closed, err := os.MkdirTemp(s.cfg.Workdir, "contract-closed-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(closed) })
	inner := filepath.Join(closed, "modcache")
	if err := os.MkdirAll(filepath.Join(inner, "mod@v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inner, "mod@v1", "go.mod"), []byte("module mod\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	const at = "/tmp/arrowhead-contract-at"
	code := fmt.Sprintf(`import os, json
def can_write(p):
    try:
        open(p, "w").write("written")
        return True
    except OSError:
        return False
def can_list(p):
    try:
        os.listdir(p)
        return True
    except OSError:
        return False
print(json.dumps({"read": open(%[1]q + "/mod@v1/go.mod").read(), "write": can_write(%[1]q + "/new.txt"),
  "host_parent": can_list(%[2]q), "host_inner": can_list(%[3]q)}))
`, at, closed, inner)
	res, err := s.r.Run(context.Background(), ports.RunRequest{
		Argv: append(slices.Clone(Python), code), Limits: Limits, Mounts: []ports.Mount{{Host: inner, At: at}}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var got struct {
		Read       string
		Write      bool
		HostParent bool `json:"host_parent"`
		HostInner  bool `json:"host_inner"`
	}
	if err := json.Unmarshal(res.Stdout, &got); err != nil {
		t.Fatalf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	if got.Read != "module mod\n" || got.Write {
		t.Errorf("at %s: read %q, wrote %v", at, got.Read, got.Write)
	}
	if res.Enforced.SeparateUser && (got.HostParent || got.HostInner) {
		t.Errorf("the closed host directory is open to the command: parent %v, inside %v", got.HostParent, got.HostInner)
	}
	if _, err := os.Stat(filepath.Join(inner, "new.txt")); err == nil {
		t.Error("the mount was written on the host")
	}
}

func (s suite) malformedPlacement(t *testing.T) {
	for name, req := range map[string]ports.RunRequest{
		"dir leaves the scratch": {Dir: "../x"},
		"absolute dir":           {Dir: "/etc"},
		"PATH in Env":            {Env: []string{"PATH=/x"}},
		"Env without =":          {Env: []string{"FOO"}},
		"relative PATH dir":      {PathDirs: []string{"bin"}},
		"missing PATH dir":       {PathDirs: []string{"/nonexistent/arrowhead"}},
		"root mount":             {Mounts: []ports.Mount{{Host: "/"}}},
		"unclean mount":          {Mounts: []ports.Mount{{Host: "/usr/../etc"}}},
		"proc mount":             {Mounts: []ports.Mount{{Host: "/proc/self"}}},
		"At outside /tmp":        {Mounts: []ports.Mount{{Host: "/usr", At: "/opt/x"}}},
		"At is /tmp":             {Mounts: []ports.Mount{{Host: "/usr", At: "/tmp"}}},
		"unclean At":             {Mounts: []ports.Mount{{Host: "/usr", At: "/tmp/x/../y"}}},
		"At twice":               {Mounts: []ports.Mount{{Host: "/usr", At: "/tmp/x"}, {Host: "/bin", At: "/tmp/x"}}},
	} {
		req.Argv, req.Limits = []string{"true"}, Limits
		if _, err := s.r.Run(context.Background(), req); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// tmpfsMagic is statfs's type of a tmpfs.
const tmpfsMagic = 0x01021994

// heldCount counts the lines "held" in a balloon's output.
func heldCount(res ports.RunResult) int {
	return strings.Count(string(res.Stdout), "held\n")
}

// forkedMemoryBalloon forks five children that each hold 80 MiB under a
// 256 MiB limit, and counts those holding at the same time (each reports
// on a pipe once its memory is touched; the parent waits until every
// child has held or died). Per-process limits let all five hold at once
// (1.5 times the limit); a per-run bound (a cgroup, a container) must not:
// the kernel kills holders, or stalls allocators, to stay within it.
func (s suite) forkedMemoryBalloon(t *testing.T) {
	lim := Limits
	lim.MemoryBytes = 256 << 20
	code := `import os, select, time
r, w = os.pipe()
kids = {}
for i in range(5):
    pid = os.fork()
    if pid == 0:
        os.close(r)
        b = bytearray(b"x") * (80 << 20)
        os.write(w, bytes([i]))
        time.sleep(60)
        os._exit(0)
    kids[pid] = i
os.close(w)
held, dead = set(), set()
deadline = time.time() + 12
while time.time() < deadline and len(held | dead) < 5:
    if select.select([r], [], [], 0.2)[0]:
        held.update(os.read(r, 16))
    for pid, i in kids.items():
        if i not in dead and os.waitpid(pid, os.WNOHANG) != (0, 0):
            dead.add(i)
print("together", len(held - dead))
`
	res := s.python(t, code, lim)
	var together int
	if _, err := fmt.Sscanf(string(res.Stdout), "together %d", &together); err != nil {
		// The kernel chose the parent: nothing held beyond the bound.
		t.Logf("the parent did not report (exit %d): %q", res.ExitCode, res.Stderr)
		return
	}
	t.Logf("%d of 5 children held 80 MiB at once under %s", together, res.Enforced.LimitScope)
	switch res.Enforced.LimitScope {
	case ports.LimitScopeProcess:
		// The receipt says per-process only; nothing more to hold it to.
	default:
		if int64(together)*(80<<20) > lim.MemoryBytes {
			t.Fatalf("%d children held 80 MiB each at once under a per-run limit of 256 MiB (scope %s)", together, res.Enforced.LimitScope)
		}
	}
}

// storageBalloons fill /dev/shm, /tmp and the scratch with 4 MiB files up
// to 400 MiB under a 128 MiB memory limit; each must stop within what the
// receipt claims bounds it.
func (s suite) storageBalloons(t *testing.T) {
	lim := Limits
	lim.MemoryBytes = 128 << 20
	for _, place := range []string{"/dev/shm", "/tmp", "."} {
		t.Run(strings.Trim(place, "/."), func(t *testing.T) {
			dir := fmt.Sprintf("%s/arrowhead-balloon-%d-%d", place, os.Getpid(), time.Now().UnixNano())
			if place != "." {
				t.Cleanup(func() { _ = os.RemoveAll(dir) }) // a host view's leftovers
			}
			code := fmt.Sprintf(`import os, sys
os.makedirs(%q)
chunk = b"y" * (4 << 20)
for i in range(100):
    try:
        with open(os.path.join(%q, str(i)), "wb") as f:
            f.write(chunk)
    except OSError:
        break
    sys.stdout.write("held\n"); sys.stdout.flush()
`, dir, dir)
			e := s.python(t, "print(1)", lim).Enforced
			bound := int64(0)
			switch {
			case place == "." && e.ScratchBytes > 0:
				bound = e.ScratchBytes
			case place != "." && e.PrivateTmp:
				bound = lim.MemoryBytes // never sized above the run's memory
			case e.LimitScope == ports.LimitScopeCgroupV1 || e.LimitScope == ports.LimitScopeCgroupV2:
				var st syscall.Statfs_t
				if place != "." && e.Filesystem == ports.FilesystemHost && syscall.Statfs(place, &st) == nil && st.Type == tmpfsMagic {
					bound = lim.MemoryBytes // the host's tmpfs pages are charged to the group
				}
			}
			if bound == 0 {
				t.Skipf("the receipt claims no bound on %s (scope %s, private tmp %v, scratch %d)", place, e.LimitScope, e.PrivateTmp, e.ScratchBytes)
			}
			res := s.python(t, code, lim)
			held := int64(heldCount(res))
			if held*(4<<20) > bound {
				t.Fatalf("%d MiB written to %s past a bound of %d MiB", held*4, place, bound>>20)
			}
			t.Logf("%d MiB written to %s under a bound of %d MiB", held*4, place, bound>>20)
		})
	}
}
