package wire_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/adapters/sandboxtest"
	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Real projects run_tests is tried on: a Go module from the module cache
// (its tests need nothing beyond the standard library), one whose tests
// import other cached modules (modernc.org/mathutil, which needs
// remyoudompheng/bigfft; all three are in this module's graph, so
// `go mod download` caches them), and a Debian Python package with a
// tests/ directory (python3-lazr.uri), laid out as upstream does
// (src/lazr/uri).
const (
	realGoModule     = "github.com/google/uuid@v1.6.0"
	realGoModuleDeps = "modernc.org/sortutil@v1.2.1"
	realPyPackage    = "/usr/lib/python3/dist-packages/lazr/uri"
)

// copyTree copies src into dst (regular files only, writable), skipping
// __pycache__.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "__pycache__" {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// execWorkdir is the scratch root of these tests: fixed, so the Go build
// cache kept under it stays warm from one run of the test binary to the
// next (a root server's private data directory is out of the sandbox
// user's reach, so the cache lives beside the scratch directories), and
// reachable by the sandbox uid. Several processes may share a scratch root;
// the data directory, which one process locks, stays per test.
func execWorkdir(t testing.TB) string {
	dir := filepath.Join(os.TempDir(), "arrowhead-wire-exec-test-scratch")
	if err := os.MkdirAll(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	return dir
}

// execRuntime builds the server with nothing but the exec family enabled
// (and the test's repository and scratch places), as over stdio.
func execRuntime(t testing.TB, repo string, extra map[string]string) *wire.Runtime {
	t.Helper()
	env := map[string]string{
		"ARROWHEAD_EXEC_ENABLED":       "true",
		"ARROWHEAD_PROFILE":            "coding",
		"ARROWHEAD_REPO_ROOT":          repo,
		"ARROWHEAD_DATA_DIR":           t.TempDir(),
		"ARROWHEAD_EXEC_WORKDIR":       execWorkdir(t),
		"ARROWHEAD_JAIL_ROOT":          t.TempDir(),
		"ARROWHEAD_DOCS_ROOT":          t.TempDir(),
		"ARROWHEAD_RATE_LIMIT_ENABLED": "false",
	}
	for k, v := range extra {
		env[k] = v
	}
	rt, err := wire.Build(t.Context(), coretest.Settings(t, env), wire.Options{AuditWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

func runTests(t testing.TB, rt *wire.Runtime, prefix string) map[string]any {
	t.Helper()
	res, err := rt.App.Call(t.Context(), ports.Operator(), "run_tests", map[string]any{"path_prefix": prefix})
	if err != nil {
		t.Fatalf("run_tests: %v", err)
	}
	return res.Structured()
}

// testsOf returns the parsed counts and failures of a run_tests result.
func testsOf(t testing.TB, out map[string]any) (passed, failed, skipped int, failures []map[string]any) {
	t.Helper()
	tests, ok := out["tests"].(map[string]any)
	if !ok || tests["parsed"] != true {
		t.Fatalf("no parsed results: %v\nstdout %s\nstderr %s", out["tests"], out["stdout"], out["stderr"])
	}
	n := func(k string) int {
		switch v := tests[k].(type) {
		case int:
			return v
		case int64:
			return int(v)
		case float64:
			return int(v)
		}
		t.Fatalf("%s: %T", k, tests[k])
		return 0
	}
	for _, f := range tests["failures"].([]any) {
		failures = append(failures, f.(map[string]any))
	}
	return n("passed"), n("failed"), n("skipped"), failures
}

func requireGoModule(t testing.TB) string { return requireCachedModule(t, realGoModule) }

// requireCachedModule is mod's directory in the module cache.
func requireCachedModule(t testing.TB, mod string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		sandboxtest.SkipOrFail(t, "go is not on PATH")
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), filepath.FromSlash(mod))
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		sandboxtest.SkipOrFail(t, "%s is not in the module cache (go mod download %s)", mod, mod)
	}
	return dir
}

// TestRunTestsOnAGoModuleWithCachedDependencies runs the tests of a real
// module whose test file imports another module, with only the exec
// family enabled: offline (GOPROXY=off), from the host's module cache,
// which for a root server sits under /root (0700), shown to the sandbox
// uid at a fixed path without opening /root.
func TestRunTestsOnAGoModuleWithCachedDependencies(t *testing.T) {
	for _, runner := range runners {
		t.Run(runner, func(t *testing.T) {
			requireRunner(t, runner)
			src := requireCachedModule(t, realGoModuleDeps)
			repo := t.TempDir()
			copyTree(t, src, filepath.Join(repo, "sortutil"))
			rt := execRuntime(t, repo, map[string]string{"ARROWHEAD_EXEC_TEST_WALL_SECONDS": "900", "ARROWHEAD_EXEC_RUNNER": runner})
			before := treeDigest(t, repo)

			out := runTests(t, rt, "sortutil/")
			passed, failed, _, _ := testsOf(t, out)
			if out["exit_code"] != float64(0) || passed < 20 || failed != 0 {
				t.Fatalf("exit %v, %d passed, %d failed\nstdout %.2000s\nstderr %.2000s", out["exit_code"], passed, failed, out["stdout"], out["stderr"])
			}
			if !strings.Contains(out["reason"].(string), "offline from the module cache") {
				t.Errorf("reason %q", out["reason"])
			}
			if treeDigest(t, repo) != before {
				t.Fatal("the repository changed")
			}
		})
	}
}

// TestRunTestsOnARealGoModule runs a real module's tests with only the
// exec family enabled: the command is detected from go.mod, the build is
// offline, and the results are parsed; a failing test added to the copy is
// reported with its name, file and line, and the repository is unchanged.
func TestRunTestsOnARealGoModule(t *testing.T) {
	for _, runner := range runners {
		t.Run(runner, func(t *testing.T) { testRealGoModule(t, runner) })
	}
}

// runners are the runners run_tests is tried under here.
var runners = []string{"subprocess", "bubblewrap"}

// requireRunner skips (or fails) t when runner cannot run here.
func requireRunner(t *testing.T, runner string) {
	t.Helper()
	if _, err := sandbox.New(t.Context(), sandbox.Config{Runner: runner, Workdir: sandboxtest.Workdir(t)}); errors.Is(err, sandbox.ErrUnavailable) {
		sandboxtest.SkipOrFail(t, "%v", err)
	}
}

func testRealGoModule(t *testing.T, runner string) {
	requireRunner(t, runner)
	src := requireGoModule(t)
	repo := t.TempDir()
	copyTree(t, src, filepath.Join(repo, "uuid"))
	coretest.WriteFiles(t, repo, map[string]string{"README.md": "not a module\n"})
	// The first run on a machine compiles the standard library into the
	// caller's cold build cache: minutes on a busy two-core machine.
	rt := execRuntime(t, repo, map[string]string{"ARROWHEAD_EXEC_TEST_WALL_SECONDS": "900", "ARROWHEAD_EXEC_RUNNER": runner})

	out := runTests(t, rt, "uuid/")
	passed, failed, _, _ := testsOf(t, out)
	if out["exit_code"] != float64(0) || passed < 10 || failed != 0 {
		t.Fatalf("exit %v, %d passed, %d failed\nstdout %.2000s\nstderr %.2000s", out["exit_code"], passed, failed, out["stdout"], out["stderr"])
	}
	if cmd := out["command"].(string); !strings.HasSuffix(cmd, "/go test -json ./...") || !filepath.IsAbs(cmd) {
		t.Errorf("command %q", cmd)
	}
	if reason := out["reason"].(string); !strings.Contains(reason, "uuid/go.mod") || out["work_dir"] != "uuid" {
		t.Errorf("reason %q, work_dir %v", reason, out["work_dir"])
	}
	if strings.Contains(out["stdout"].(string), `"Action"`) {
		t.Error("stdout shows go test's JSON events rather than their text")
	}

	coretest.WriteFiles(t, repo, map[string]string{"uuid/arrowhead_fail_test.go": "package uuid\n\nimport \"testing\"\n\n" +
		"func TestArrowheadFails(t *testing.T) {\n\tt.Errorf(\"want %d, got %d\", 1, 2)\n}\n"})
	before := treeDigest(t, repo)
	out = runTests(t, rt, "uuid")
	passed, failed, _, failures := testsOf(t, out)
	if out["exit_code"] == float64(0) || failed != 1 || passed < 10 || len(failures) != 1 {
		t.Fatalf("exit %v, %d passed, %d failed, failures %v", out["exit_code"], passed, failed, failures)
	}
	f := failures[0]
	if f["test"] != "github.com/google/uuid.TestArrowheadFails" || f["file"] != "uuid/arrowhead_fail_test.go" ||
		f["line"] != float64(6) || !strings.Contains(f["message"].(string), "want 1, got 2") {
		t.Fatalf("failure %v", f)
	}
	if treeDigest(t, repo) != before {
		t.Fatal("the repository changed")
	}
}

// TestRunTestsOnARealPythonPackage runs a real package's tests with only
// the exec family enabled: pytest (installed) on the project marked by
// pyproject.toml, with src/ on PYTHONPATH.
func TestRunTestsOnARealPythonPackage(t *testing.T) {
	for _, runner := range runners {
		t.Run(runner, func(t *testing.T) { testRealPythonPackage(t, runner) })
	}
}

func testRealPythonPackage(t *testing.T, runner string) {
	requireRunner(t, runner)
	sandboxtest.RequirePython(t)
	if _, err := os.Stat(filepath.Join(realPyPackage, "tests")); err != nil {
		sandboxtest.SkipOrFail(t, "%s is missing (Debian package python3-lazr.uri)", realPyPackage)
	}
	if exec.Command("/usr/bin/python3", "-I", "-c", "import pytest").Run() != nil {
		sandboxtest.SkipOrFail(t, "pytest is not installed for /usr/bin/python3 (Debian package python3-pytest)")
	}
	repo := t.TempDir()
	copyTree(t, realPyPackage, filepath.Join(repo, "src", "lazr", "uri"))
	coretest.WriteFiles(t, repo, map[string]string{"pyproject.toml": "[project]\nname = \"lazr.uri\"\nversion = \"1.0.6\"\n"})
	rt := execRuntime(t, repo, map[string]string{"ARROWHEAD_EXEC_RUNNER": runner})

	out := runTests(t, rt, "")
	passed, failed, _, _ := testsOf(t, out)
	if out["exit_code"] != float64(0) || passed < 5 || failed != 0 {
		t.Fatalf("exit %v, %d passed, %d failed\nstdout %.3000s\nstderr %.2000s", out["exit_code"], passed, failed, out["stdout"], out["stderr"])
	}
	if cmd := out["command"].(string); !strings.Contains(cmd, "-m pytest") || !strings.Contains(out["reason"].(string), "src/ on PYTHONPATH") {
		t.Errorf("command %q, reason %q", cmd, out["reason"])
	}

	coretest.WriteFiles(t, repo, map[string]string{"src/lazr/uri/tests/test_arrowhead_fail.py": "from lazr.uri import URI\n\n\n" +
		"def test_host_is_wrong():\n    assert URI('http://example.com/').host == 'example.org'\n"})
	out = runTests(t, rt, "src/lazr/uri/tests/")
	passed, failed, _, failures := testsOf(t, out)
	if out["exit_code"] == float64(0) || failed != 1 || passed < 5 || len(failures) != 1 {
		t.Fatalf("exit %v, %d passed, %d failed, failures %v\nstdout %.3000s", out["exit_code"], passed, failed, failures, out["stdout"])
	}
	f := failures[0]
	if f["test"] != "src/lazr/uri/tests/test_arrowhead_fail.py::test_host_is_wrong" || f["file"] != "src/lazr/uri/tests/test_arrowhead_fail.py" ||
		f["line"] != float64(5) || !strings.Contains(f["message"].(string), "example.org") {
		t.Fatalf("failure %v", f)
	}

	// A module that cannot be imported is reported with its line and
	// error, and the other modules' tests still run.
	coretest.WriteFiles(t, repo, map[string]string{"src/lazr/uri/tests/test_arrowhead_broken.py": "import not_a_module_arrowhead\n"})
	out = runTests(t, rt, "src/lazr/uri/tests/")
	passed, failed, _, failures = testsOf(t, out)
	if failed != 2 || passed < 5 || len(failures) != 2 {
		t.Fatalf("exit %v, %d passed, %d failed, failures %v\nstdout %.3000s", out["exit_code"], passed, failed, failures, out["stdout"])
	}
	var broken map[string]any
	for _, f := range failures {
		if f["test"] == "src/lazr/uri/tests/test_arrowhead_broken.py" {
			broken = f
		}
	}
	if broken["file"] != "src/lazr/uri/tests/test_arrowhead_broken.py" || broken["line"] != float64(1) ||
		!strings.Contains(broken["message"].(string), "No module named 'not_a_module_arrowhead'") {
		t.Fatalf("collection error %v", broken)
	}
}

// TestRunTestsStartUpRefusesAMissingProgram: a configured command whose
// program is nowhere stops the start with the variable's name.
func TestRunTestsStartUpRefusesAMissingProgram(t *testing.T) {
	sandboxtest.RequirePython(t)
	env := map[string]string{
		"ARROWHEAD_EXEC_ENABLED": "true", "ARROWHEAD_PROFILE": "coding", "ARROWHEAD_REPO_ROOT": t.TempDir(),
		"ARROWHEAD_DATA_DIR": t.TempDir(), "ARROWHEAD_EXEC_WORKDIR": sandboxtest.Workdir(t),
		"ARROWHEAD_JAIL_ROOT": t.TempDir(), "ARROWHEAD_DOCS_ROOT": t.TempDir(),
		"ARROWHEAD_EXEC_TEST_COMMAND": "no-such-test-runner-xyz ./...",
	}
	_, err := wire.Build(t.Context(), coretest.Settings(t, env), wire.Options{AuditWriter: io.Discard})
	if err == nil || !strings.HasPrefix(err.Error(), "ARROWHEAD_EXEC_TEST_COMMAND: ") {
		t.Fatalf("err %v", err)
	}
}

// treeDigest hashes every path and content under dir.
func treeDigest(t testing.TB, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		h.Write([]byte(p))
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
