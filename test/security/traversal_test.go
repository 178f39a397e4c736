package security_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/adapters/wire"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/ports"
)

// readCorpus loads a payload file, decoding \xNN, \uNNNN, \n and \r escapes
// so control and invisible characters can live in a text file.
func readCorpus(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.Contains(line, `\x`) || strings.Contains(line, `\u`) || strings.Contains(line, `\n`) || strings.Contains(line, `\r`) {
			if s, err := strconv.Unquote(`"` + strings.ReplaceAll(line, `"`, `\"`) + `"`); err == nil {
				line = s
			}
		}
		out = append(out, line)
	}
	return out
}

// app builds the full application over a sandbox and a corpus that hold
// symlinks pointing out, plus a secret beside them.
func app(t *testing.T) (*wire.Runtime, string) {
	t.Helper()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	sandbox := filepath.Join(base, "sandbox")
	docs := filepath.Join(base, "docs")
	for _, d := range []string{outside, sandbox, filepath.Join(sandbox, "deep"), docs, filepath.Join(docs, "deep")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := "TOP-SECRET-OUTSIDE-THE-JAIL"
	for _, p := range []string{filepath.Join(base, "secret.txt"), filepath.Join(outside, "secret.txt")} {
		if err := os.WriteFile(p, []byte(secret), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, root := range []string{sandbox, docs} {
		for link, target := range map[string]string{"link-out": outside, "link-file.txt": filepath.Join(outside, "secret.txt"), "deep/link-up": ".."} {
			if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
				t.Fatal(err)
			}
		}
	}
	env := map[string]string{"ARROWHEAD_PROFILE": "docs", "ARROWHEAD_JAIL_ROOT": sandbox, "ARROWHEAD_DOCS_ROOT": docs,
		"ARROWHEAD_DATA_DIR": filepath.Join(base, "data"), "ARROWHEAD_RATE_LIMIT_ENABLED": "false"}
	s := coretest.Settings(t, env)
	rt, err := wire.Build(t.Context(), s, wire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt, secret
}

func TestTraversalCorpus(t *testing.T) {
	rt, secret := app(t)
	op := ports.Operator()
	payloads := readCorpus(t, "traversal_payloads.txt")
	if len(payloads) < 30 {
		t.Fatalf("corpus too small: %d", len(payloads))
	}
	for _, p := range payloads {
		calls := []struct {
			tool string
			args map[string]any
		}{
			{"read_file", map[string]any{"path": p}},
			{"doc_read", map[string]any{"path": p}},
			{"doc_write", map[string]any{"path": p, "content": "x"}},
			{"doc_write", map[string]any{"path": p + ".md", "content": "x"}},
			{"doc_search", map[string]any{"query": "SECRET", "path_prefix": p}},
			{"doc_scan", map[string]any{"path_prefix": p}},
			{"scan_corpus_async", map[string]any{"path_prefix": p}},
		}
		for _, c := range calls {
			res, err := rt.App.Call(t.Context(), op, c.tool, c.args)
			if err == nil {
				// Some payloads are merely odd names (a literal
				// "%2e%2e" directory, a full-width dot): those may run,
				// but only inside the jail, and never reach the secret.
				b, _ := json.Marshal(res.Structured())
				if strings.Contains(string(b), secret) || strings.Contains(res.Text, secret) {
					t.Errorf("%s(%q) reached outside the jail: %s", c.tool, p, b)
				}
				if c.tool == "read_file" || c.tool == "doc_read" {
					t.Errorf("%s(%q) read something: %s", c.tool, p, b)
				}
				if c.tool == "doc_write" {
					written := filepath.Join(rt.Settings.DocsRoot, filepath.FromSlash(res.Structured()["path"].(string)))
					if rel, err := filepath.Rel(rt.Settings.DocsRoot, written); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
						t.Errorf("doc_write(%q) landed outside the corpus", p)
					}
					if _, err := os.Lstat(written); err != nil {
						t.Errorf("doc_write(%q) reported a file that is not in the corpus", p)
					}
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
		if got, err := rt.App.ReadResource(t.Context(), op, "doc://"+p); err == nil && strings.Contains(got[0].Text, secret) {
			t.Errorf("doc://%q reached outside the jail", p)
		}
	}
	// Nothing was written outside (or at all) by the refused writes.
	entries, _ := os.ReadDir(filepath.Join(filepath.Dir(rt.Settings.DocsRoot), "outside"))
	if len(entries) != 1 {
		t.Fatalf("the outside directory changed: %v", entries)
	}
}

func TestCalculateInjectionCorpus(t *testing.T) {
	rt, _ := app(t)
	for _, p := range readCorpus(t, "calc_injection.txt") {
		res, err := rt.App.Call(t.Context(), ports.Operator(), "calculate", map[string]any{"expression": p})
		if err == nil {
			t.Errorf("calculate(%q) = %s", p, res.Text)
			continue
		}
		te, _ := catalog.AsToolError(err)
		if te == nil || te.Kind != catalog.KindValidation || (len(p) > 2 && strings.Contains(te.Message, p)) {
			t.Errorf("calculate(%q): %v", p, err)
		}
	}
}
