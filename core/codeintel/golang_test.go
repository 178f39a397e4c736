package codeintel_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core/codeintel"
)

// realModule locates a real third-party module in the module cache: mcp-go,
// which this repository requires, so it is there whenever the build is.
func realModule(t *testing.T) (dir, path string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-json", "github.com/mark3labs/mcp-go").Output()
	if err != nil {
		t.Fatalf("locating mcp-go in the module cache: %v", err)
	}
	var m struct{ Dir, Path string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go list -m gave no directory for mcp-go: %s", out)
	}
	return m.Dir, m.Path
}

// goFilesByPackage groups a module's .go files by directory and package
// clause (so an external _test package is its own group).
func goFilesByPackage(t *testing.T, root string) map[string][]string {
	t.Helper()
	groups := map[string][]string{}
	fset := token.NewFileSet()
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.PackageClauseOnly)
		if err != nil {
			return nil
		}
		key := filepath.Dir(p) + " " + f.Name.Name
		groups[key] = append(groups[key], p)
		return nil
	})
	return groups
}

// noImports stands in for every import: the oracle needs only the
// declarations, which go/types records whatever the imports resolve to.
type noImports struct{}

func (noImports) Import(p string) (*types.Package, error) {
	return types.NewPackage(p, filepath.Base(p)), nil
}

// TestGoSymbolsMatchTypes checks GoSymbols on every file of a real module
// against the objects go/types defines for it: each package-level
// function, each method with its receiver's type name, each package-level
// type, at the line of its name (the start line, in gofmt'd code).
func TestGoSymbolsMatchTypes(t *testing.T) {
	root, _ := realModule(t)
	groups := goFilesByPackage(t, root)
	if len(groups) < 5 {
		t.Fatalf("found %d packages in %s", len(groups), root)
	}
	total := 0
	for _, paths := range groups {
		fset := token.NewFileSet()
		var files []*ast.File
		for _, p := range paths {
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			files = append(files, f)
		}
		want := map[string][]string{}
		// Files that redeclare each other's names (several mains in one
		// testdata directory) are checked one at a time, since go/types
		// records only the first of a redeclared pair.
		batches := [][]*ast.File{files}
		if redeclares(fset, files) {
			batches = nil
			for _, f := range files {
				batches = append(batches, []*ast.File{f})
			}
		}
		for _, batch := range batches {
			for file, lines := range typesSymbols(fset, batch) {
				want[file] = append(want[file], lines...)
			}
		}
		for _, p := range paths {
			src, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range codeintel.GoSymbols(src) {
				got = append(got, fmt.Sprintf("%s %s parent=%s line=%d", s.Name, s.Kind, s.Parent, s.StartLine))
				if s.EndLine < s.StartLine {
					t.Errorf("%s: %s ends before it starts", p, s.Name)
				}
			}
			slices.Sort(got)
			w := want[p]
			slices.Sort(w)
			total += len(w)
			if !slices.Equal(got, w) {
				t.Errorf("%s: symbols differ from go/types\n%s", p, lineDiff(w, got))
			}
		}
	}
	if total < 100 {
		t.Fatalf("only %d symbols compared", total)
	}
	t.Logf("%d symbols in %d packages agree with go/types", total, len(groups))
}

func redeclares(fset *token.FileSet, files []*ast.File) bool {
	found := false
	conf := types.Config{Importer: noImports{}, FakeImportC: true, Error: func(err error) {
		if strings.Contains(err.Error(), "redeclared") {
			found = true
		}
	}}
	conf.Check(files[0].Name.Name, fset, files, nil)
	return found
}

// typesSymbols is the oracle: the declarations go/types defines in files,
// by file name.
func typesSymbols(fset *token.FileSet, files []*ast.File) map[string][]string {
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: noImports{}, Error: func(error) {}, FakeImportC: true}
	pkg, _ := conf.Check(files[0].Name.Name, fset, files, info)
	want := map[string][]string{}
	for id, obj := range info.Defs {
		if obj == nil {
			continue
		}
		pos := fset.Position(id.Pos())
		var line string
		switch o := obj.(type) {
		case *types.Func:
			sig := o.Type().(*types.Signature)
			if recv := sig.Recv(); recv != nil {
				if _, isInterface := recv.Type().Underlying().(*types.Interface); !isInterface {
					line = fmt.Sprintf("%s method parent=%s line=%d", o.Name(), recvName(recv.Type()), pos.Line)
				}
			} else if o.Parent() == nil || o.Parent() == pkg.Scope() || o.Name() == "init" {
				line = fmt.Sprintf("%s function parent= line=%d", o.Name(), pos.Line)
			}
		case *types.TypeName:
			if o.Parent() == pkg.Scope() {
				line = fmt.Sprintf("%s type parent= line=%d", o.Name(), pos.Line)
			}
		}
		if line != "" {
			want[pos.Filename] = append(want[pos.Filename], line)
		}
	}
	return want
}

func recvName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name()
	}
	return ""
}
