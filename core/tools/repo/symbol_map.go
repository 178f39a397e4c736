package repo

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/codeintel"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

// tagBatchBytes bounds the content handed to the tagger in one run.
const tagBatchBytes = 8 << 20

type symbolMapInput struct {
	PathPrefix   string   `json:"path_prefix,omitempty" description:"Only files under this prefix." maxLength:"$path"`
	Kinds        []string `json:"kinds,omitempty" description:"Only definitions of these kinds (function, method, class, type, or a tagger's kind such as struct); all when absent." maxItems:"16" items:"minLength=1;maxLength=32"`
	IncludeTests *bool    `json:"include_tests,omitempty" description:"Whether test files and fixtures (_test.go, test_*.py, *.spec.ts, test/ and testdata/ directories, ...) are mapped; true when absent."`
	Format       string   `json:"format,omitempty" description:"Text form: compact (the default: each path once, then one 'line kind name' row per definition, a nested one or a method after its type indented under it and named alone, with function and method written func and meth) or lines (one 'path:start-end: kind name' line per definition). The structured result is the same." enum:"compact,lines"`
}

type symbolEntry struct {
	Path      string `json:"path" description:"File defining the symbol."`
	Name      string `json:"name" description:"The symbol's name."`
	Kind      string `json:"kind" description:"function, method, class or type (Go and Python); the tagger's kind otherwise."`
	StartLine int    `json:"start_line" description:"Line of the def, class, func or type keyword (decorators and doc comments excluded)." minimum:"1" maximum:"$count"`
	EndLine   int    `json:"end_line" description:"Last line of the definition, inclusive (Python: ast's end_lineno); equal to start_line when the extractor cannot tell." minimum:"1" maximum:"$count"`
	Parent    string `json:"parent" description:"Enclosing definition (dotted) or a Go method's receiver type; empty at file level."`
}

type symbolMapOutput struct {
	Symbols      []symbolEntry `json:"symbols" description:"Definitions in path order, then source order."`
	FilesScanned int           `json:"files_scanned" description:"Files parsed." minimum:"0" maximum:"$count"`
	Truncated    []string      `json:"truncated" description:"Bounds that cut the map short (files, symbols)."`
	NextPrefixes []string      `json:"next_prefixes,omitempty" description:"When the map was cut short: the path prefixes holding the files it did not reach, in path order, to ask for next."`
	Extractor    []string      `json:"extractor" description:"The extractors that produced the symbols: go/parser, python-tokenizer, universal-ctags, line-heuristic."`
	Marker       string        `json:"marker" description:"The untrusted-data marker framing the text answer."`
	Untrusted    bool          `json:"untrusted" description:"Always true."`
}

// symbolMap defines symbol_map.
var symbolMap = catalog.Define[symbolMapInput, symbolMapOutput](catalog.ToolDef{
	Name:        "symbol_map",
	Scope:       "repo:read",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_SYMBOL_MAP_PER_MINUTE", Default: 20},
	Description: "List the functions, methods, classes and types defined under a repository prefix, with their line spans and the extractor that found them; filter by kind and leave tests out to ask for less. A map cut short by its caps says where it stopped and which prefixes to ask for next. Example: symbol_map(path_prefix=\"src/\", kinds=[\"function\", \"type\"], include_tests=false)",
	Annotations: catalog.Annotations{Title: "Map symbols", ReadOnly: true, Idempotent: true},
})

// fileSymbols is one parsed file's answer.
type fileSymbols struct {
	path      string
	extractor string
	symbols   []ports.Symbol
}

// maxNextPrefixes bounds the prefixes a cut map suggests.
const maxNextPrefixes = 10

// symbolMap reads every source file under the prefix that the caller may
// read (at most ARROWHEAD_SYMBOL_MAP_MAX_FILES), extracts its symbols and
// returns at most ARROWHEAD_SYMBOL_MAP_MAX_SYMBOLS of them, of the kinds
// asked for.
func (t *tree) symbolMap(ctx context.Context, call catalog.Call, in symbolMapInput) (*catalog.Reply[symbolMapOutput], error) {
	prefix, err := catalog.CleanPrefix(in.PathPrefix)
	if err != nil {
		return nil, err
	}
	includeTests := in.IncludeTests == nil || *in.IncludeTests
	keep := func(p string) bool {
		return codeintel.HasSymbols(p) && (includeTests || !codeintel.IsTestFile(p)) && t.allowed(ctx, call.Principal, ports.ActionRead, p)
	}
	var (
		results []fileSymbols
		tagged  []ports.SourceFile // the files without a native extractor
		tagIdx  []int              // their index in results
	)
	filesCut, err := t.readEach(ctx, prefix, t.config.SymbolMapMaxFiles, keep, func(p string, data []byte) {
		if ex := codeintel.NativeExtractor(p); ex != "" {
			results = append(results, fileSymbols{path: p, extractor: ex, symbols: codeintel.NativeSymbols(p, data)})
			return
		}
		results = append(results, fileSymbols{path: p})
		tagged = append(tagged, ports.SourceFile{Path: p, Content: data})
		tagIdx = append(tagIdx, len(results)-1)
	})
	if err != nil {
		return nil, err
	}
	if err := t.tag(ctx, tagged, tagIdx, results); err != nil {
		return nil, err
	}
	if len(in.Kinds) > 0 {
		for i := range results {
			results[i].symbols = slices.DeleteFunc(results[i].symbols, func(sym ports.Symbol) bool { return !slices.Contains(in.Kinds, sym.Kind) })
		}
	}
	mp := t.answer(results, map[string]bool{"files": filesCut}, in.Format != "lines")
	if len(results) == 0 && prefix != "" {
		mp.note = msgNothingUnderPrefix
	}
	if mp.resume != "" {
		if err := t.suggest(ctx, prefix, keep, results, mp); err != nil {
			return nil, err
		}
	}
	return mp.reply(), nil
}

