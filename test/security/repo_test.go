package security_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// repoApp builds the coding profile over a repository holding symlinks
// that point out (to a directory, a file, up the tree), version-control
// and dependency directories, and binary files, each carrying the secret.
func repoApp(t *testing.T) (*wire.Runtime, string) {
	t.Helper()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	root := filepath.Join(base, "repo")
	secret := "TOP-SECRET-OUTSIDE-THE-REPO"
	files := map[string]string{
		"outside/secret.py":         "SECRET = '" + secret + "'\n",
		"secret.py":                 "SECRET = '" + secret + "'\n",
		"repo/src/ok.py":            "def ok():\n    return 'fine'\n",
		"repo/.git/config":          "[remote]\nurl = https://" + secret + "@example.com/x.git\n",
		"repo/.git/hooks/x.sh":      "echo " + secret + "\n",
		"repo/.GIT/config.py":       "S = '" + secret + "'\n",
		"repo/node_modules/m/i.js":  "module.exports = '" + secret + "'\n",
		"repo/src/__pycache__/c.py": "S = '" + secret + "'\n",
		"repo/.venv/lib/s.py":       "S = '" + secret + "'\n",
		"repo/src/blob.py":          "S = 1\x00" + secret,
		"repo/src/image.go":         "\x89PNG\r\n\x1a\n\x00\x00" + secret,
	}
	coretest.WriteFiles(t, base, files)
	for link, target := range map[string]string{"link-out": outside, "link-file.py": filepath.Join(outside, "secret.py"),
		"src/link-up": "..", "src/link-git": filepath.Join(root, ".git"), "src/link-rel.py": "../../secret.py"} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_REPO_ROOT": root, "ARROWHEAD_JAIL_ROOT": filepath.Join(base, "sandbox"),
		"ARROWHEAD_DOCS_ROOT": filepath.Join(base, "docs"), "ARROWHEAD_DATA_DIR": filepath.Join(base, "data"),
		"ARROWHEAD_RATE_LIMIT_ENABLED": "false", "ARROWHEAD_SEARCH_REGEX_ENABLED": "true"}
	if err := os.MkdirAll(env["ARROWHEAD_JAIL_ROOT"], 0o755); err != nil {
		t.Fatal(err)
	}
	s := coretest.Settings(t, env)
	rt, err := wire.Build(t.Context(), s, wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt, secret
}

// TestRepoTraversalCorpus applies the traversal corpus to every repo tool,
// plus the version-control, dependency-directory, binary and symlink
// paths of the tree: nothing may reach the secret, and no refusal may echo
// the path.
func TestRepoTraversalCorpus(t *testing.T) {
	rt, secret := repoApp(t)
	op := ports.Operator()
	payloads := append(readCorpus(t, "traversal_payloads.txt"),
		".git/config", ".git/hooks/x.sh", ".GIT/config.py", "./.git/config", "src/../.git/config", "node_modules/m/i.js",
		"src/__pycache__/c.py", ".venv/lib/s.py", "src/blob.py", "src/image.go", "link-out/secret.py", "link-file.py",
		"src/link-up/secret.py", "src/link-up/repo/.git/config", "src/link-git/config", "src/link-rel.py")
	for _, p := range payloads {
		calls := []struct {
			tool string
			args map[string]any
		}{
			{"code_read", map[string]any{"path": p}},
			{"code_read", map[string]any{"path": p, "start_line": 1, "end_line": 1}},
			{"code_search", map[string]any{"query": "SECRET", "path_prefix": p}},
			{"code_search", map[string]any{"query": "TOP-.*-REPO", "path_prefix": p, "use_regex": true}},
			{"symbol_map", map[string]any{"path_prefix": p}},
			{"dependency_graph", map[string]any{"path_prefix": p}},
		}
		for _, c := range calls {
			res, err := rt.App.Call(t.Context(), op, c.tool, c.args)
			if err == nil {
				b, _ := json.Marshal(res.Structured())
				if strings.Contains(string(b), secret) || strings.Contains(res.Text, secret) {
					t.Errorf("%s(%q) reached the secret: %s", c.tool, p, b)
				}
				if c.tool == "code_read" {
					t.Errorf("code_read(%q) read something: %s", p, b)
				}
				continue
			}
			te, ok := catalog.AsToolError(err)
			if !ok || te.Kind == catalog.KindInternal {
				t.Errorf("%s(%q): %v", c.tool, p, err)
				continue
			}
			if len(p) > 3 && strings.Contains(te.Message, p) {
				t.Errorf("%s(%q): the refusal echoes the payload", c.tool, p)
			}
			if strings.Contains(te.Message, secret) {
				t.Errorf("%s(%q): the refusal leaks the secret", c.tool, p)
			}
		}
	}
	// A whole-tree walk of every tool reaches only the real source file.
	for tool, args := range map[string]map[string]any{"code_search": {"query": "S"}, "symbol_map": {}, "dependency_graph": {}} {
		res, err := rt.App.Call(t.Context(), op, tool, args)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		b, _ := json.Marshal(res.Structured())
		if strings.Contains(string(b), secret) || strings.Contains(string(b), ".git") || strings.Contains(string(b), "node_modules") ||
			strings.Contains(string(b), "blob") || strings.Contains(string(b), "link") {
			t.Errorf("%s over the whole tree: %s", tool, b)
		}
	}
}
