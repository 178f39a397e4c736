package repo_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// symbolRows renders structured symbols as "path kind parent.name" rows.
func symbolRows(res map[string]any) []string {
	var got []string
	for _, s := range res["symbols"].([]any) {
		m := s.(map[string]any)
		got = append(got, fmt.Sprintf("%s %s %s.%s", m["path"], m["kind"], m["parent"], m["name"]))
	}
	return got
}

func TestSymbolMapFilters(t *testing.T) {
	e := newEnv(t, "", nil, sample, nil)
	res := e.ok(t, "symbol_map", map[string]any{"kinds": []any{"method", "class"}})
	if got := symbolRows(res.Structured()); !slices.Equal(got, []string{"lib/lib.go method T.M", "src/app.py class .App", "src/app.py method App.run"}) {
		t.Errorf("kinds filter: %v", got)
	}
	res = e.ok(t, "symbol_map", map[string]any{"include_tests": false})
	for _, row := range symbolRows(res.Structured()) {
		if strings.Contains(row, "_test.go") || strings.Contains(row, "testdata") {
			t.Errorf("include_tests=false mapped %s", row)
		}
	}
	all := e.ok(t, "symbol_map", map[string]any{"include_tests": true})
	if n, m := len(all.Structured()["symbols"].([]any)), len(res.Structured()["symbols"].([]any)); n != m+1 {
		t.Errorf("with tests %d symbols, without %d", n, m)
	}
	if _, te := e.call(t, alice, "symbol_map", map[string]any{"format": "xml"}); te == nil {
		t.Error("an unknown format was accepted")
	}
}

// The compact form names each path once; the lines form keeps one line
// per definition with its span. Both carry the same structured result.
func TestSymbolMapFormats(t *testing.T) {
	e := newEnv(t, "", nil, sample, nil)
	compact := e.ok(t, "symbol_map", map[string]any{})
	lines := e.ok(t, "symbol_map", map[string]any{"format": "lines"})
	for _, want := range []string{"\nsrc/app.py\n5 class App\n  6 meth run\nsrc/util.py\n1 func helper\n", "\nlib/lib.go\n6 type T\n  8 meth M\n"} {
		if !strings.Contains(compact.Text, want) {
			t.Errorf("compact text lacks %q:\n%s", want, compact.Text)
		}
	}
	if !strings.Contains(lines.Text, "src/app.py:6-7: method App.run\n") || strings.Count(lines.Text, "src/app.py") != 2 {
		t.Errorf("lines text:\n%s", lines.Text)
	}
	if fmt.Sprint(compact.Structured()["symbols"]) != fmt.Sprint(lines.Structured()["symbols"]) {
		t.Error("the structured result depends on the format")
	}
	if len(compact.Text) >= len(lines.Text) {
		t.Errorf("compact %d bytes, lines %d", len(compact.Text), len(lines.Text))
	}
}