// tag fills in the files without a native extractor, in batches, from the
// tagger or, without one or when it fails, the line heuristic.
func (t *tree) tag(ctx context.Context, files []ports.SourceFile, idx []int, results []fileSymbols) error {
	for start := 0; start < len(files); {
		end, size := start, 0
		for end < len(files) && (end == start || size+len(files[end].Content) <= tagBatchBytes) {
			size += len(files[end].Content)
			end++
		}
		var tags [][]ports.Symbol
		if t.tagger != nil {
			var err error
			if tags, err = t.tagger.Tag(ctx, files[start:end]); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				tags = nil
			}
		}
		for i := start; i < end; i++ {
			r := &results[idx[i]]
			if tags != nil {
				r.extractor, r.symbols = t.tagger.Name(), tags[i-start]
			} else {
				r.extractor, r.symbols = codeintel.ExtractorHeuristic, codeintel.HeuristicSymbols(files[i].Content)
			}
		}
		start = end
	}
	return nil
}

// mapAnswer is a map being answered.
type mapAnswer struct {
	out  symbolMapOutput
	text strings.Builder
	// resume is where a cut map stops: the first path not fully mapped
	// (inclusive) or, after a files cut, the last path mapped (exclusive).
	resume     string
	resumeFrom bool // resume itself is not fully mapped
	note       string
}

func (t *tree) answer(results []fileSymbols, truncated map[string]bool, compact bool) *mapAnswer {
	limit := t.config.SymbolMapMaxSymbols
	mp := &mapAnswer{out: symbolMapOutput{Symbols: []symbolEntry{}, FilesScanned: len(results), Untrusted: true, Extractor: []string{}}}
	out, text := &mp.out, &mp.text
	used := map[string]bool{}
	for _, r := range results {
		used[r.extractor] = true
		if truncated["symbols"] {
			break
		}
		path := oneLine(content.SanitizeString(r.path))
		if compact && len(r.symbols) > 0 {
			text.WriteString(path + "\n")
		}
		var (
			open  []symbolEntry // the compact form's enclosing definitions
			group string        // the last unindented row's name: methods of it go under it
		)
		for _, sym := range r.symbols {
			if len(out.Symbols) == limit {
				truncated["symbols"] = true
				mp.resume, mp.resumeFrom = r.path, true
				break
			}
			e := symbolEntry{
				Path: path, Name: oneLine(content.SanitizeString(sym.Name)), Kind: oneLine(content.SanitizeString(sym.Kind)),
				StartLine: max(sym.StartLine, 1), EndLine: max(sym.EndLine, sym.StartLine, 1), Parent: oneLine(content.SanitizeString(sym.Parent)),
			}
			out.Symbols = append(out.Symbols, e)
			name := e.Name
			if e.Parent != "" {
				name = e.Parent + "." + name
			}
			if compact {
				// A definition inside the one above it (a Python method in
				// its class) is indented under it and named alone, and so
				// is a method following its receiver type's row or a
				// sibling's (Go); any other keeps its qualified name.
				for len(open) > 0 && open[len(open)-1].EndLine < e.StartLine {
					open = open[:len(open)-1]
				}
				depth := 0
				switch n := len(open); {
				case n > 0 && qualified(open[n-1]) == e.Parent:
					depth, name = n, e.Name
				case len(open) == 0 && e.Parent != "" && e.Parent == group:
					depth, name = 1, e.Name
				default:
					open = open[:0]
				}
				if depth == 0 {
					group = qualified(e)
				}
				text.WriteString(strings.Repeat(" ", 2*depth) + strconv.Itoa(e.StartLine) + " " + shortKind(e.Kind) + " " + name + "\n")
				open = append(open, e)
			} else {
				text.WriteString(e.Path + ":" + strconv.Itoa(e.StartLine) + "-" + strconv.Itoa(e.EndLine) + ": " + e.Kind + " " + name + "\n")
			}
		}
	}
	if truncated["files"] && mp.resume == "" && len(results) > 0 {
		mp.resume = results[len(results)-1].path
	}
	for ex := range used {
		out.Extractor = append(out.Extractor, ex)
	}
	slices.Sort(out.Extractor)
	out.Truncated = boundNames(truncated, "files", "symbols")
	if len(out.Symbols) == 0 {
		text.WriteString("No symbols.\n")
	}
	switch {
	case truncated["symbols"]:
		mp.note = fmt.Sprintf("Stopped early: the map reached %d symbols (ARROWHEAD_SYMBOL_MAP_MAX_SYMBOLS) in file %d of %d read (ARROWHEAD_SYMBOL_MAP_MAX_FILES %d)",
			limit, slices.IndexFunc(results, func(r fileSymbols) bool { return r.path == mp.resume })+1, len(results), t.config.SymbolMapMaxFiles)
	case truncated["files"]:
		mp.note = fmt.Sprintf("Stopped early: the map read its %s (ARROWHEAD_SYMBOL_MAP_MAX_FILES), %s", catalog.Count(len(results), "files"), catalog.Count(len(out.Symbols), "symbols"))
	}
	return mp
}

