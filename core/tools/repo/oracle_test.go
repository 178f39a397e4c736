package repo_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// oracleTrees are real trees nobody here wrote: Go's own src/ (larger
// than the default file cap), a Go module from the module cache, and a
// Python package of this machine's standard library.
func oracleTrees(t *testing.T) map[string]string {
	t.Helper()
	trees := map[string]string{"goroot": filepath.Join(runtime.GOROOT(), "src")}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/mark3labs/mcp-go").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("the mcp-go module is not in the module cache (go mod download): %v", err)
	}
	trees["gomodule"] = strings.TrimSpace(string(out))
	out, err = exec.Command("python3", "-c", "import email, os; print(os.path.dirname(email.__file__))").Output()
	if err != nil {
		t.Fatalf("python3 is required for the Python tree: %v", err)
	}
	trees["python"] = strings.TrimSpace(string(out))
	for name, root := range trees {
		if _, err := os.Stat(root); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return trees
}

// admitted is the oracle's own listing of what code_search may search at
// the given settings, written without the store: every regular file with
// a served name under no excluded directory, in lexical order of its
// slash path, the first RepoSearchMaxFiles of them; the second result
// drops those over the per-file cap. It also returns the whole count.
func admitted(t *testing.T, root string, s *settings.Settings) (listed []string, searched []string, total int) {
	t.Helper()
	excluded := map[string]bool{}
	for _, d := range s.RepoExcludedDirs {
		excluded[strings.ToLower(d)] = true
	}
	var all []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && excluded[strings.ToLower(d.Name())] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		name := d.Name()
		ext := path.Ext(name)
		if slices.Contains(s.RepoAllowedNames, name) || (ext != "" && ext != name && slices.Contains(s.RepoAllowedExtensions, ext)) {
			rel, _ := filepath.Rel(root, p)
			all = append(all, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(all)
	listed = all[:min(len(all), s.RepoSearchMaxFiles)]
	for _, rel := range listed {
		st, err := os.Stat(filepath.Join(root, rel))
		if err == nil && st.Size() <= int64(s.RepoMaxFileBytes) {
			searched = append(searched, rel)
		}
	}
	return listed, searched, len(all)
}

// grepFiles is grep -nHF over exactly these files, in this order (binary
// files skipped by grep's own detection, in the C locale): "path:line"
// and the line's text, per matching line.
func grepFiles(t *testing.T, root, query string, files []string) (hits, lines []string) {
	t.Helper()
	for chunk := range slices.Chunk(files, 2000) {
		cmd := exec.Command("grep", append([]string{"-nHF", "--binary-files=without-match", "--", query}, chunk...)...)
		cmd.Dir, cmd.Env = root, []string{"LC_ALL=C"}
		out, err := cmd.Output()
		if err != nil && cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("grep: %v", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			p, rest, _ := strings.Cut(sc.Text(), ":")
			line, text, _ := strings.Cut(rest, ":")
			hits = append(hits, p+":"+line)
			lines = append(lines, text)
		}
	}
	return hits, lines
}

// TestCodeSearchAtDefaultsEqualsGrep runs code_search at default settings
// on three real trees and requires grep's answer over the admitted files:
// all of it when it is within the result cap, its first cap-many lines
// otherwise, with the text saying which cap stopped the search and how far
// it got; "No matches." only when everything admitted was searched.
func TestCodeSearchAtDefaultsEqualsGrep(t *testing.T) {
	s, err := settings.Load(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	queries := map[string][]string{
		"goroot":   {"func NewRequest", "context.Context", "zebracorn-absent-4711"},
		"gomodule": {"func NewTool(", "context.Context", "zebracorn-absent-4711"},
		"python":   {"def __init__", "import re", "zebracorn-absent-4711"},
	}
	for name, root := range oracleTrees(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, root, nil, nil, nil)
			listed, searched, total := admitted(t, root, s)
			for _, q := range queries[name] {
				res := e.ok(t, "code_search", map[string]any{"query": q})
				want, wantText := grepFiles(t, root, q, searched)
				var got []string
				for i, m := range res.Structured()["matches"].([]any) {
					mm := m.(map[string]any)
					got = append(got, fmt.Sprintf("%s:%v", mm["path"], mm["line"]))
					sn := mm["snippet"].(string)
					if !strings.Contains(sn, q) {
						t.Errorf("%q: snippet %q lacks the query", q, sn)
					}
					// A short printable ASCII line comes back as it is.
					if i < len(wantText) && len(wantText[i]) <= s.SearchSnippetMaxChars && printableASCII(wantText[i]) && sn != wantText[i] {
						t.Errorf("%q: snippet %q, grep's line %q", q, sn, wantText[i])
					}
				}
				text := res.Text
				capped := len(want) > s.SearchMaxResults
				if capped {
					want = want[:s.SearchMaxResults]
				}
				if !slices.Equal(got, want) {
					t.Errorf("%q: %d hits, grep %d (first cap-many)\n%s", q, len(got), len(want), orderedDiff(want, got))
				}
				// The whole listing is counted unless the result cap
				// stopped the walk first.
				if n := int(res.Structured()["files_listed"].(float64)); n > total || (!capped && n != total) {
					t.Errorf("%q: files_listed %d, the oracle lists %d", q, n, total)
				}
				// Redaction is on, as it is by default: every answer says
				// so, in the text and the structure.
				if !strings.HasSuffix(head(text), " "+search.SecretsNote) || res.Structured()["secrets_redacted"] != true {
					t.Errorf("%q: the redaction is not stated: %v\n%s", q, res.Structured()["secrets_redacted"], head(text))
				}
				tr := res.Structured()["truncated"].([]any)
				switch {
				case capped:
					if !slices.Contains(tr, any("results")) || !strings.Contains(text, "ARROWHEAD_SEARCH_MAX_RESULTS=50") ||
						!strings.Contains(text, "Showing the first 50 matches") {
						t.Errorf("%q: the result cap is not stated: %v\n%s", q, tr, head(text))
					}
				case total > len(listed):
					if !slices.Contains(tr, any("files")) || !strings.Contains(text, "ARROWHEAD_REPO_SEARCH_MAX_FILES=5000") ||
						!strings.Contains(text, "of "+thousands(total)+" files") {
						t.Errorf("%q: the file cap is not stated: %v\n%s", q, tr, head(text))
					}
					if strings.HasPrefix(text, "No matches.") {
						t.Errorf("%q: \"No matches.\" for a search that did not finish", q)
					}
				default:
					if len(tr) != 0 || res.Structured()["complete"] != true {
						t.Errorf("%q: cut short: %v", q, tr)
					}
					if len(want) == 0 && !strings.HasPrefix(text, "No matches. Searched all "+thousands(len(listed))+" files. "+search.SecretsNote+"\n") {
						t.Errorf("%q: %s", q, head(text))
					}
				}
				t.Logf("%q: %d hits agree with grep over %d of %d files: %s", q, len(want), len(searched), total, head(text))
			}
		})
	}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

func orderedDiff(want, got []string) string {
	var b strings.Builder
	for i := range max(len(want), len(got)) {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			fmt.Fprintf(&b, "  %d: grep %q, code_search %q\n", i, w, g)
		}
		if b.Len() > 2000 {
			break
		}
	}
	return b.String()
}

