package ports

import "context"

// Symbol is one definition found in a source file.
type Symbol struct {
	Name string
	// Kind is the extractor's kind ("function", "method", "class", "type",
	// or a tagger's own kind name such as "struct").
	Kind string
	// Parent is the enclosing definition ("Outer.Inner" for a nested one,
	// the receiver type for a Go method), "" at file level.
	Parent string
	// StartLine and EndLine are 1-based and inclusive; a line-oriented
	// extractor that cannot tell the end reports EndLine == StartLine.
	StartLine, EndLine int
}

// SourceFile is a file's path and already-read content, handed to a
// SymbolTagger so that it never opens anything itself.
type SourceFile struct {
	Path    string
	Content []byte
}

// SymbolTagger extracts definitions from files in the languages the core
// has no parser of its own for (the universal-ctags adapter). It reads only
// the content it is given, never the filesystem, and is bounded in time and
// output. Tag returns one symbol list per file, in order; an error means no
// answer for the batch (the caller falls back to its own heuristic). Name
// identifies the extractor in results. Safe for concurrent use.
type SymbolTagger interface {
	Name() string
	Tag(ctx context.Context, files []SourceFile) ([][]Symbol, error)
}
