package codeintel

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/ports"
)

// GoSymbols returns the functions, methods and types declared at the top
// level of a Go source file, in source order, read with go/parser. A
// method's Parent is its receiver's type name (without pointer or type
// parameters). StartLine is the line of the func keyword, or of the type
// keyword for a lone type declaration and of the type's name inside a
// grouped one; doc comments are not part of a span. On a syntax error the
// declarations parsed before it are returned.
func GoSymbols(src []byte) []ports.Symbol {
	fset := token.NewFileSet()
	f, _ := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if f == nil {
		return nil
	}
	line := func(p token.Pos) int { return fset.Position(p).Line }
	var out []ports.Symbol
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name == nil {
				continue
			}
			s := ports.Symbol{Name: d.Name.Name, Kind: KindFunction, StartLine: line(d.Pos()), EndLine: line(d.End())}
			if s.EndLine < s.StartLine {
				continue // the parser's stand-in for a declaration it could not read
			}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				s.Kind, s.Parent = KindMethod, receiverType(d.Recv.List[0].Type)
			}
			out = append(out, s)
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				continue
			}
			for _, spec := range d.Specs {
				ts, ok := spec.(*ast.TypeSpec)
				if !ok || ts.Name == nil {
					continue
				}
				start := d.Pos()
				if d.Lparen.IsValid() {
					start = ts.Pos()
				}
				out = append(out, ports.Symbol{Name: ts.Name.Name, Kind: KindType, StartLine: line(start), EndLine: line(ts.End())})
			}
		}
	}
	return out
}

// receiverType names a method receiver's base type: T for T, *T, T[K],
// *T[K, V] and parenthesized forms.
func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// GoFile is what the dependency graph needs from one Go file.
type GoFile struct {
	Package string
	Imports []string
	Test    bool
}

// GoImports reads a Go file's package clause and import paths (go/parser,
// imports only).
func GoImports(src []byte) (GoFile, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ImportsOnly|parser.SkipObjectResolution)
	if f == nil || f.Name == nil || err != nil {
		return GoFile{}, false
	}
	gf := GoFile{Package: f.Name.Name}
	for _, imp := range f.Imports {
		if p, err := strconv.Unquote(imp.Path.Value); err == nil {
			gf.Imports = append(gf.Imports, p)
		}
	}
	return gf, true
}

// GoModulePath returns the module path a go.mod declares, "" when it
// declares none. It reads the module directive the way the go command
// does: the first "module" line, its path bare or quoted, comments ignored.
func GoModulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "module" {
			continue
		}
		p := fields[1]
		if strings.HasPrefix(p, `"`) || strings.HasPrefix(p, "`") {
			u, err := strconv.Unquote(strings.Join(fields[1:], " "))
			if err != nil {
				return ""
			}
			p = u
		}
		return p
	}
	return ""
}