func head(text string) string {
	first, _, _ := strings.Cut(text, "\n")
	return first
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestCodeSearchSaysWhatRedactionHides: a repository holding an AWS key
// and a comment naming its prefix. grep finds both lines for "AKIA";
// code_search, which redacts before matching, finds the comment only, so
// its answer must say that text inside a secret is never found, in the
// text and the structure. grep still agrees on every line outside the
// secret. A right guess at the key reads exactly as a wrong one, and with
// ARROWHEAD_REDACT_READS=false the search finds both lines and makes no
// claim.
func TestCodeSearchSaysWhatRedactionHides(t *testing.T) {
	files := map[string]string{"key.go": "package key\n\n// AKIA prefixes an AWS access key id.\nconst key = \"AKIAZ4QW7NRT3XKPLM2C\"\n"}
	e := newEnv(t, "", nil, files, nil)
	grepHits, _ := grepFiles(t, e.root, "AKIA", []string{"key.go"})
	if len(grepHits) != 2 {
		t.Fatalf("grep: %v", grepHits)
	}
	res := e.ok(t, "code_search", map[string]any{"query": "AKIA"})
	ms := res.Structured()["matches"].([]any)
	if len(ms) != 1 || fmt.Sprintf("key.go:%v", ms[0].(map[string]any)["line"]) != grepHits[0] {
		t.Fatalf("matches %v, grep %v", ms, grepHits)
	}
	if want := "1 match. Searched the one file. " + search.SecretsNote; head(res.Text) != want || res.Structured()["secrets_redacted"] != true {
		t.Errorf("got %q (secrets_redacted %v), want %q", head(res.Text), res.Structured()["secrets_redacted"], want)
	}
	right := e.ok(t, "code_search", map[string]any{"query": "AKIAZ4QW"})
	wrong := e.ok(t, "code_search", map[string]any{"query": "AKIAZ4QX"})
	if head(right.Text) != head(wrong.Text) || len(right.Structured()["matches"].([]any)) != 0 {
		t.Errorf("a guess shows: %q vs %q", head(right.Text), head(wrong.Text))
	}

	off := newEnv(t, "", map[string]string{"ARROWHEAD_REDACT_READS": "false"}, files, nil)
	res = off.ok(t, "code_search", map[string]any{"query": "AKIA"})
	if n := len(res.Structured()["matches"].([]any)); n != 2 || strings.Contains(res.Text, search.SecretsNote) || res.Structured()["secrets_redacted"] != false {
		t.Errorf("redaction off: %d matches, %q", n, head(res.Text))
	}
}
