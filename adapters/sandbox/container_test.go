//go:build linux

package sandbox_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/adapters/sandboxtest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// No container engine runs on the test machine, so the container runner is
// run against this test binary posing as the engine's client: it records
// its argv and what it was given, then behaves as a finished or a hung
// container. The engine client sees the server's DOCKER_CONFIG (and no
// other variable of ours), which is how the fake finds its log.
const fakeEngineMarker = "fake-engine"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childModeEnv); mode != "" {
		os.Exit(childMain(mode))
	}
	if dir := os.Getenv("DOCKER_CONFIG"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, fakeEngineMarker)); err == nil {
			os.Exit(fakeEngine(dir))
		}
	}
	os.Exit(m.Run())
}

type engineCall struct {
	Argv  []string `json:"argv"`
	Env   []string `json:"env"`
	Stdin string   `json:"stdin"`
}

func fakeEngine(dir string) int {
	call := engineCall{Argv: os.Args[1:], Env: os.Environ()}
	if len(call.Argv) > 0 && call.Argv[0] == "run" {
		b, _ := io.ReadAll(os.Stdin)
		call.Stdin = string(b)
	}
	f, err := os.OpenFile(filepath.Join(dir, "calls.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 99
	}
	_ = json.NewEncoder(f).Encode(call)
	_ = f.Close()
	if slices.Contains(call.Argv, "hang") {
		time.Sleep(time.Minute)
	}
	if len(call.Argv) > 0 && call.Argv[0] == "run" {
		os.Stdout.WriteString("container output\n")
		os.Stderr.WriteString("container errors\n")
		return 7
	}
	return 0
}

func fakeEngineCalls(t *testing.T, dir string) []engineCall {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "calls.jsonl"))
	if err != nil {
		t.Fatalf("the fake engine was never called: %v", err)
	}
	defer f.Close()
	var calls []engineCall
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c engineCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
	}
	return calls
}

func newFakeContainer(t *testing.T) (*sandbox.Runner, string, string) {
	t.Helper()
	logDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(logDir, fakeEngineMarker), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", logDir)
	t.Setenv("ARROWHEAD_CONTRACT_SECRET", "must-not-reach-the-engine")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wd := sandboxtest.Workdir(t)
	r, err := sandbox.New(context.Background(), sandbox.Config{
		Runner: ports.RunnerContainer, Workdir: wd, ContainerImage: "python:3.12-slim", ContainerEngine: self})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r, logDir, wd
}

