package codeintel

import (
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Python symbol kinds: a def directly in a class body is a method, any
// other def a function.
const (
	KindClass    = "class"
	KindFunction = "function"
	KindMethod   = "method"
	KindType     = "type"
)

// PythonSymbols returns the classes and functions (async or not) defined
// in a Python source file, at any depth, in source order: exactly the
// ClassDef, FunctionDef and AsyncFunctionDef nodes Python's own ast module
// finds, with the same spans. StartLine is the line of the def, async or
// class keyword (ast's lineno: decorators are not part of the span);
// EndLine is the last line of the last statement of the body (ast's
// end_lineno: trailing comments and blank lines are not). Parent is the
// dotted chain of enclosing class and function names. Names are
// NFKC-normalized, as the parser does with identifiers.
//
// It reads the file with a tokenizer (forEachPyLine), never by line
// patterns, and never executes anything.
func PythonSymbols(src []byte) []ports.Symbol {
	type open struct {
		indent int
		sym    int // index in out
		qual   string
		class  bool
	}
	var (
		out   []ports.Symbol
		stack []open
	)
	forEachPyLine(src, func(l *pyLine) {
		for len(stack) > 0 && l.indent <= stack[len(stack)-1].indent {
			stack = stack[:len(stack)-1]
		}
		end := l.endLine()
		for _, o := range stack {
			out[o.sym].EndLine = end
		}
		kw, name, ok := pyDefinition(src, l.toks)
		if !ok {
			return
		}
		sym := ports.Symbol{Name: name, StartLine: l.toks[0].line, EndLine: end}
		parent, inClass := "", false
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			parent, inClass = top.qual, top.class
		}
		sym.Parent = parent
		switch {
		case kw == "class":
			sym.Kind = KindClass
		case inClass:
			sym.Kind = KindMethod
		default:
			sym.Kind = KindFunction
		}
		out = append(out, sym)
		if !pyInlineBody(l.toks) {
			qual := name
			if parent != "" {
				qual = parent + "." + name
			}
			stack = append(stack, open{indent: l.indent, sym: len(out) - 1, qual: qual, class: kw == "class"})
		}
	})
	return out
}

// pyDefinition recognizes a logical line starting a class or function
// definition: "class NAME", "def NAME" or "async def NAME".
func pyDefinition(src []byte, toks []pyTok) (keyword, name string, ok bool) {
	i := 0
	if len(toks) > 1 && toks[0].kind == pyName && toks[0].text == "async" && toks[1].kind == pyName && toks[1].text == "def" {
		i = 1
	}
	if i+1 >= len(toks) || toks[i].kind != pyName || (toks[i].text != "def" && toks[i].text != "class") {
		return "", "", false
	}
	if toks[i+1].kind != pyName {
		return "", "", false
	}
	return toks[i].text, identifier(src, toks[i+1]), true
}

// pyHeaderColon returns the index of the colon ending a compound
// statement's header: the first one outside brackets that no lambda at the
// same level claims. -1 when there is none.
func pyHeaderColon(toks []pyTok) int {
	lambdas := 0
	for i, tk := range toks {
		if tk.depth != 0 {
			continue
		}
		switch {
		case tk.kind == pyName && tk.text == "lambda":
			lambdas++
		case tk.kind == pyOp && tk.text == ":":
			if lambdas == 0 {
				return i
			}
			lambdas--
		}
	}
	return -1
}

// pyInlineBody reports a definition whose body follows its colon on the
// same logical line ("class E(Exception): pass").
func pyInlineBody(toks []pyTok) bool {
	c := pyHeaderColon(toks)
	return c >= 0 && c+1 < len(toks)
}

// PyImport is one imported module: "import a.b, c" yields Module "a.b"
// and Module "c" (From false); "from ..pkg import x, y" yields Level 2,
// Module "pkg", Names x and y ("*" for a star import).
type PyImport struct {
	Module string
	Level  int
	From   bool
	Names  []string
	Line   int
}

// pyCompound are the keywords that open a compound statement whose body
// may follow the header's colon on the same line.
var pyCompound = map[string]bool{"if": true, "elif": true, "else": true, "while": true, "for": true,
	"try": true, "except": true, "finally": true, "with": true, "async": true, "def": true, "class": true}

