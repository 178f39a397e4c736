package codeintel

import (
	"cmp"
	"path"
	"slices"
	"strings"
)

// Languages a dependency graph's modules are written in.
const (
	LangPython = "python"
	LangGo     = "go"
)

// Module is a node of the dependency graph: a Python module (ID dotted,
// Path its file) or a Go package (ID its import path, Path its directory).
type Module struct {
	ID, Path, Language string
}

// Edge is one import. External means the target is not a module of the
// graph: the standard library, another module, or code outside the
// scanned prefix (or not readable by the caller).
type Edge struct {
	From, To string
	External bool
}

// Graph is a dependency graph, modules sorted by ID and edges by (From,
// To), each edge once.
type Graph struct {
	Modules []Module
	Edges   []Edge
}

// GoModuleFinder returns the module path of the go.mod governing dir (the
// nearest one at or above it) and that go.mod's directory; ok is false
// when there is none the caller may read.
type GoModuleFinder func(dir string) (modDir, modPath string, ok bool)

// GraphFile is one scanned source file and its content.
type GraphFile struct {
	Path    string
	Content []byte
}

// PythonModuleID returns the dotted module id of a .py file: its path
// relative to the repository root, or to a top-level src/ directory,
// without the extension; a package's __init__.py names the package. ok is
// false for a file that names no module (a root __init__.py).
func PythonModuleID(p string) (id string, pkg bool, ok bool) {
	rel := strings.TrimPrefix(p, "src/")
	parts := strings.Split(strings.TrimSuffix(rel, ".py"), "/")
	if parts[len(parts)-1] == "__init__" {
		pkg = true
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 {
		return "", false, false
	}
	return strings.Join(parts, "."), pkg, true
}

// BuildGraph maps the imports between the given files: Python modules
// (.py) by PythonModuleID, with absolute, relative and "from pkg import
// sub" imports resolved (an edge to pkg.sub when that is a module, else
// to pkg; a relative import beyond the top-level package is dropped, as
// Python refuses it), and Go packages (a directory holding .go files,
// outside testdata and directories starting with "_" or "."; the imports
// of its non-test files, ignoring build constraints), identified
// by import path from findModule (the directory path when no go.mod
// governs it), with the "C" pseudo-package left out.
func BuildGraph(files []GraphFile, findModule GoModuleFinder) Graph {
	g := graphBuilder{modules: map[string]Module{}, edges: map[Edge]bool{}}
	type pyFile struct {
		id, pkg string
		imports []PyImport
	}
	var pys []pyFile
	goPkgs := map[string]*goPackage{} // by directory
	for _, f := range files {
		switch path.Ext(f.Path) {
		case ".py":
			id, isPkg, ok := PythonModuleID(f.Path)
			if !ok {
				continue
			}
			if _, dup := g.modules[id]; dup {
				continue
			}
			g.modules[id] = Module{ID: id, Path: f.Path, Language: LangPython}
			pkg := id
			if !isPkg {
				pkg = parentID(id)
			}
			pys = append(pys, pyFile{id: id, pkg: pkg, imports: PythonImports(f.Content)})
		case ".go":
			dir := path.Dir(f.Path)
			if !goPackageDir(dir) {
				continue
			}
			gf, ok := GoImports(f.Content)
			if !ok {
				continue
			}
			p := goPkgs[dir]
			if p == nil {
				p = &goPackage{dir: dir}
				goPkgs[dir] = p
			}
			if !strings.HasSuffix(f.Path, "_test.go") {
				p.imports = append(p.imports, gf.Imports...)
			}
		}
	}
	for dir, p := range goPkgs {
		p.id = goPackageID(dir, findModule)
		if _, dup := g.modules[p.id]; !dup {
			g.modules[p.id] = Module{ID: p.id, Path: dir, Language: LangGo}
		}
	}
	for _, f := range pys {
		for _, imp := range f.imports {
			for _, to := range g.resolvePython(f.pkg, imp) {
				g.add(f.id, to)
			}
		}
	}
	for _, p := range goPkgs {
		for _, imp := range p.imports {
			if imp != "C" {
				g.add(p.id, imp)
			}
		}
	}
	return g.graph()
}

type goPackage struct {
	dir, id string
	imports []string
}

// goPackageDir reports a directory the go command would build packages
// from: none of its components is testdata or starts with "_" or ".".
func goPackageDir(dir string) bool {
	if dir == "." {
		return true
	}
	for _, c := range strings.Split(dir, "/") {
		if c == "testdata" || strings.HasPrefix(c, "_") || strings.HasPrefix(c, ".") {
			return false
		}
	}
	return true
}

func goPackageID(dir string, findModule GoModuleFinder) string {
	if findModule != nil {
		if modDir, modPath, ok := findModule(dir); ok {
			switch {
			case modDir == dir:
				return modPath
			case modDir == ".":
				return modPath + "/" + dir
			case strings.HasPrefix(dir, modDir+"/"):
				return modPath + "/" + dir[len(modDir)+1:]
			}
		}
	}
	return dir
}

func parentID(id string) string {
	if i := strings.LastIndexByte(id, '.'); i >= 0 {
		return id[:i]
	}
	return ""
}

type graphBuilder struct {
	modules map[string]Module
	edges   map[Edge]bool
}

func (g *graphBuilder) add(from, to string) {
	_, internal := g.modules[to]
	g.edges[Edge{From: from, To: to, External: !internal}] = true
}

// resolvePython returns the modules one import statement of a module in
// package pkg points at.
func (g *graphBuilder) resolvePython(pkg string, imp PyImport) []string {
	if !imp.From {
		return []string{imp.Module}
	}
	module := imp.Module
	if imp.Level > 0 {
		var comps []string
		if pkg != "" {
			comps = strings.Split(pkg, ".")
		}
		if imp.Level > len(comps) {
			return nil
		}
		base := strings.Join(comps[:len(comps)-(imp.Level-1)], ".")
		if module != "" {
			module = base + "." + module
		} else {
			module = base
		}
	}
	out := make([]string, 0, len(imp.Names))
	for _, n := range imp.Names {
		if sub := module + "." + n; n != "*" {
			if _, ok := g.modules[sub]; ok {
				out = append(out, sub)
				continue
			}
		}
		out = append(out, module)
	}
	return out
}

func (g *graphBuilder) graph() Graph {
	var out Graph
	for _, m := range g.modules {
		out.Modules = append(out.Modules, m)
	}
	slices.SortFunc(out.Modules, func(a, b Module) int { return strings.Compare(a.ID, b.ID) })
	for e := range g.edges {
		out.Edges = append(out.Edges, e)
	}
	slices.SortFunc(out.Edges, func(a, b Edge) int {
		return cmp.Or(strings.Compare(a.From, b.From), strings.Compare(a.To, b.To))
	})
	return out
}
