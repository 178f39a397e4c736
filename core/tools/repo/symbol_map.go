package repo

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/codeintel"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// tagBatchBytes bounds the content handed to the tagger in one run.
const tagBatchBytes = 8 << 20

type symbolMapInput struct {
	PathPrefix string `json:"path_prefix,omitempty" description:"Only files under this prefix." maxLength:"$path"`
}

type symbolEntry struct {
	Path      string `json:"path" description:"File defining the symbol."`
	Name      string `json:"name" description:"The symbol's name."`
	Kind      string `json:"kind" description:"function, method, class or type (Go and Python); the tagger's kind otherwise."`
	StartLine int    `json:"start_line" description:"Line of the def, class, func or type keyword (decorators and doc comments excluded)." minimum:"1" maximum:"2147483648"`
	EndLine   int    `json:"end_line" description:"Last line of the definition, inclusive (Python: ast's end_lineno); equal to start_line when the extractor cannot tell." minimum:"1" maximum:"2147483648"`
	Parent    string `json:"parent" description:"Enclosing definition (dotted) or a Go method's receiver type; empty at file level."`
}

type symbolMapOutput struct {
	Symbols      []symbolEntry `json:"symbols" description:"Definitions in path order, then source order."`
	FilesScanned int           `json:"files_scanned" description:"Files parsed." minimum:"0" maximum:"2147483648"`
	Truncated    []string      `json:"truncated" description:"Bounds that cut the map short (files, symbols)."`
	Extractor    []string      `json:"extractor" description:"The extractors that produced the symbols: go/parser, python-tokenizer, universal-ctags, line-heuristic."`
	Marker       string        `json:"marker" description:"The untrusted-data marker framing the text answer."`
	Untrusted    bool          `json:"untrusted" description:"Always true."`
}

// symbolMap defines symbol_map.
func symbolMap(*settings.Settings) catalog.Tool[symbolMapInput, symbolMapOutput] {
	return catalog.Define[symbolMapInput, symbolMapOutput](catalog.ToolDef{
		Name:        "symbol_map",
		Family:      catalog.FamilyRepo,
		Scope:       "repo:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_SYMBOL_MAP_PER_MINUTE", Default: 20},
		Description: "List the functions, methods, classes and types defined under a repository prefix, with their line spans and the extractor that found them. Example: symbol_map(path_prefix=\"src/\")",
		Annotations: catalog.Annotations{Title: "Map symbols", ReadOnly: true, Idempotent: true},
		Bounds:      catalog.Bounds{"path": security.MaxPathBytes},
	})
}

type symbolMapper struct {
	tree   *tree
	tagger ports.SymbolTagger
}

// fileSymbols is one parsed file's answer.
type fileSymbols struct {
	path      string
	extractor string
	symbols   []ports.Symbol
}

// run reads every source file under the prefix that the caller may read
// (at most ARROWHEAD_SYMBOL_MAP_MAX_FILES), extracts its symbols and
// returns at most ARROWHEAD_SYMBOL_MAP_MAX_SYMBOLS of them.
func (m symbolMapper) run(ctx context.Context, call catalog.Call, in symbolMapInput) (*catalog.Reply[symbolMapOutput], error) {
	t, s := m.tree, m.tree.settings
	prefix, err := catalog.CleanPrefix(in.PathPrefix)
	if err != nil {
		return nil, err
	}
	var (
		results []fileSymbols
		tagged  []ports.SourceFile // the files without a native extractor
		tagIdx  []int              // their index in results
	)
	filesCut, err := t.readEach(ctx, prefix, s.SymbolMapMaxFiles, func(p string) bool {
		return codeintel.HasSymbols(p) && t.allowed(ctx, call.Principal, ports.ActionRead, p)
	}, func(p string, data []byte) {
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
	truncated := map[string]bool{"files": filesCut}
	if err := m.tag(ctx, tagged, tagIdx, results); err != nil {
		return nil, err
	}
	return m.answer(results, truncated), nil
}

// tag fills in the files without a native extractor, in batches, from the
// tagger or, without one or when it fails, the line heuristic.
func (m symbolMapper) tag(ctx context.Context, files []ports.SourceFile, idx []int, results []fileSymbols) error {
	for start := 0; start < len(files); {
		end, size := start, 0
		for end < len(files) && (end == start || size+len(files[end].Content) <= tagBatchBytes) {
			size += len(files[end].Content)
			end++
		}
		var tags [][]ports.Symbol
		if m.tagger != nil {
			var err error
			if tags, err = m.tagger.Tag(ctx, files[start:end]); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				tags = nil
			}
		}
		for i := start; i < end; i++ {
			r := &results[idx[i]]
			if tags != nil {
				r.extractor, r.symbols = m.tagger.Name(), tags[i-start]
			} else {
				r.extractor, r.symbols = codeintel.ExtractorHeuristic, codeintel.HeuristicSymbols(files[i].Content)
			}
		}
		start = end
	}
	return nil
}

func (m symbolMapper) answer(results []fileSymbols, truncated map[string]bool) *catalog.Reply[symbolMapOutput] {
	limit := m.tree.settings.SymbolMapMaxSymbols
	out := symbolMapOutput{Symbols: []symbolEntry{}, FilesScanned: len(results), Untrusted: true, Extractor: []string{}}
	var text strings.Builder
	used := map[string]bool{}
	for _, r := range results {
		used[r.extractor] = true
		path := oneLine(content.SanitizeString(r.path))
		for _, sym := range r.symbols {
			if len(out.Symbols) == limit {
				truncated["symbols"] = true
				break
			}
			e := symbolEntry{
				Path: path, Name: oneLine(content.SanitizeString(sym.Name)), Kind: oneLine(content.SanitizeString(sym.Kind)),
				StartLine: max(sym.StartLine, 1), EndLine: max(sym.EndLine, sym.StartLine, 1), Parent: oneLine(content.SanitizeString(sym.Parent)),
			}
			out.Symbols = append(out.Symbols, e)
			text.WriteString(e.Path + ":" + strconv.Itoa(e.StartLine) + "-" + strconv.Itoa(e.EndLine) + ": " + e.Kind + " ")
			if e.Parent != "" {
				text.WriteString(e.Parent + ".")
			}
			text.WriteString(e.Name + "\n")
		}
	}
	for ex := range used {
		out.Extractor = append(out.Extractor, ex)
	}
	slices.Sort(out.Extractor)
	out.Truncated = boundNames(truncated, "files", "symbols")
	if len(out.Symbols) == 0 {
		text.WriteString("No symbols.\n")
	}
	framed := content.Frame(text.String(), content.NewSource("symbols", "repository", "text", []byte(text.String())))
	out.Marker = framed.Marker
	return catalog.Answer(out, framed.Text)
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