func TestContainerArgv(t *testing.T) {
	r, logDir, wd := newFakeContainer(t)
	lim := ports.RunLimits{Wall: 5 * time.Second, CPUSeconds: 7, MemoryBytes: 300_000_000, Processes: 32,
		FileBytes: 1_000_000, OpenFiles: 128, OutputBytes: 4096}
	res, err := r.Run(context.Background(), ports.RunRequest{
		Argv: []string{"python3", "-I", "-"}, Stdin: []byte("print(1)"), Limits: lim})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	calls := fakeEngineCalls(t, logDir)
	if len(calls) != 1 {
		t.Fatalf("%d engine calls, want 1 (no removal after a clean exit): %+v", len(calls), calls)
	}
	argv := calls[0].Argv
	// The two values that differ per run: the container name and the
	// scratch directory.
	name := ""
	if i := slices.Index(argv, "--name"); i >= 0 && i+1 < len(argv) {
		name = argv[i+1]
	}
	if !strings.HasPrefix(name, "arrowhead-exec-") || len(name) != len("arrowhead-exec-")+16 {
		t.Fatalf("container name %q", name)
	}
	mount := ""
	if i := slices.Index(argv, "--mount"); i >= 0 && i+1 < len(argv) {
		mount = argv[i+1]
	}
	scratchDir, ok := strings.CutSuffix(strings.TrimPrefix(mount, "type=bind,source="), ",target=/scratch")
	if !ok || filepath.Dir(scratchDir) != wd || !strings.HasPrefix(filepath.Base(scratchDir), "run-") {
		t.Fatalf("mount %q is not the run's scratch under %s", mount, wd)
	}
	uid, gid := os.Getuid(), os.Getgid()
	if os.Geteuid() == 0 {
		uid, gid = 65534, 65534
	}
	want := []string{"run", "--rm", "--interactive", "--name", name,
		"--pull", "never",
		"--network", "none",
		"--read-only",
		"--cap-drop", "ALL",
		"--security-opt", "no-new-privileges",
		"--pids-limit", "32",
		"--memory", "300000000",
		"--memory-swap", "300000000",
		"--cpus", "1",
		"--ulimit", "cpu=7:7",
		"--ulimit", "fsize=1000000:1000000",
		"--ulimit", "nofile=128:128",
		"--user", strconv.Itoa(uid) + ":" + strconv.Itoa(gid),
		"--tmpfs", "/tmp:rw,nosuid,nodev,size=67108864",
		"--shm-size", "67108864",
		"--mount", "type=bind,source=" + scratchDir + ",target=/scratch",
		"--workdir", "/scratch",
		"--env", "HOME=/scratch",
		"--env", "TMPDIR=/tmp",
		"--env", "LANG=C.UTF-8",
		"python:3.12-slim",
		"python3", "-I", "-",
	}
	if !slices.Equal(argv, want) {
		t.Fatalf("engine argv\n got %q\nwant %q", argv, want)
	}
	if calls[0].Stdin != "print(1)" {
		t.Fatalf("stdin %q", calls[0].Stdin)
	}
	for _, kv := range calls[0].Env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains([]string{"PATH", "HOME", "XDG_RUNTIME_DIR", "DOCKER_HOST", "DOCKER_CONTEXT",
			"DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "CONTAINER_HOST", "CONTAINERS_CONF"}, k) {
			t.Errorf("the engine client sees %s", k)
		}
	}
	if string(res.Stdout) != "container output\n" || string(res.Stderr) != "container errors\n" || res.ExitCode != 7 {
		t.Fatalf("stdout %q stderr %q exit %d", res.Stdout, res.Stderr, res.ExitCode)
	}
	e := res.Enforced
	if res.Runner != "container" || e.Network != "none" || e.Filesystem != "image_read_only" || e.UID != uid ||
		!e.PIDNamespace || e.Limits.CPUSeconds != 7 || e.Limits.Processes != 32 || e.Limits.MemoryBytes != 300_000_000 {
		t.Fatalf("receipt %+v", res)
	}
	if _, err := os.Stat(scratchDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the scratch directory was left behind: %v", err)
	}
}

func TestContainerKilledClientRemovesContainer(t *testing.T) {
	r, logDir, _ := newFakeContainer(t)
	lim := sandboxtest.Limits
	lim.Wall = 500 * time.Millisecond
	res, err := r.Run(context.Background(), ports.RunRequest{Argv: []string{"hang"}, Limits: lim})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.TimedOut {
		t.Fatalf("the hung client was not timed out: %+v", res)
	}
	calls := fakeEngineCalls(t, logDir)
	if len(calls) != 2 {
		t.Fatalf("%d engine calls, want run then rm: %+v", len(calls), calls)
	}
	name := calls[0].Argv[slices.Index(calls[0].Argv, "--name")+1]
	if want := []string{"rm", "--force", name}; !slices.Equal(calls[1].Argv, want) {
		t.Fatalf("cleanup argv %q, want %q", calls[1].Argv, want)
	}
}

func TestContainerRefusals(t *testing.T) {
	wd := sandboxtest.Workdir(t)
	cases := map[string]sandbox.Config{
		"no image":  {Runner: ports.RunnerContainer, Workdir: wd, ContainerEngine: "/bin/true"},
		"no engine": {Runner: ports.RunnerContainer, Workdir: wd, ContainerImage: "img", ContainerEngine: "/nonexistent/docker"},
		"unknown":   {Runner: "firecracker", Workdir: wd},
	}
	for name, cfg := range cases {
		if _, err := sandbox.New(context.Background(), cfg); !errors.Is(err, sandbox.ErrUnavailable) {
			t.Errorf("%s: err %v, want ErrUnavailable", name, err)
		}
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := sandbox.New(context.Background(), sandbox.Config{Runner: ports.RunnerContainer, Workdir: wd, ContainerImage: "img"}); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("no docker or podman on PATH: err %v", err)
	}
}
