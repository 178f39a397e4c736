package security_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// TestMarkdownExfiltrationCorpus writes each hostile Markdown document into
// the corpus and reads it back through doc_read: no image, script, HTML or
// non-http(s) target may survive.
func TestMarkdownExfiltrationCorpus(t *testing.T) {
	rt, _ := app(t)
	for i, p := range readCorpus(t, "markdown_exfil.txt") {
		name := filepath.Join(rt.Settings.DocsRoot, "md", "case"+strconv.Itoa(i)+".md")
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte("before\n"+p+"\nafter\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(rt.Settings.DocsRoot); err != nil {
		t.Fatal(err)
	}
	// The store counts usage at open; files written behind its back are
	// still readable.
	for i, p := range readCorpus(t, "markdown_exfil.txt") {
		res, err := rt.App.Call(t.Context(), ports.Operator(), "doc_read", map[string]any{"path": "md/case" + strconv.Itoa(i) + ".md"})
		if err != nil {
			t.Errorf("case %d (%q): %v", i, p, err)
			continue
		}
		out := strings.ToLower(res.Structured()["content"].(string))
		// Neutralized links survive as plain text; what must not survive is
		// a target a renderer would follow or load.
		for _, bad := range []string{"exfil.example/p", "exfil.example/c", "exfil.example/badge", "](javascript:", "<javascript:", "](vbscript:",
			"](data:", "](file:", "![", "<img", "<script", "<iframe", "<svg", "<style", "<a href", "src=", "user:pass@", "](//"} {
			if strings.Contains(out, bad) {
				t.Errorf("case %d (%q) kept %q:\n%s", i, p, bad, out)
			}
		}
		if !strings.Contains(out, "before") || !strings.Contains(out, "after") {
			t.Errorf("case %d lost the surrounding text: %s", i, out)
		}
	}
}

// TestHostileDocuments covers JSON bombs and terminal/bidi text injection.
func TestHostileDocuments(t *testing.T) {
	rt, _ := app(t)
	canary := "CANARY-json-bomb-4242"
	files := map[string]string{
		"deep.json":     strings.Repeat("[", 100000) + strings.Repeat("]", 100000),
		"wide.json":     "[" + strings.Repeat("1,", 200000) + "1]",
		"dup.json":      `{"key":"` + canary + `","key":"other"}`,
		"nan.json":      `{"x": NaN, "c": "` + canary + `"}`,
		"inf.json":      `[Infinity]`,
		"trailing.json": `{} {"c":"` + canary + `"}`,
		"escaped.json":  `{"t":"\u001b[2J\u202eevil\u200b"}`,
		"term.txt":      "ok \x1b[2J\x1b]0;pwned\x07\x1b[31mred\x1b[0m \u202egnp.exe\u202c \u200bzero \x00nul \x85c1",
		"utf7.txt":      "+/v8-+ADw-script+AD4-alert(1)+ADw-/script+AD4-",
		"bom-utf7.txt":  "\xef\xbb\xbf+/v8-+ADw-script+AD4-",
		"tags.txt":      "visible\U000E0049\U000E0047\U000E004E\U000E004F\U000E0052\U000E0045 text",
		"selectors.txt": "a\ufe00\ufe01\U000E0100b",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(rt.Settings.DocsRoot, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"deep.json", "wide.json", "dup.json", "nan.json", "inf.json", "trailing.json", "utf7.txt", "bom-utf7.txt"} {
		_, err := rt.App.Call(t.Context(), ports.Operator(), "doc_read", map[string]any{"path": name})
		te, _ := catalog.AsToolError(err)
		if te == nil || te.Kind != catalog.KindValidation || strings.Contains(te.Message, canary) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"escaped.json", "term.txt", "tags.txt", "selectors.txt"} {
		res, err := rt.App.Call(t.Context(), ports.Operator(), "doc_read", map[string]any{"path": name})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		out := res.Structured()["content"].(string)
		if strings.ContainsAny(out, "\x1b\x07\x00\u202e\u202c\u200b\u0085\ufe00\ufe01") || strings.ContainsRune(out, 0xE0049) || strings.ContainsRune(out, 0xE0100) {
			t.Errorf("%s kept a control or invisible character: %q", name, out)
		}
	}
}

// TestInvisibleBlanks reads documents of every format whose text hides
// behind invisible or blank-rendering code points: none may survive.
func TestInvisibleBlanks(t *testing.T) {
	rt, _ := app(t)
	var blanks []rune
	for _, p := range readCorpus(t, "invisible_blanks.txt") {
		r, err := strconv.ParseInt(strings.TrimPrefix(p, "U+"), 16, 32)
		if err != nil {
			t.Fatalf("corpus line %q: %v", p, err)
		}
		blanks = append(blanks, rune(r))
	}
	var hidden strings.Builder
	for _, r := range blanks {
		hidden.WriteString("x" + string(r))
	}
	bodies := map[string]string{
		"blank.txt":  "before " + hidden.String() + " after",
		"blank.md":   "# " + hidden.String() + "\n\n[" + hidden.String() + "](https://example.com/)\n",
		"blank.json": `{"` + hidden.String() + `": "` + hidden.String() + `"}`,
	}
	for name, body := range bodies {
		if err := os.WriteFile(filepath.Join(rt.Settings.DocsRoot, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := rt.App.Call(t.Context(), ports.Operator(), "doc_read", map[string]any{"path": name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := res.Structured()["content"].(string)
		for _, r := range blanks {
			if strings.ContainsRune(out, r) {
				t.Errorf("%s kept U+%04X", name, r)
			}
		}
		if !strings.Contains(out, "xxxxx") {
			t.Errorf("%s lost the visible text: %q", name, out)
		}
	}
}