// PythonImports returns every import statement in a Python source file, at
// any depth (inside functions, conditionals, try blocks), in source order:
// the Import and ImportFrom nodes of Python's ast.
func PythonImports(src []byte) []PyImport {
	var out []PyImport
	forEachPyLine(src, func(l *pyLine) {
		toks := l.toks
		if len(toks) > 0 && toks[0].kind == pyName && pyCompound[toks[0].text] {
			c := pyHeaderColon(toks)
			if c < 0 {
				return
			}
			toks = toks[c+1:]
		}
		for len(toks) > 0 {
			end := len(toks)
			for i, tk := range toks {
				if tk.depth == 0 && tk.kind == pyOp && tk.text == ";" {
					end = i
					break
				}
			}
			out = append(out, pyImport(src, toks[:end])...)
			if end == len(toks) {
				break
			}
			toks = toks[end+1:]
		}
	})
	return out
}

// pyImport parses one simple statement if it is an import: one PyImport
// per module of an "import a, b", one for a from-import.
func pyImport(src []byte, toks []pyTok) []PyImport {
	if len(toks) < 2 || toks[0].kind != pyName {
		return nil
	}
	line := toks[0].line
	switch toks[0].text {
	case "import":
		// import a.b [as c], d
		var out []PyImport
		for _, part := range splitTopCommas(toks[1:]) {
			if mod := dottedName(src, part); mod != "" {
				out = append(out, PyImport{Module: mod, Line: line})
			}
		}
		return out
	case "from":
		i, level := 1, 0
		for i < len(toks) && toks[i].kind == pyOp && toks[i].text == "." {
			level++
			i++
		}
		j := i
		for j < len(toks) && !(toks[j].kind == pyName && toks[j].text == "import") {
			j++
		}
		if j >= len(toks) {
			return nil
		}
		module := dottedName(src, toks[i:j])
		if module == "" && (level == 0 || j > i) {
			return nil
		}
		var names []string
		for _, part := range splitTopCommas(toks[j+1:]) {
			part = trimParens(part)
			if len(part) == 0 {
				continue
			}
			if part[0].kind == pyOp && part[0].text == "*" {
				names = append(names, "*")
				continue
			}
			if part[0].kind == pyName {
				names = append(names, identifier(src, part[0]))
			}
		}
		return []PyImport{{Module: module, Level: level, From: true, Names: names, Line: line}}
	}
	return nil
}

// dottedName reads "a . b . c" (ignoring a trailing "as alias") as "a.b.c";
// "" when the tokens are not a dotted name.
func dottedName(src []byte, toks []pyTok) string {
	var b strings.Builder
	want := pyName
	for _, tk := range toks {
		if tk.kind == pyName && tk.text == "as" && want == pyOp {
			break
		}
		if want == pyName {
			if tk.kind != pyName {
				return ""
			}
			b.WriteString(identifier(src, tk))
			want = pyOp
			continue
		}
		if tk.kind != pyOp || tk.text != "." {
			return ""
		}
		b.WriteByte('.')
		want = pyName
	}
	if want == pyName {
		return ""
	}
	return b.String()
}

// identifier is a name token's identifier, NFKC-normalized as Python's
// parser normalizes identifiers.
func identifier(src []byte, tk pyTok) string {
	b := src[tk.start:tk.end]
	for _, c := range b {
		if c >= 0x80 {
			return norm.NFKC.String(string(b))
		}
	}
	return string(b)
}

// splitTopCommas splits a token run at commas outside the import list's
// own parentheses.
func splitTopCommas(toks []pyTok) [][]pyTok {
	var out [][]pyTok
	start := 0
	for i, tk := range toks {
		if tk.kind == pyOp && tk.text == "," && tk.depth <= 1 {
			out = append(out, toks[start:i])
			start = i + 1
		}
	}
	return append(out, toks[start:])
}

func trimParens(toks []pyTok) []pyTok {
	for len(toks) > 0 && toks[0].kind == pyOp && toks[0].text == "(" {
		toks = toks[1:]
	}
	for len(toks) > 0 && toks[len(toks)-1].kind == pyOp && toks[len(toks)-1].text == ")" {
		toks = toks[:len(toks)-1]
	}
	return toks
}
