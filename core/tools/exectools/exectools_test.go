package exectools_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	afs "github.com/arrowhead-go/arrowhead/adapters/fs"
	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/adapters/sandboxtest"
	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/authz"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/exectools"
	"github.com/arrowhead-go/arrowhead/policies"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// The tools run through the real subprocess runner and the real
// repository store: what they promise is what a command observes.

var (
	// runner holds exec:run and, in testPolicy, the execute grant.
	runner = ports.NewPrincipal("runner", "exec:run")
	// outsider holds the scope but no execute grant.
	outsider = ports.NewPrincipal("outsider", "exec:run")
)

// testPolicy grants runner execute and the reading of src/ only.
const testPolicy = `{"grants": [
  {"subject": "runner", "actions": ["execute"], "kinds": ["sandbox"], "prefix": ""},
  {"subject": "*", "actions": ["read"], "kinds": ["repo_file"], "prefix": "src/"}
]}`

type env struct {
	app  *core.App
	repo string
}

// newEnv serves the exec family over a repository holding files, with vars
// on top of an enabled exec family.
func newEnv(t testing.TB, vars map[string]string, files map[string]string) env {
	t.Helper()
	return newEnvWith(t, vars, files, exectools.Toolchain{})
}

// newEnvWith is newEnv with run_tests' toolchains.
func newEnvWith(t testing.TB, vars map[string]string, files map[string]string, tc exectools.Toolchain) env {
	t.Helper()
	sandboxtest.RequirePython(t)
	repoDir := t.TempDir()
	coretest.WriteFiles(t, repoDir, files)
	all := map[string]string{
		"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_RATE_LIMIT_ENABLED": "false", "ARROWHEAD_EXEC_ENABLED": "true",
		"ARROWHEAD_AUTHZ_POLICY":      testPolicy,
		"ARROWHEAD_EXEC_TEST_COMMAND": "python3 -I -m unittest discover -s src -t .",
	}
	for k, v := range vars {
		all[k] = v
	}
	s := coretest.Settings(t, all)
	pol, err := authz.Parse([]byte(s.AuthzPolicy))
	if err != nil {
		t.Fatal(err)
	}
	r, err := sandbox.New(t.Context(), sandbox.Config{Runner: s.ExecRunner, Workdir: sandboxtest.Workdir(t)})
	if errors.Is(err, sandbox.ErrUnavailable) {
		sandboxtest.SkipOrFail(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	p := exectools.Ports{Runner: r, Authorizer: pol, Scanner: security.NewScanner([]byte("0123456789abcdef0123456789abcdef")), Toolchain: tc}
	if files != nil {
		repo, err := afs.OpenRepo(afs.RepoConfig{Root: repoDir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = repo.Close() })
		p.Repo = repo
	}
	app, err := core.New(core.Deps{Settings: s, Authorizer: pol, Rates: &portstest.Counter{}, Audit: &portstest.Audit{},
		Tracer: nop.Tracer{}, Metrics: nop.Metrics{}, Clock: ports.SystemClock{},
		Families: []core.Member{exectools.Family.With(p)}})
	if err != nil {
		t.Fatal(err)
	}
	return env{app: app, repo: repoDir}
}

func (e env) call(t *testing.T, p ports.Principal, tool string, args map[string]any) (map[string]any, string, *catalog.ToolError) {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := e.app.Call(t.Context(), p, tool, args)
	if err != nil {
		te, ok := catalog.AsToolError(err)
		if !ok {
			t.Fatalf("%s: non-ToolError %v", tool, err)
		}
		return nil, "", te
	}
	return res.Structured(), res.Text, nil
}

func snippet(t *testing.T, e env, code string) (map[string]any, string) {
	t.Helper()
	out, text, te := e.call(t, runner, "run_snippet", map[string]any{"code": code})
	if te != nil {
		t.Fatalf("run_snippet: %v", te)
	}
	return out, text
}

func TestSpecs(t *testing.T) {
	s := settings.Defaults()
	tools := exectools.Family.Declare(s).Tools
	want := map[string][2]any{"run_snippet": {"ARROWHEAD_RUN_SNIPPET_PER_MINUTE", 10}, "run_tests": {"ARROWHEAD_RUN_TESTS_PER_MINUTE", 4}}
	if len(tools) != 2 {
		t.Fatalf("%d tools", len(tools))
	}
	for _, spec := range tools {
		w, ok := want[spec.Name()]
		if !ok || spec.Family() != catalog.FamilyExec || spec.Scope() != "exec:run" {
			t.Errorf("%s: family %s scope %s", spec.Name(), spec.Family(), spec.Scope())
		}
		if c := spec.Ceiling(); c.Var != w[0] || c.Default != w[1] {
			t.Errorf("%s: ceiling %+v", spec.Name(), c)
		}
		if a := spec.Annotations(); !a.OpenWorld || a.ReadOnly || a.Destructive || a.Idempotent {
			t.Errorf("%s: annotations %+v", spec.Name(), a)
		}
		out := spec.Output()
		for _, k := range []string{"exit_code", "timed_out", "stdout", "stderr", "truncated", "duration_ms", "runner", "enforced"} {
			if !slices.Contains(out.Required, k) {
				t.Errorf("%s: output lacks %s", spec.Name(), k)
			}
		}
	}
	if exectools.Family.Serves(s) {
		t.Error("the exec family is served with ARROWHEAD_EXEC_ENABLED unset")
	}
}

func TestRunSnippet(t *testing.T) {
	e := newEnv(t, nil, nil)
	out, text := snippet(t, e, "import sys\nprint(2 + 2)\nprint('warn', file=sys.stderr)\nsys.exit(5)")
	if out["stdout"] != "4\n" || out["stderr"] != "warn\n" || out["exit_code"] != float64(5) {
		t.Fatalf("output %+v", out)
	}
	enf := out["enforced"].(map[string]any)
	// The default runner is the confined one (bubblewrap).
	if out["runner"] != "bubblewrap" || enf["environment"] != "scrubbed" || enf["network"] != "none" || out["untrusted"] != true {
		t.Fatalf("receipt %+v", out)
	}
	if os.Geteuid() == 0 && enf["separate_user"] != true {
		t.Fatalf("a root server's snippet did not run as a separate user: %+v", enf)
	}
	marker := out["marker"].(string)
	if !strings.HasPrefix(text, "run_snippet exited 5 after ") || strings.Count(text, marker) != 2 || !strings.Contains(text, "4\n") {
		t.Fatalf("text %q", text)
	}
}

func TestRunSnippetRedactsAndSanitizes(t *testing.T) {
	e := newEnv(t, nil, nil)
	token := "ghp_" + strings.Repeat("A1b2", 9)
	// The escape sequence spliced into the key is stripped before the scan,
	// so it cannot hide the key from the scanner.
	code := "print('token " + token + "')\nprint('AKIA' + '\\x1b[0m' + 'Z7QRSTUVWXYZ2345')\nprint('bell\\x07 and \\u202e bidi')"
	out, text := snippet(t, e, code)
	stdout := out["stdout"].(string)
	for _, leaked := range []string{token, "AKIAZ7QRSTUVWXYZ2345", "\x1b", "\x07", "\u202e"} {
		if strings.Contains(stdout, leaked) || strings.Contains(text, leaked) {
			t.Errorf("the output kept %q: %q", leaked, stdout)
		}
	}
	if !strings.Contains(stdout, "[REDACTED:GITHUB_TOKEN:") || !strings.Contains(stdout, "[REDACTED:AWS_ACCESS_KEY_ID:") {
		t.Errorf("no placeholders in %q", stdout)
	}
}

func TestRunSnippetCannotReadServerSecrets(t *testing.T) {
	t.Setenv("ARROWHEAD_LLM_API_KEY", "sk-server-secret-value")
	e := newEnv(t, nil, nil)
	out, _ := snippet(t, e, "import os\nprint(sorted(os.environ))\nprint(any('server-secret' in v for v in os.environ.values()))")
	if strings.Contains(out["stdout"].(string), "ARROWHEAD") || !strings.HasSuffix(out["stdout"].(string), "False\n") {
		t.Fatalf("the snippet sees the server's environment: %q", out["stdout"])
	}
}

func TestRunSnippetBounds(t *testing.T) {
	e := newEnv(t, map[string]string{"ARROWHEAD_EXEC_MAX_CODE_BYTES": "40", "ARROWHEAD_EXEC_MAX_OUTPUT_BYTES": "1000",
		"ARROWHEAD_EXEC_WALL_SECONDS": "1"}, nil)
	// 29 characters, 49 bytes: within the schema's character count, over
	// the byte limit.
	if _, _, te := e.call(t, runner, "run_snippet", map[string]any{"code": "print('" + strings.Repeat("é", 20) + "')"}); te == nil || te.Kind != catalog.KindValidation || !strings.Contains(te.Message, "40 bytes") {
		t.Errorf("over the byte limit: %v", te)
	}
	for _, code := range []string{"", "   \n", strings.Repeat("x", 41)} {
		if _, _, te := e.call(t, runner, "run_snippet", map[string]any{"code": code}); te == nil || te.Kind != catalog.KindValidation {
			t.Errorf("code %q: %v", code, te)
		}
	}
	out, text := snippet(t, e, "print('x' * 100000)")
	if out["truncated"] != true || len(out["stdout"].(string)) > 1000 || !strings.Contains(text, "output truncated") {
		t.Errorf("flood: truncated %v, %d bytes", out["truncated"], len(out["stdout"].(string)))
	}
	out, text = snippet(t, e, "import time\ntime.sleep(30)")
	if out["timed_out"] != true || !strings.Contains(text, "timed out") {
		t.Errorf("sleep: %+v", out)
	}
}

// TestRunSnippetSaysWhichLimitKilledIt: a snippet the kernel kills at its
// CPU-time limit is not reported as a bare "exited 137".
func TestRunSnippetSaysWhichLimitKilledIt(t *testing.T) {
	e := newEnv(t, map[string]string{"ARROWHEAD_EXEC_CPU_SECONDS": "1", "ARROWHEAD_EXEC_WALL_SECONDS": "20"}, nil)
	out, text := snippet(t, e, "while True:\n    pass")
	if out["timed_out"] == true {
		t.Fatalf("the wall clock, not the CPU limit, ended it: %s", text)
	}
	switch code := number(out["exit_code"]); code {
	case 137:
		if !strings.Contains(text, "was killed (exit 137, SIGKILL), most likely at a limit: CPU time (ARROWHEAD_EXEC_CPU_SECONDS=1 seconds)") {
			t.Errorf("text %q", text)
		}
	case 152:
		if !strings.Contains(text, "was killed at its CPU-time limit (exit 152, SIGXCPU)") {
			t.Errorf("text %q", text)
		}
	default:
		t.Errorf("a CPU-bound snippet under a 1 s CPU limit exited %d: %s", code, text)
	}
}

func TestExecuteIsDenied(t *testing.T) {
	e := newEnv(t, nil, map[string]string{"src/test_a.py": "import unittest\n"})
	for _, tool := range []string{"run_snippet", "run_tests"} {
		args := map[string]any{"code": "print(1)"}
		if tool == "run_tests" {
			args = nil
		}
		if _, _, te := e.call(t, outsider, tool, args); te == nil || te.Kind != catalog.KindAuthorization {
			t.Errorf("%s without the execute grant: %v", tool, te)
		}
	}
	// The shipped default policy withholds execute from everyone.
	pol, err := authz.Parse(policies.Default())
	if err != nil {
		t.Fatal(err)
	}
	if pol.Authorize(t.Context(), runner, ports.ActionExecute, ports.Resource{Kind: ports.KindSandbox, ID: "run_snippet"}).Allowed {
		t.Error("the default policy grants execute")
	}
}

// treeDigest hashes every path and content under dir.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		h.Write([]byte(p))
		if b, err := os.ReadFile(p); err == nil {
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// repoFiles is a small repository: tests under src/ that pass, look at
// their copy and change it, and a private file policy keeps out.
var repoFiles = map[string]string{
	"src/__init__.py": "",
	"src/calc.py":     "def add(a, b):\n    return a + b\n",
	"src/test_calc.py": `import os, unittest
from src.calc import add

class T(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_copy(self):
        seen = sorted(os.path.join(d, f) for d, _, fs in os.walk(".") for f in fs if not f.endswith(".pyc"))
        print("SEEN", seen)
        open("src/calc.py", "w").write("broken")
        os.remove("src/__init__.py")
        open("src/new.txt", "w").write("x")
`,
	"private/secret.py": "KEY = 1\n",
}

func TestRunTestsCopiesAuthorizedSubtree(t *testing.T) {
	e := newEnv(t, nil, repoFiles)
	if err := os.Symlink("/etc/passwd", filepath.Join(e.repo, "src", "link.py")); err != nil {
		t.Fatal(err)
	}
	before := treeDigest(t, e.repo)
	out, text, te := e.call(t, runner, "run_tests", nil)
	if te != nil {
		t.Fatal(te)
	}
	if out["exit_code"] != float64(0) {
		t.Fatalf("tests failed: %+v", out)
	}
	stderr := out["stderr"].(string)
	if !strings.Contains(stderr, "Ran 2 tests") || !strings.Contains(stderr, "OK") {
		t.Fatalf("stderr %q", stderr)
	}
	want := "SEEN ['./src/__init__.py', './src/calc.py', './src/test_calc.py']"
	if !strings.Contains(out["stdout"].(string), want) {
		t.Fatalf("the copy is not the authorized subtree at its repository paths: %q", out["stdout"])
	}
	if after := treeDigest(t, e.repo); after != before {
		t.Fatal("the repository changed")
	}
	if !strings.HasPrefix(text, "run_tests exited 0") {
		t.Errorf("text %q", text)
	}
	// A prefix narrows the copy; one with nothing authorized is not found.
	if _, _, te := e.call(t, runner, "run_tests", map[string]any{"path_prefix": "private/"}); te == nil || te.Kind != catalog.KindNotFound {
		t.Errorf("unauthorized subtree: %v", te)
	}
	for _, bad := range []string{"../", "/etc", "src/\x00"} {
		if _, _, te := e.call(t, runner, "run_tests", map[string]any{"path_prefix": bad}); te == nil || te.Kind != catalog.KindValidation || strings.Contains(te.Message, bad) {
			t.Errorf("prefix %q: %v", bad, te)
		}
	}
}

func TestRunTestsBudgets(t *testing.T) {
	e := newEnv(t, map[string]string{"ARROWHEAD_EXEC_COPY_MAX_FILES": "2"}, repoFiles)
	if _, _, te := e.call(t, runner, "run_tests", nil); te == nil || te.Kind != catalog.KindValidation || !strings.Contains(te.Message, "ARROWHEAD_EXEC_COPY_MAX_FILES") {
		t.Errorf("over the file budget: %v", te)
	}
	e = newEnv(t, map[string]string{"ARROWHEAD_EXEC_MAX_COPY_BYTES": "100"}, repoFiles)
	if _, _, te := e.call(t, runner, "run_tests", nil); te == nil || te.Kind != catalog.KindValidation || !strings.Contains(te.Message, "ARROWHEAD_EXEC_MAX_COPY_BYTES") {
		t.Errorf("over the byte budget: %v", te)
	}
}

func TestRunTestsNotConfigured(t *testing.T) {
	e := newEnv(t, map[string]string{"ARROWHEAD_EXEC_TEST_COMMAND": ""}, repoFiles)
	if _, _, te := e.call(t, runner, "run_tests", nil); te == nil || te.Kind != catalog.KindUnavailable || !strings.Contains(te.Message, "ARROWHEAD_EXEC_TEST_COMMAND") {
		t.Errorf("no command: %v", te)
	}
	e = newEnv(t, nil, nil)
	if _, _, te := e.call(t, runner, "run_tests", nil); te == nil || te.Kind != catalog.KindUnavailable || !strings.Contains(te.Message, "ARROWHEAD_REPO_ROOT") {
		t.Errorf("no repository: %v", te)
	}
}

func TestFamilyNeedsItsPorts(t *testing.T) {
	s := coretest.Settings(t, map[string]string{"ARROWHEAD_EXEC_ENABLED": "true"})
	_, err := core.New(coretest.Deps(s, portstest.AllowAll{}, exectools.Family.With(exectools.Ports{Authorizer: portstest.AllowAll{}})))
	if err == nil || !strings.Contains(err.Error(), "Runner") {
		t.Fatalf("an exec family without a runner was built: %v", err)
	}
}
