package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
	"github.com/arrowhead-go/arrowhead/adapters/sandboxtest"
	"github.com/arrowhead-go/arrowhead/policies"
)

// execCanary rides in snippet code: arguments are never logged.
const execCanary = "CANARY-exec-7e57c0de-must-not-be-logged"

// execRepo is the repository run_tests copies: one passing test that also
// tries to change its copy.
var execRepo = map[string]string{
	"src/__init__.py": "",
	"src/calc.py":     "def add(a, b):\n    return a + b\n",
	"src/test_calc.py": "import unittest\nfrom src.calc import add\n\nclass T(unittest.TestCase):\n" +
		"    def test_add(self):\n        open('src/calc.py', 'w').write('changed')\n        self.assertEqual(add(1, 2), 3)\n",
}

// requireRunner skips (or fails) t when the runner cannot run here: no
// bwrap, or no user namespaces for an unprivileged user.
func requireRunner(t *testing.T, runner string) {
	t.Helper()
	sandboxtest.RequirePython(t)
	_, err := sandbox.New(t.Context(), sandbox.Config{Runner: runner, Workdir: sandboxtest.Workdir(t)})
	if errors.Is(err, sandbox.ErrUnavailable) {
		sandboxtest.SkipOrFail(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestStdioExecFamily(t *testing.T) {
	for _, runner := range []string{"subprocess", "bubblewrap"} {
		for _, leg := range legs {
			t.Run(runner+"/"+leg.name, func(t *testing.T) {
				requireRunner(t, runner)
				repo := t.TempDir()
				for rel, body := range execRepo {
					p := filepath.Join(repo, filepath.FromSlash(rel))
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				c, stderr := startStdio(t, map[string]string{
					"ARROWHEAD_PROFILE":           "coding",
					"ARROWHEAD_EXEC_ENABLED":      "true",
					"ARROWHEAD_EXEC_RUNNER":       runner,
					"ARROWHEAD_EXEC_WORKDIR":      sandboxtest.Workdir(t),
					"ARROWHEAD_EXEC_TEST_COMMAND": "python3 -I -m unittest discover -s src -t .",
					"ARROWHEAD_REPO_ROOT":         repo,
				}, leg.opts...)
				names := toolNames(t, c)
				if !slices.Contains(names, "run_snippet") || !slices.Contains(names, "run_tests") {
					t.Fatalf("tools = %v", names)
				}

				token := "ghp_" + strings.Repeat("Z9y8", 9)
				r := call(t, c, "run_snippet", map[string]any{"code": "# " + execCanary + "\nprint(2 + 2)\nprint('" + token + "')"})
				sc, _ := r.StructuredContent.(map[string]any)
				if r.IsError || sc == nil {
					t.Fatalf("run_snippet: %s", text(r))
				}
				stdout, _ := sc["stdout"].(string)
				if !strings.HasPrefix(stdout, "4\n") || strings.Contains(stdout, token) || strings.Contains(text(r), token) {
					t.Fatalf("stdout %q", stdout)
				}
				enforced, _ := sc["enforced"].(map[string]any)
				if sc["runner"] != runner || enforced["environment"] != "scrubbed" {
					t.Fatalf("receipt %v", sc)
				}
				if wantNet := map[string]string{"subprocess": "host", "bubblewrap": "none"}[runner]; enforced["network"] != wantNet {
					t.Fatalf("network %v, want %s", enforced["network"], wantNet)
				}
				if !strings.Contains(text(r), "UNTRUSTED-DATA-BEGIN") {
					t.Fatalf("the output is not framed: %s", text(r))
				}

				r = call(t, c, "run_tests", map[string]any{"path_prefix": "src/"})
				sc, _ = r.StructuredContent.(map[string]any)
				if r.IsError || sc == nil || sc["exit_code"] != float64(0) || !strings.Contains(sc["stderr"].(string), "OK") {
					t.Fatalf("run_tests: %s", text(r))
				}
				if b, _ := os.ReadFile(filepath.Join(repo, "src", "calc.py")); string(b) != execRepo["src/calc.py"] {
					t.Fatal("run_tests changed the repository")
				}

				r = call(t, c, "run_snippet", map[string]any{"code": strings.Repeat("x", 100_001)})
				if !r.IsError || strings.Contains(text(r), "xxxx") {
					t.Fatalf("an oversized snippet was not refused cleanly: %.200s", text(r))
				}

				waitFor(t, func() bool { return strings.Count(stderr.String(), `"msg":"audit"`) >= 3 })
				if strings.Contains(stderr.String(), execCanary) || strings.Contains(stderr.String(), token) {
					t.Fatal("snippet code or output reached the log")
				}
			})
		}
	}
}

func TestStdioExecFamilyIsGated(t *testing.T) {
	c, _ := startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "coding"})
	if names := toolNames(t, c); slices.Contains(names, "run_snippet") || slices.Contains(names, "run_tests") {
		t.Fatalf("the exec family is listed without ARROWHEAD_EXEC_ENABLED: %v", names)
	}
	if r := call(t, c, "run_snippet", map[string]any{"code": "print(1)"}); !r.IsError || text(r) != "Unknown tool." {
		t.Fatalf("run_snippet ran without ARROWHEAD_EXEC_ENABLED: %s", text(r))
	}
}

// TestHTTPExecNeedsTheExecuteGrant: over HTTP with auth on, the exec:run
// scope shows the tools, but only a policy's execute grant runs them; the
// shipped default policy grants it to nobody.
func TestHTTPExecNeedsTheExecuteGrant(t *testing.T) {
	requireRunner(t, "subprocess")
	grantCI := string(policies.Example("coding-agent.json"))
	for _, tc := range []struct {
		name, policy string
		allowed      map[string]bool
	}{
		{"default policy", "", map[string]bool{"ci-agent": false, "alice": false}},
		{"coding-agent policy", grantCI, map[string]bool{"ci-agent": true, "alice": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startHTTP(t, map[string]string{
				"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_EXEC_ENABLED": "true",
				"ARROWHEAD_EXEC_WORKDIR": sandboxtest.Workdir(t), "ARROWHEAD_AUTHZ_POLICY": tc.policy,
			})
			for _, leg := range legs {
				c := s.connect(t, s.token(t, "nobody-scoped", "tools:read"), leg.opts...)
				if r := call(t, c, "run_snippet", map[string]any{"code": "print(1)"}); !r.IsError || text(r) != "Unknown tool." {
					t.Fatalf("%s: without exec:run: %s", leg.name, text(r))
				}
				for subject, allowed := range tc.allowed {
					c := s.connect(t, s.token(t, subject, "exec:run"), leg.opts...)
					r := call(t, c, "run_snippet", map[string]any{"code": "print(6 * 7)"})
					sc, _ := r.StructuredContent.(map[string]any)
					switch {
					case allowed && (r.IsError || sc["stdout"] != "42\n"):
						t.Fatalf("%s: %s was granted execute but: %s", leg.name, subject, text(r))
					case !allowed && (!r.IsError || text(r) != "Not authorized for this resource."):
						t.Fatalf("%s: %s ran without the execute grant: %s", leg.name, subject, text(r))
					}
				}
			}
		})
	}
}
