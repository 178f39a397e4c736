package chain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const importPath = "github.com/arrowhead-go/arrowhead/core/internal/chain"

// TestOnlyTheChainAdmits parses every non-test Go file under core/ (the
// only tree that may import this package) and checks that only package
// core calls Admit and that only core and catalog import this package:
// nothing else can run a tool's handler.
func TestOnlyTheChainAdmits(t *testing.T) {
	root := filepath.Join("..", "..")
	allowedImport := map[string]bool{".": true, "catalog": true}
	var admits []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		local := ""
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p != importPath {
				continue
			}
			if !allowedImport[filepath.ToSlash(dir)] {
				t.Errorf("%s imports %s: only core and catalog may", path, importPath)
			}
			local = "chain"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
		if local == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Admit" {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
				admits = append(admits, filepath.ToSlash(dir)+"/"+filepath.Base(path))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(admits) != 1 || admits[0] != "./app.go" {
		t.Fatalf("Admit is used in %v; only package core's App.Call (app.go) may", admits)
	}
}

func TestZeroIsNotAdmitted(t *testing.T) {
	if (Admitted{}).OK() {
		t.Fatal("the zero Admitted passes")
	}
	if !Admit().OK() {
		t.Fatal("an admitted call does not pass")
	}
}
