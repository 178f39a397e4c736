package codeintel_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/codeintel"
)

// golden is testdata/python/golden.json, written by gen_golden.py from
// Python's own ast (see that script).
type golden struct {
	Python  string                           `json:"python"`
	Symbols map[string][][]any               `json:"symbols"`
	Imports map[string][][]any               `json:"imports"`
	Graph   struct{ Modules, Edges [][]any } `json:"graph"`
}

const pyTree = "testdata/python/tree"

func loadGolden(t *testing.T) golden {
	t.Helper()
	data, err := os.ReadFile("testdata/python/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Symbols) < 10 {
		t.Fatalf("golden data covers %d files", len(g.Symbols))
	}
	return g
}

func readTree(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(pyTree, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPythonSymbolsMatchAST compares the extractor with Python's ast on
// CPython standard-library files and the hand-written corners.
func TestPythonSymbolsMatchAST(t *testing.T) {
	g := loadGolden(t)
	total := 0
	for rel, want := range g.Symbols {
		var wantLines, gotLines []string
		for _, s := range want {
			wantLines = append(wantLines, fmt.Sprintf("%v %v parent=%q %v-%v", s[0], s[1], s[2], s[3], s[4]))
		}
		for _, s := range codeintel.PythonSymbols(readTree(t, rel)) {
			gotLines = append(gotLines, fmt.Sprintf("%v %v parent=%q %v-%v", s.Name, s.Kind, s.Parent, s.StartLine, s.EndLine))
		}
		total += len(wantLines)
		if !slices.Equal(gotLines, wantLines) {
			t.Errorf("%s: symbols differ from ast (Python %s)\n%s", rel, g.Python, lineDiff(wantLines, gotLines))
		}
	}
	t.Logf("%d symbols in %d files agree with ast", total, len(g.Symbols))
}

func TestPythonImportsMatchAST(t *testing.T) {
	g := loadGolden(t)
	for rel, want := range g.Imports {
		var wantLines, gotLines []string
		for _, i := range want {
			wantLines = append(wantLines, fmt.Sprintf("%v level=%v from=%v %v", i[0], i[1], i[2], i[3]))
		}
		for _, i := range codeintel.PythonImports(readTree(t, rel)) {
			names := make([]any, len(i.Names))
			for k, n := range i.Names {
				names[k] = n
			}
			gotLines = append(gotLines, fmt.Sprintf("%v level=%v from=%v %v", i.Module, i.Level, i.From, names))
		}
		if !slices.Equal(gotLines, wantLines) {
			t.Errorf("%s: imports differ from ast\n%s", rel, lineDiff(wantLines, gotLines))
		}
	}
}

func TestPythonGraphMatchesAST(t *testing.T) {
	g := loadGolden(t)
	var files []codeintel.GraphFile
	for rel := range g.Symbols {
		files = append(files, codeintel.GraphFile{Path: rel, Content: readTree(t, rel)})
	}
	slices.SortFunc(files, func(a, b codeintel.GraphFile) int { return strings.Compare(a.Path, b.Path) })
	graph := codeintel.BuildGraph(files, nil)
	var wantM, gotM, wantE, gotE []string
	for _, m := range g.Graph.Modules {
		wantM = append(wantM, fmt.Sprintf("%v %v", m[0], m[1]))
	}
	for _, m := range graph.Modules {
		gotM = append(gotM, m.ID+" "+m.Path)
		if m.Language != codeintel.LangPython {
			t.Errorf("%s: language %q", m.ID, m.Language)
		}
	}
	for _, e := range g.Graph.Edges {
		wantE = append(wantE, fmt.Sprintf("%v -> %v external=%v", e[0], e[1], e[2]))
	}
	for _, e := range graph.Edges {
		gotE = append(gotE, fmt.Sprintf("%v -> %v external=%v", e.From, e.To, e.External))
	}
	if !slices.Equal(gotM, wantM) {
		t.Errorf("modules differ\n%s", lineDiff(wantM, gotM))
	}
	if !slices.Equal(gotE, wantE) {
		t.Errorf("edges differ\n%s", lineDiff(wantE, gotE))
	}
}

// lineDiff lists the lines only one side has.
func lineDiff(want, got []string) string {
	var b strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			b.WriteString("  missing: " + w + "\n")
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			b.WriteString("  extra:   " + g + "\n")
		}
	}
	if b.Len() == 0 {
		b.WriteString("  (same lines, different order)\n")
	}
	return b.String()
}
