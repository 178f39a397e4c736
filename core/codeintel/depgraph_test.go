package codeintel_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/codeintel"
)

// moduleFiles reads a module's .go files and go.mod files, with paths
// relative to root, in lexical order.
func moduleFiles(t *testing.T, root string) ([]codeintel.GraphFile, map[string]string) {
	t.Helper()
	var files []codeintel.GraphFile
	mods := map[string]string{} // directory -> module path
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch {
		case d.Name() == "go.mod":
			mods[path.Dir(rel)] = codeintel.GoModulePath(data)
		case strings.HasSuffix(rel, ".go"):
			files = append(files, codeintel.GraphFile{Path: rel, Content: data})
		}
		return nil
	})
	return files, mods
}

// finder looks a directory's go.mod up the tree, as dependency_graph does
// through the repository store.
func finder(mods map[string]string) codeintel.GoModuleFinder {
	return func(dir string) (string, string, bool) {
		for d := dir; ; d = path.Dir(d) {
			if m, ok := mods[d]; ok && m != "" {
				return d, m, true
			}
			if d == "." {
				return "", "", false
			}
		}
	}
}

// TestGoGraphMatchesParserAndGoList builds the graph of a real module and
// checks it two ways: every package id and its imports against the go
// command's own listing (go list, which applies this platform's build
// constraints, so its imports are a subset of the graph's, which covers
// every file), and every edge exactly against the imports go/parser reads
// from each directory's non-test files (a directory of tests alone is a
// package without edges).
func TestGoGraphMatchesParserAndGoList(t *testing.T) {
	root, modPath := realModule(t)
	files, mods := moduleFiles(t, root)
	g := codeintel.BuildGraph(files, finder(mods))

	ids := map[string]bool{}
	for _, m := range g.Modules {
		if m.Language != codeintel.LangGo {
			t.Errorf("%s: language %q", m.ID, m.Language)
		}
		ids[m.ID] = true
	}
	edges := map[string][]string{}
	for _, e := range g.Edges {
		edges[e.From] = append(edges[e.From], e.To)
		if e.External == ids[e.To] {
			t.Errorf("%s -> %s: external=%v, but the target is%s a module of the tree", e.From, e.To, e.External, map[bool]string{true: "", false: " not"}[ids[e.To]])
		}
	}

	// The go/parser oracle, written independently of BuildGraph.
	want := map[string]map[string]bool{}
	fset := token.NewFileSet()
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || name[0] == '_' || name[0] == '.') {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		id := modPath
		if rel != "." {
			id += "/" + filepath.ToSlash(rel)
		}
		if want[id] == nil {
			want[id] = map[string]bool{}
		}
		if strings.HasSuffix(name, "_test.go") {
			return nil // a package of tests alone is a module without edges
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			want[id][ip] = true
		}
		return nil
	})
	if len(want) < 5 {
		t.Fatalf("the oracle found %d packages", len(want))
	}
	for id, imps := range want {
		var w []string
		for ip := range imps {
			w = append(w, ip)
		}
		slices.Sort(w)
		if !ids[id] {
			t.Errorf("package %s is missing from the graph", id)
		}
		if got := edges[id]; !slices.Equal(got, w) {
			t.Errorf("%s: edges differ from go/parser\n%s", id, lineDiff(w, got))
		}
	}
	if len(ids) != len(want) {
		t.Errorf("the graph has %d packages, go/parser %d", len(ids), len(want))
	}

	// The go command's view of the same packages.
	cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}} {{join .Imports \",\"}}", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v", root, err)
	}
	listed := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		id, imports, _ := strings.Cut(sc.Text(), " ")
		listed++
		if !ids[id] {
			t.Errorf("go list names package %s; the graph does not", id)
			continue
		}
		for _, ip := range strings.Split(imports, ",") {
			if ip != "" && !slices.Contains(edges[id], ip) {
				t.Errorf("go list: %s imports %s; the graph has no such edge", id, ip)
			}
		}
	}
	if listed < 5 {
		t.Fatalf("go list named %d packages", listed)
	}
	t.Logf("%d packages, %d edges; go list agrees on %d packages", len(g.Modules), len(g.Edges), listed)
}

func TestGoGraphNestedModulesAndExternals(t *testing.T) {
	files := []codeintel.GraphFile{
		{Path: "a.go", Content: []byte("package root\nimport (\"fmt\"; \"example.com/m/lib\"; \"example.com/m/tools/cmd\")\n")},
		{Path: "a_test.go", Content: []byte("package root\nimport \"testing\"\n")},
		{Path: "lib/lib.go", Content: []byte("package lib\nimport \"C\"\nimport \"golang.org/x/text\"\n")},
		{Path: "lib/testdata/x.go", Content: []byte("package x\nimport \"os\"\n")},
		{Path: "_hidden/h.go", Content: []byte("package h\n")},
		{Path: "tools/cmd/main.go", Content: []byte("package main\nimport \"example.com/m/lib\"\n")},
		{Path: "nomod/x/x.go", Content: []byte("package x\nimport \"example.com/m/lib\"\n")},
	}
	mods := map[string]string{".": "example.com/m", "tools": "example.com/tools", "nomod": ""}
	g := codeintel.BuildGraph(files, finder(mods))
	var got []string
	for _, m := range g.Modules {
		got = append(got, m.ID+" "+m.Path)
	}
	want := []string{"example.com/m .", "example.com/m/lib lib", "example.com/tools/cmd tools/cmd", "example.com/m/nomod/x nomod/x"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("modules = %v, want %v", got, want)
	}
	var gotE []string
	for _, e := range g.Edges {
		gotE = append(gotE, fmt.Sprintf("%s>%s:%v", e.From, e.To, e.External))
	}
	wantE := []string{"example.com/m>example.com/m/lib:false", "example.com/m>example.com/m/tools/cmd:true", "example.com/m>fmt:true",
		"example.com/m/lib>golang.org/x/text:true", "example.com/m/nomod/x>example.com/m/lib:false", "example.com/tools/cmd>example.com/m/lib:false"}
	if !slices.Equal(gotE, wantE) {
		t.Errorf("edges = %v\nwant %v", gotE, wantE)
	}
}

func TestGoModulePath(t *testing.T) {
	cases := map[string]string{
		"module example.com/m\n\ngo 1.22\n":           "example.com/m",
		"// comment\nmodule \"example.com/q\" // x\n": "example.com/q",
		"go 1.22\n":                "",
		"module   spaced/path  \n": "spaced/path",
		"modulex a\nmodule b\n":    "b",
	}
	for in, want := range cases {
		if got := codeintel.GoModulePath([]byte(in)); got != want {
			t.Errorf("GoModulePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPythonModuleID(t *testing.T) {
	cases := []struct {
		path, id string
		pkg, ok  bool
	}{
		{"a/b.py", "a.b", false, true},
		{"a/__init__.py", "a", true, true},
		{"src/pkg/mod.py", "pkg.mod", false, true},
		{"src/pkg/__init__.py", "pkg", true, true},
		{"lib/src/x.py", "lib.src.x", false, true},
		{"__init__.py", "", false, false},
		{"src/__init__.py", "", false, false},
		{"top.py", "top", false, true},
	}
	for _, c := range cases {
		id, pkg, ok := codeintel.PythonModuleID(c.path)
		if id != c.id || pkg != c.pkg || ok != c.ok {
			t.Errorf("PythonModuleID(%q) = %q %v %v", c.path, id, pkg, ok)
		}
	}
}
