package security_test

//go:generate go run gen_render_corpus.go

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/core/content"
)

// requireIntegrationEnv turns a missing renderer installation into a
// failure, as for the other suites that need something outside Go.
const requireIntegrationEnv = "ARROWHEAD_REQUIRE_INTEGRATION"

// renderDir holds the pinned renderers (package.json, package-lock.json)
// and the script that drives them.
var renderDir = filepath.Join("..", "render")

// renderTimeout bounds one run of the render script over a whole corpus.
const renderTimeout = 5 * time.Minute

// rendered is what the render script reports for one input and renderer.
type rendered struct {
	Violations []string `json:"violations"`
	Text       string   `json:"text"`
}

// renderAll renders each Markdown input with every renderer the script
// knows (markdown-it with html and linkify, marked, remark-gfm with and
// without raw HTML) and returns, per input, the report per renderer.
func renderAll(t *testing.T, inputs []string) []map[string]rendered {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(renderDir, "node_modules", "markdown-it"))
	}
	if err != nil {
		msg := fmt.Sprintf("the render check needs node and the pinned renderers (cd test/render && npm ci): %v", err)
		if os.Getenv(requireIntegrationEnv) == "1" {
			t.Fatalf("RENDER CHECK REQUIRED (%s=1) but unavailable: %s", requireIntegrationEnv, msg)
		}
		t.Skipf("\n*** SKIPPING RENDER CHECK %s: %s\n*** Set %s=1 to make this a failure.", t.Name(), msg, requireIntegrationEnv)
	}
	// Many sanitized inputs come out the same: render each text once.
	var unique []string
	slot := make(map[string]int, len(inputs))
	for _, s := range inputs {
		if _, ok := slot[s]; !ok {
			slot[s] = len(unique)
			unique = append(unique, s)
		}
	}
	in, err := json.Marshal(unique)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), renderTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "render.mjs")
	cmd.Dir = renderDir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("render script: %v\n%s", err, stderr.String())
	}
	var res []map[string]rendered
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("render script output: %v", err)
	}
	if len(res) != len(unique) {
		t.Fatalf("render script answered %d of %d inputs", len(res), len(unique))
	}
	for _, r := range res {
		if len(r) < 4 {
			t.Fatalf("render script ran %d renderers, want 4", len(r))
		}
	}
	all := make([]map[string]rendered, len(inputs))
	for i, s := range inputs {
		all[i] = res[slot[s]]
	}
	return all
}

// readEscapedCorpus reads a corpus whose every non-comment line is the
// inside of a Go string literal.
func readEscapedCorpus(t *testing.T, name string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		if line == "" || strings.HasPrefix(line, "# ") {
			continue
		}
		s, err := strconv.Unquote(`"` + strings.ReplaceAll(line, `"`, `\"`) + `"`)
		if err != nil {
			t.Fatalf("%s:%d: %v", name, i+1, err)
		}
		out = append(out, s)
	}
	return out
}

// violations lists "renderer: violation" for one input's reports.
func violations(r map[string]rendered) []string {
	var out []string
	for name, rep := range r {
		for _, v := range rep.Violations {
			out = append(out, name+": "+v)
		}
	}
	sort.Strings(out)
	return out
}

// frameVisible reports renderers whose visible text lacks either marker
// line of f.
func frameVisible(f content.Framed, r map[string]rendered) []string {
	var lost []string
	for name, rep := range r {
		if !strings.Contains(rep.Text, "UNTRUSTED-DATA-BEGIN "+f.Marker) || !strings.Contains(rep.Text, "UNTRUSTED-DATA-END "+f.Marker) {
			lost = append(lost, name)
		}
	}
	sort.Strings(lost)
	return lost
}

// TestRenderedMarkdownIsInert is the check a client's view gives: each
// hostile input, sanitized, alone and framed under a hostile name, is
// rendered by four real renderers, and the HTML must hold no auto-loading
// element, no event handler and no link but an absolute http(s) one
// without user information; the frame's markers must stay visible. The
// same inputs unsanitized must mostly trip the check, or the corpus (or
// the check) has lost its teeth.
func TestRenderedMarkdownIsInert(t *testing.T) {
	corpus := readEscapedCorpus(t, "render_corpus.txt")
	names := readEscapedCorpus(t, "render_identifiers.txt")
	if len(corpus) < 500 {
		t.Fatalf("render corpus has %d inputs", len(corpus))
	}
	var inputs []string
	var frames []content.Framed
	for i, raw := range corpus {
		clean, err := content.SanitizeMarkdown([]byte(raw))
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		f := content.Frame(clean, content.NewSource("document", names[i%len(names)], "markdown", []byte(raw)))
		frames = append(frames, f)
		inputs = append(inputs, raw, clean, f.Text)
	}
	results := renderAll(t, inputs)
	tame := 0
	for i, raw := range corpus {
		r := results[3*i : 3*i+3]
		if len(violations(r[0])) == 0 {
			// Some inputs test the sanitizer's robustness with spellings
			// no renderer honours; most must be live as they are.
			tame++
		}
		if v := violations(r[1]); len(v) > 0 {
			t.Errorf("input %d %q sanitized to %q renders live:\n  %s", i, raw, frames[i].Content, strings.Join(v, "\n  "))
		}
		if v := violations(r[2]); len(v) > 0 {
			t.Errorf("input %d %q framed renders live:\n  %s", i, raw, strings.Join(v, "\n  "))
		}
		if lost := frameVisible(frames[i], r[2]); len(lost) > 0 {
			t.Errorf("input %d %q: frame markers not visible under %v", i, raw, lost)
		}
	}
	if tame > len(corpus)/3 {
		t.Errorf("%d of %d inputs render inert even unsanitized: the check or the corpus has lost its teeth", tame, len(corpus))
	}
	t.Logf("%d inputs rendered by 4 renderers raw, sanitized and framed; %d inert even raw", len(corpus), tame)
}

// TestFrameHeaderIsInert frames a document under each hostile name: the
// header must render inert and show the name as text, and the markers must
// stay visible. Each name rendered on its own must trip the check.
func TestFrameHeaderIsInert(t *testing.T) {
	names := readEscapedCorpus(t, "render_identifiers.txt")
	var inputs []string
	var frames []content.Framed
	for _, name := range names {
		f := content.Frame("body text\n", content.NewSource("document", name, "markdown", []byte("body text\n")))
		frames = append(frames, f)
		inputs = append(inputs, f.Text)
	}
	results := renderAll(t, inputs)
	for i, name := range names {
		if v := violations(results[i]); len(v) > 0 {
			t.Errorf("name %q renders live in the header:\n  %s\n%s", name, strings.Join(v, "\n  "), frames[i].Text)
		}
		if lost := frameVisible(frames[i], results[i]); len(lost) > 0 {
			t.Errorf("name %q: frame markers not visible under %v:\n%s", name, lost, frames[i].Text)
		}
	}
}
