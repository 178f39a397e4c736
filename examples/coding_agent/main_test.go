package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/sandbox"
)

// TestWalkthrough runs the walkthrough and checks that every tool call
// succeeded and printed its section, with the facts the sample repository
// fixes (found here by reading the files, not through the tools).
func TestWalkthrough(t *testing.T) {
	before := snapshot(t)
	var out bytes.Buffer
	called, err := run(t.Context(), &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	want := []string{"code_search", "code_read", "symbol_map", "dependency_graph",
		"workingset_update", "workingset_get", "pack_context", "code_explain", "summarize_diff", "rerank"}
	_, noPython := sandbox.LookPath("python3")
	if noPython == nil {
		want = append(want, "run_snippet", "run_tests")
	} else if !strings.Contains(out.String(), "skipping run_snippet and run_tests") {
		t.Errorf("python3 is missing but the walkthrough did not say it skipped the exec tools")
	}
	if !slices.Equal(called, want) {
		t.Fatalf("called %v, want %v", called, want)
	}
	sections := map[string]string{}
	for _, part := range strings.Split("\n"+out.String(), "\n== ")[1:] {
		name, _, _ := strings.Cut(part, " ")
		sections[name] = part
	}
	todo := grepLine(t, "inventory/stock.py", "TODO")
	// pack_context pins the whole of stock.py: its manifest carries the
	// file's line count and the SHA-256 of its bytes.
	stock, err := os.ReadFile(filepath.Join(sampleRoot(), "inventory", "stock.py"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(stock, []byte("\n"))
	stockSum := fmt.Sprintf("%x", sha256.Sum256(stock))
	expect := map[string][]string{
		"code_search":       {"1 match(es)", fmt.Sprintf("inventory/stock.py:%d", todo)},
		"code_read":         {"UNTRUSTED-DATA-BEGIN", "def remove(self, item, units):", "UNTRUSTED-DATA-END"},
		"symbol_map":        {"Stock.remove", "method", "Price", "shipping/rates/rates.go", "go/parser", "python-tokenizer"},
		"dependency_graph":  {"inventory.report -> inventory.stock (internal)", "example.com/shipping/cmd/quote -> example.com/shipping/rates (internal)", "-> errors (external)"},
		"workingset_update": {"working set stock-work holds 2 item(s)", "repo_file inventory/stock.py", "doc       inventory-guide.md"},
		"workingset_get":    {"working set stock-work holds 2 item(s)"},
		"pack_context": {"cl100k_base", "0 dropped",
			fmt.Sprintf("pinned    repo_file inventory/stock.py:1-%d", lines), "sha256 " + stockSum[:12],
			"pinned    doc       inventory-guide.md", "retrieved repo_file inventory/report.py"},
		"code_explain":   {"UNTRUSTED-DATA-BEGIN", "`Stock`, `__init__`, `add`, `remove`", "UNTRUSTED-DATA-END"},
		"summarize_diff": {"UNTRUSTED-DATA-BEGIN", "adds 2 line(s) and removes 1"},
		"rerank":         {"[1 2 0]"},
		"run_snippet":    {"exit 0", "environment=scrubbed", "45"},
		"run_tests":      {"exit 0", "Ran 3 tests", "OK"},
	}
	for _, tool := range want {
		section, ok := sections[tool]
		if !ok {
			t.Errorf("no %s section in:\n%s", tool, out.String())
			continue
		}
		for _, s := range expect[tool] {
			if !strings.Contains(section, s) {
				t.Errorf("the %s section lacks %q:\n%s", tool, s, section)
			}
		}
	}
	if after := snapshot(t); !slices.Equal(before, after) {
		t.Errorf("the walkthrough changed the sample repository: %v -> %v", before, after)
	}
}

// grepLine is the 1-based line of rel's first line containing s.
func grepLine(t *testing.T, rel, s string) int {
	t.Helper()
	f, err := os.Open(filepath.Join(sampleRoot(), rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.Contains(sc.Text(), s) {
			return n
		}
	}
	t.Fatalf("%s has no %q", rel, s)
	return 0
}

// snapshot lists the sample's files with their sizes.
func snapshot(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(sampleRoot(), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, fmt.Sprintf("%s:%d", p, info.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
