package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchesSayHowFarTheyGotOverStdio drives code_search, doc_search
// and code_read through the real binary: a search stopped by a cap says
// which, how far it got and what to raise, "No matches." comes only after
// everything admitted was searched, the files an agent needs (go.sum,
// Makefile, CI workflows) are served, and a refusal names its variable.
func TestSearchesSayHowFarTheyGotOverStdio(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod":                   "module example.com/demo\n",
		"go.sum":                   "example.com/dep v1.0.0 h1:abc=\n",
		"Makefile":                 "test:\n\tgo test ./...\n",
		".github/workflows/ci.yml": "on: push\njobs: {}\n",
		"notes.bin":                "needle\n",
	}
	for i := range 8 {
		files[fmt.Sprintf("pkg/f%d.go", i)] = "package pkg\n\n// needle here\nvar X = 1 // needle again\n"
	}
	for rel, body := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := startStdio(t, map[string]string{
		"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_REPO_ROOT": root,
		"ARROWHEAD_REPO_SEARCH_MAX_FILES": "8", "ARROWHEAD_SEARCH_MAX_RESULTS": "5",
		"ARROWHEAD_SEARCH_MAX_TOTAL_BYTES": "40",
	})

	r := call(t, c, "code_search", map[string]any{"query": "zebracorn"})
	if got := text(r); r.IsError || strings.Contains(got, "No matches.") ||
		!strings.Contains(got, "the file cap (ARROWHEAD_REPO_SEARCH_MAX_FILES=8) stopped it after 8 of 12 files") {
		t.Fatalf("file cap: %s", got)
	}
	r = call(t, c, "code_search", map[string]any{"query": "zebracorn", "path_prefix": "pkg/"})
	if got := text(r); r.IsError || !strings.HasPrefix(got, "No matches. Searched all 8 files under the prefix.") {
		t.Fatalf("complete: %s", got)
	}
	r = call(t, c, "code_search", map[string]any{"query": "needle", "path_prefix": "pkg/"})
	got := text(r)
	if r.IsError || !strings.Contains(got, "Showing the first 5 matches in path order; more exist. The result cap (ARROWHEAD_SEARCH_MAX_RESULTS=5)") ||
		!strings.Contains(got, "pkg/f0.go:3:4: // needle here") || !strings.Contains(got, "pkg/f2.go:3:4:") || strings.Contains(got, "pkg/f2.go:4:") {
		t.Fatalf("result cap: %s", got)
	}
	if sc := r.StructuredContent.(map[string]any); sc["complete"] != false || fmt.Sprint(sc["truncated"]) != "[results]" {
		t.Fatalf("result cap structured: %v", sc)
	}
	r = call(t, c, "code_search", map[string]any{"query": "needle", "use_regex": true})
	if got := text(r); !r.IsError || !strings.Contains(got, "ARROWHEAD_SEARCH_REGEX_ENABLED") {
		t.Fatalf("regex refusal: %s", got)
	}

	for _, p := range []string{"go.sum", "Makefile", ".github/workflows/ci.yml"} {
		r = call(t, c, "code_read", map[string]any{"path": p})
		if got := text(r); r.IsError || !strings.Contains(got, strings.SplitN(files[p], "\n", 2)[0]) {
			t.Fatalf("code_read(%s): %s", p, got)
		}
	}
	for _, p := range []string{"notes.bin", "absent.bin"} {
		r = call(t, c, "code_read", map[string]any{"path": p})
		if got := text(r); !r.IsError || strings.Contains(strings.ToLower(got), "not found") || strings.Contains(got, p) ||
			!strings.Contains(got, "ARROWHEAD_REPO_ALLOWED_EXTENSIONS") || !strings.Contains(got, "ARROWHEAD_REPO_ALLOWED_NAMES") {
			t.Fatalf("code_read(%s): %s", p, got)
		}
	}

	// doc_search's wall-clock budget (250 ms by default) is raised so that
	// only the byte budget can stop these searches, on a loaded CI machine
	// too; the time limit's own answer is tested in core/search.
	d, _ := startStdio(t, map[string]string{"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_SEARCH_MAX_TOTAL_BYTES": "40",
		"ARROWHEAD_SEARCH_REGEX_TIMEOUT_MS": "60000"})
	for _, p := range []string{"a.md", "b.md", "c.md"} {
		call(t, d, "doc_write", map[string]any{"path": p, "content": "the deadline is friday\n"})
	}
	r = call(t, d, "doc_search", map[string]any{"query": "deadline"})
	if got := text(r); r.IsError || !strings.Contains(got, "a.md:1:5: the deadline is friday") ||
		!strings.Contains(got, "the byte budget (ARROWHEAD_SEARCH_MAX_TOTAL_BYTES=40) stopped it after 2 of 3 documents") {
		t.Fatalf("doc_search byte budget: %s", got)
	}
	r = call(t, d, "doc_search", map[string]any{"query": "deadline", "path_prefix": "c.md"})
	if got := text(r); r.IsError || !strings.HasPrefix(got, "1 match. Searched the one document under the prefix.") {
		t.Fatalf("doc_search: %s", got)
	}
}