// A map cut by its caps says so in the text, how far it got, and the
// prefixes to ask for next; asking for them maps the rest.
func TestSymbolMapStatesItsCut(t *testing.T) {
	files := map[string]string{}
	for _, dir := range []string{"a", "b", "c/x", "c/y"} {
		for i := range 3 {
			files[fmt.Sprintf("%s/f%d.go", dir, i)] = fmt.Sprintf("package p\n\nfunc F%d() {}\n\nfunc G%d() {}\n", i, i)
		}
	}
	e := newEnv(t, "", map[string]string{"ARROWHEAD_SYMBOL_MAP_MAX_FILES": "4"}, files, nil)
	res := e.ok(t, "symbol_map", map[string]any{})
	if !slices.Equal(res.Structured()["truncated"].([]any), []any{"files"}) || res.Structured()["files_scanned"] != float64(4) {
		t.Fatalf("truncated %v, files %v", res.Structured()["truncated"], res.Structured()["files_scanned"])
	}
	// Mapped: a/f0-2 and b/f0, so b/ is unfinished: its remaining files
	// are suggested by b/, then c/ whole.
	want := []any{"b/", "c/"}
	if got := res.Structured()["next_prefixes"].([]any); !slices.Equal(got, want) {
		t.Fatalf("next prefixes %v, want %v", got, want)
	}
	for _, s := range []string{"Stopped early: the map read its 4 files (ARROWHEAD_SYMBOL_MAP_MAX_FILES), 8 symbols; 8 more files under this prefix were not mapped.",
		`Ask next for path_prefix "b/" (2 files not yet mapped; it holds mapped ones too), "c/" (6 files).`} {
		if !strings.Contains(res.Text, s) {
			t.Fatalf("the text lacks %q:\n%s", s, res.Text)
		}
	}
	// The symbol cap cuts inside a file; that file is where to resume.
	e = newEnv(t, e.root, map[string]string{"ARROWHEAD_SYMBOL_MAP_MAX_SYMBOLS": "5"}, nil, nil)
	res = e.ok(t, "symbol_map", map[string]any{"path_prefix": "c"})
	if got := res.Structured()["next_prefixes"].([]any); !slices.Equal(got, []any{"c/x/", "c/y/"}) || !strings.Contains(res.Text, "reached 5 symbols (ARROWHEAD_SYMBOL_MAP_MAX_SYMBOLS) in file 3 of 6") {
		t.Fatalf("next prefixes %v:\n%s", got, res.Text)
	}
	if !strings.Contains(res.Text, `"c/x/" (1 file not yet mapped; it holds mapped ones too), "c/y/" (3 files)`) {
		t.Fatalf("the partly mapped prefix is not marked:\n%s", res.Text)
	}
	// One file left over is counted in the singular.
	e = newEnv(t, e.root, map[string]string{"ARROWHEAD_SYMBOL_MAP_MAX_FILES": "2"}, nil, nil)
	if res = e.ok(t, "symbol_map", map[string]any{"path_prefix": "a"}); !strings.Contains(res.Text,
		"Stopped early: the map read its 2 files (ARROWHEAD_SYMBOL_MAP_MAX_FILES), 4 symbols; 1 more file under this prefix was not mapped.") {
		t.Fatalf("one file left:\n%s", res.Text)
	}
	// An uncut map says nothing of the kind.
	e = newEnv(t, e.root, nil, nil, nil)
	res = e.ok(t, "symbol_map", map[string]any{"path_prefix": "a"})
	if strings.Contains(res.Text, "Stopped early") || res.Structured()["next_prefixes"] != nil {
		t.Fatalf("uncut map:\n%s %v", res.Text, res.Structured()["next_prefixes"])
	}
}

// On a real tree (Go's own net/http and go/ packages) the compact text is
// at most half the one-line-per-symbol text, for the same symbols.
func TestSymbolMapCompactIsHalf(t *testing.T) {
	root := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(filepath.Join(root, "net", "http")); err != nil {
		t.Fatalf("no Go source tree: %v", err)
	}
	e := newEnv(t, root, map[string]string{"ARROWHEAD_SYMBOL_MAP_MAX_SYMBOLS": "1000000", "ARROWHEAD_REPO_MAX_FILE_BYTES": "100000000"}, nil, nil)
	for _, prefix := range []string{"net/http", "go/types"} {
		compact := e.ok(t, "symbol_map", map[string]any{"path_prefix": prefix})
		lines := e.ok(t, "symbol_map", map[string]any{"path_prefix": prefix, "format": "lines"})
		n := len(compact.Structured()["symbols"].([]any))
		if n < 1000 || len(lines.Structured()["symbols"].([]any)) != n {
			t.Fatalf("%s: %d symbols", prefix, n)
		}
		if 2*len(compact.Text) > len(lines.Text) {
			t.Errorf("%s: compact %d bytes, lines %d", prefix, len(compact.Text), len(lines.Text))
		}
		t.Logf("%s: %d symbols, compact %d bytes, lines %d (%.0f%%)", prefix, n, len(compact.Text), len(lines.Text), 100*float64(len(compact.Text))/float64(len(lines.Text)))
	}
}