// shortKind is the compact form's name for a kind: func and meth for the
// two most common, which make up most rows; other kinds as they are.
func shortKind(kind string) string {
	switch kind {
	case codeintel.KindFunction:
		return "func"
	case codeintel.KindMethod:
		return "meth"
	}
	return kind
}

// qualified is a definition's dotted name, its parents first.
func qualified(e symbolEntry) string {
	if e.Parent == "" {
		return e.Name
	}
	return e.Parent + "." + e.Name
}

// suggest completes a cut map's note: how many files it did not reach and
// the prefixes holding them, each the shortest under the requested prefix
// that holds no mapped file, else the unfinished files' own directory
// (path_prefix cannot start inside a directory, so asking for it maps
// some files again; the note says so).
func (t *tree) suggest(ctx context.Context, prefix string, keep func(string) bool, results []fileSymbols, mp *mapAnswer) error {
	files, listCut, err := t.store.List(ctx, prefix, t.config.MaxFiles)
	if err != nil {
		return storeRefusal(err)
	}
	mapped := make([]string, 0, len(results))
	for _, r := range results {
		if r.path < mp.resume || (r.path == mp.resume && !mp.resumeFrom) {
			mapped = append(mapped, r.path)
		}
	}
	holdsMapped := func(dir string) bool {
		i, _ := slices.BinarySearch(mapped, dir)
		return i < len(mapped) && strings.HasPrefix(mapped[i], dir)
	}
	counts := map[string]int{}
	var order []string
	left := 0
	for _, f := range files {
		if f.Path < mp.resume || (f.Path == mp.resume && !mp.resumeFrom) || !keep(f.Path) {
			continue
		}
		left++
		rest := strings.TrimPrefix(f.Path, prefix)
		if prefix != "" && !strings.HasSuffix(prefix, "/") {
			rest = strings.TrimPrefix(rest, "/")
		}
		comps := strings.Split(rest, "/")
		next := ""
		for depth := 1; depth < len(comps); depth++ {
			cand := f.Path[:len(f.Path)-len(strings.Join(comps[depth:], "/"))]
			if !holdsMapped(cand) {
				next = cand
				break
			}
		}
		if next == "" {
			next = f.Path[:len(f.Path)-len(comps[len(comps)-1])]
			if next == "" {
				next = f.Path
			}
		}
		if counts[next] == 0 {
			order = append(order, next)
		}
		counts[next]++
	}
	more := ""
	if listCut {
		more = "at least "
	}
	var b strings.Builder
	noun, were := "files", "were"
	if left == 1 && more == "" {
		noun, were = "file", "was"
	}
	fmt.Fprintf(&b, "%s; %s%d more %s under this prefix %s not mapped.", mp.note, more, left, noun, were)
	for i, p := range order {
		if i == maxNextPrefixes {
			fmt.Fprintf(&b, " (and %d more prefixes)", len(order)-i)
			break
		}
		if i == 0 {
			b.WriteString(" Ask next for path_prefix ")
		} else {
			b.WriteString(", ")
		}
		q := oneLine(content.SanitizeString(p))
		mp.out.NextPrefixes = append(mp.out.NextPrefixes, q)
		fmt.Fprintf(&b, "%s (%s", strconv.Quote(q), catalog.Count(counts[p], "files"))
		if holdsMapped(p) {
			b.WriteString(" not yet mapped; it holds mapped ones too")
		}
		b.WriteString(")")
	}
	b.WriteString(". Or ask for less: kinds=[...] or include_tests=false.")
	mp.note = b.String()
	return nil
}

// reply frames the map; a note on where it stopped stands after the frame.
func (mp *mapAnswer) reply() *catalog.Reply[symbolMapOutput] {
	framed := content.Frame(mp.text.String(), content.NewSource("symbols", "repository", "text", []byte(mp.text.String())))
	mp.out.Marker = framed.Marker
	text := framed.Text
	if mp.note != "" {
		text += "\n" + mp.note + "\n"
	}
	return catalog.Answer(mp.out, text)
}

// boundNames lists the set bounds in the given order; never nil.
func boundNames(set map[string]bool, order ...string) []string {
	out := []string{}
	for _, name := range order {
		if set[name] {
			out = append(out, name)
		}
	}
	return out
}
