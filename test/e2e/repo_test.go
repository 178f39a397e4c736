package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// repoTree writes a small source tree with a .git directory, a dependency
// directory and a binary file, and returns its root.
func repoTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for rel, body := range map[string]string{
		"src/app.py":          "import os\n\nclass App:\n    def run(self):\n        return 'needle'\n",
		"lib/lib.go":          "package lib\n\nimport \"fmt\"\n\nfunc Hello() { fmt.Println(\"needle\") }\n",
		"go.mod":              "module example.com/demo\n",
		"web/app.js":          "function greet() {\n  return 'hi';\n}\n",
		".git/config":         "[remote]\nurl = https://" + canary + "@example.com/needle.git\n",
		"node_modules/m/i.js": "// needle " + canary + "\n",
		"bin/blob.go":         "package blob // needle\x00" + canary,
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestRepoToolsOverStdio(t *testing.T) {
	root := repoTree(t)
	for _, leg := range legs {
		t.Run(leg.name, func(t *testing.T) {
			c, stderr := startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_REPO_ROOT": root}, leg.opts...)
			r := call(t, c, "code_search", map[string]any{"query": "needle"})
			got := text(r)
			if r.IsError || !strings.Contains(got, "src/app.py:5:") || !strings.Contains(got, "lib/lib.go:5:") || strings.Contains(got, canary) {
				t.Fatalf("code_search: %s", got)
			}
			if sc, ok := r.StructuredContent.(map[string]any); !ok || len(sc["matches"].([]any)) != 2 {
				t.Fatalf("code_search structured: %#v", r.StructuredContent)
			}
			r = call(t, c, "code_read", map[string]any{"path": "src/app.py", "start_line": 3, "end_line": 4})
			if got := text(r); r.IsError || !strings.Contains(got, "class App:\n    def run(self):\n") || strings.Contains(got, "needle") {
				t.Fatalf("code_read: %s", got)
			}
			for _, p := range []string{".git/config", "node_modules/m/i.js", "bin/blob.go", "../../etc/passwd"} {
				r = call(t, c, "code_read", map[string]any{"path": p})
				if got := text(r); !r.IsError || strings.Contains(got, canary) || strings.Contains(got, p) {
					t.Fatalf("code_read(%q): %s", p, got)
				}
			}
			r = call(t, c, "symbol_map", map[string]any{"format": "lines"})
			if got := text(r); r.IsError || !strings.Contains(got, "src/app.py:4-5: method App.run") || !strings.Contains(got, "lib/lib.go:5-5: function Hello") {
				t.Fatalf("symbol_map: %s", got)
			}
			// The compact default names each path once; filters ask for less.
			compact := call(t, c, "symbol_map", map[string]any{"kinds": []any{"class", "method"}, "include_tests": false})
			if got := text(compact); compact.IsError || !strings.Contains(got, "\nsrc/app.py\n3 class App\n  4 meth run\n") || strings.Contains(got, "Hello") {
				t.Fatalf("compact, filtered symbol_map: %s", got)
			}
			cut := call(t, c, "symbol_map", map[string]any{"path_prefix": "", "kinds": []any{"function", "class", "method"}})
			if got := text(cut); cut.IsError || strings.Contains(got, "Stopped early") {
				t.Fatalf("an uncut map says it stopped: %s", got)
			}
			r = call(t, c, "symbol_map", map[string]any{})
			// Other languages go to Universal Ctags when it is on PATH
			// (CI installs it), else to the line heuristic.
			want := "line-heuristic"
			if _, err := exec.LookPath("ctags"); err == nil {
				want = "universal-ctags"
			} else if os.Getenv("ARROWHEAD_REQUIRE_INTEGRATION") == "1" {
				t.Fatal("universal-ctags is not installed")
			}
			sc, _ := r.StructuredContent.(map[string]any)
			if ex, _ := sc["extractor"].([]any); !slices.Contains(ex, any(want)) || !strings.Contains(text(r), "\nweb/app.js\n1 ") {
				t.Fatalf("symbol_map extractors %v, want %s: %s", sc["extractor"], want, text(r))
			}
			r = call(t, c, "dependency_graph", map[string]any{})
			if got := text(r); r.IsError || !strings.Contains(got, "app -> os (external)") || !strings.Contains(got, "example.com/demo/lib -> fmt (external)") {
				t.Fatalf("dependency_graph: %s", got)
			}
			if strings.Contains(stderr.String(), canary) || strings.Contains(stderr.String(), "needle") {
				t.Fatal("repository content or arguments reached the log")
			}
		})
	}
}

func TestRepoToolsNotConfiguredOverStdio(t *testing.T) {
	c, _ := startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "coding"})
	r := call(t, c, "code_search", map[string]any{"query": "x"})
	if !r.IsError || !strings.Contains(text(r), "ARROWHEAD_REPO_ROOT") {
		t.Fatalf("code_search without a repository: %s", text(r))
	}
}
