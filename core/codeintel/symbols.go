// Package codeintel is the repo family's source intelligence: the symbols
// defined in a file (Go through go/parser, Python through a
// tokenizer-aware parser of its own that agrees with Python's ast, other
// languages through a ports.SymbolTagger or a line heuristic) and the
// imports between modules (Python modules and Go packages) as a
// dependency graph. It parses text and never executes or loads what it
// reads; reading, authorization and caps are the calling tool's concern.
package codeintel

import (
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/arrowhead-go/arrowhead/ports"
)

// Extractor names, as results report them.
const (
	ExtractorGo        = "go/parser"
	ExtractorPython    = "python-tokenizer"
	ExtractorHeuristic = "line-heuristic"
)

// NativeExtractor returns the extractor codeintel itself has for a file,
// by extension: Go, Python (.py, .pyi), or "" when a tagger or the
// heuristic must do.
func NativeExtractor(p string) string {
	switch path.Ext(p) {
	case ".go":
		return ExtractorGo
	case ".py", ".pyi":
		return ExtractorPython
	}
	return ""
}

// NativeSymbols runs the native extractor NativeExtractor names for p.
func NativeSymbols(p string, src []byte) []ports.Symbol {
	switch NativeExtractor(p) {
	case ExtractorGo:
		return GoSymbols(src)
	case ExtractorPython:
		return PythonSymbols(src)
	}
	return nil
}

// HasSymbols reports whether a file can hold definitions worth mapping:
// source code, not prose or data (Markdown, text, JSON, YAML, TOML).
func HasSymbols(p string) bool {
	switch path.Ext(p) {
	case ".md", ".txt", ".json", ".yaml", ".yml", ".toml":
		return false
	}
	return !strings.HasSuffix(p, "/go.mod") && p != "go.mod"
}

// heuristicRules recognize a definition by the shape of its first line in
// the C-family, JVM, Rust, Ruby, PHP, Swift and shell languages. They are
// a fallback: they may miss or misread a definition, and they cannot tell
// where one ends. They are compiled on first use: most processes never
// map a non-Go, non-Python file, and compiling them costs every start-up
// a few hundred microseconds.
var heuristicRules = sync.OnceValue(func() []heuristicRule {
	return []heuristicRule{
		{regexp.MustCompile(`^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?(?:pub(?:\([^)]*\))?\s+|public\s+|private\s+|protected\s+|internal\s+)*(?:static\s+|final\s+|sealed\s+|data\s+|open\s+)*(class|interface|struct|enum|trait|object|record)\s+([A-Za-z_$][\w$]*)`), ""},
		{regexp.MustCompile(`^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?(fn)\s+([A-Za-z_]\w*)`), "function"},
		{regexp.MustCompile(`^\s*(?:pub(?:\([^)]*\))?\s+)?(mod|impl|type)\s+([A-Za-z_]\w*)`), ""},
		{regexp.MustCompile(`^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(function)\s*\*?\s*([A-Za-z_$][\w$]*)`), "function"},
		{regexp.MustCompile(`^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*=>`), "function"},
		{regexp.MustCompile(`^\s*(?:(?:public|private|protected|static|final|abstract)\s+)*(func|fun|def|sub|module)\s+(?:self\.)?([A-Za-z_]\w*[?!]?)`), "function"},
		{regexp.MustCompile(`^\s*(?:function\s+)?([A-Za-z_][\w]*)\s*\(\)\s*\{`), "function"},
	}
})

type heuristicRule struct {
	re   *regexp.Regexp
	kind string
}

// HeuristicSymbols finds definitions by line patterns: each symbol's
// EndLine equals its StartLine and it has no parent.
func HeuristicSymbols(src []byte) []ports.Symbol {
	var out []ports.Symbol
	for i, line := range strings.Split(string(src), "\n") {
		if len(line) > 1000 {
			continue
		}
		for _, r := range heuristicRules() {
			m := r.re.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			kind, name := r.kind, m[len(m)-1]
			if len(m) == 3 && kind == "" {
				kind = m[1]
			}
			if kind == "" {
				kind = "function"
			}
			out = append(out, ports.Symbol{Name: name, Kind: kind, StartLine: i + 1, EndLine: i + 1})
			break
		}
	}
	return out
}
