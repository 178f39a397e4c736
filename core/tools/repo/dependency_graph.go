package repo

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/codeintel"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

type dependencyGraphInput struct {
	PathPrefix string `json:"path_prefix,omitempty" description:"Only modules under this prefix." maxLength:"$path"`
}

type graphModule struct {
	ID       string `json:"id" description:"Dotted Python module name, or Go import path."`
	Path     string `json:"path" description:"The module's file (Python) or directory (Go)."`
	Language string `json:"language" description:"python or go." enum:"python,go"`
}

type graphEdge struct {
	From     string `json:"from" description:"Importing module id."`
	To       string `json:"to" description:"Imported module id."`
	External bool   `json:"external" description:"True when the target is not a module under the prefix (standard library, another module, or code you cannot read)."`
}

type dependencyGraphOutput struct {
	Modules      []graphModule `json:"modules" description:"Modules by id."`
	Edges        []graphEdge   `json:"edges" description:"Imports, each once, by (from, to)."`
	FilesScanned int           `json:"files_scanned" description:"Source files parsed." minimum:"0" maximum:"$count"`
	Truncated    []string      `json:"truncated" description:"Bounds that cut the graph short (files)."`
	Marker       string        `json:"marker" description:"The untrusted-data marker framing the text answer."`
	Untrusted    bool          `json:"untrusted" description:"Always true."`
}

// dependencyGraph defines dependency_graph.
var dependencyGraph = catalog.Define[dependencyGraphInput, dependencyGraphOutput](catalog.ToolDef{
	Name:        "dependency_graph",
	Scope:       "repo:read",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_DEPENDENCY_GRAPH_PER_MINUTE", Default: 10},
	Description: "Map the imports between the Python modules and Go packages under a repository prefix, marking dependencies outside it as external. Example: dependency_graph(path_prefix=\"src/\")",
	Annotations: catalog.Annotations{Title: "Map dependencies", ReadOnly: true, Idempotent: true},
})

// graph parses the Python and Go files under the prefix that the caller
// may read (at most ARROWHEAD_DEPENDENCY_GRAPH_MAX_FILES) and maps their
// imports. A Go package's id comes from the nearest go.mod at or above
// it, itself read only when the caller may read it.
func (t *tree) graph(ctx context.Context, call catalog.Call, in dependencyGraphInput) (*catalog.Reply[dependencyGraphOutput], error) {
	prefix, err := catalog.CleanPrefix(in.PathPrefix)
	if err != nil {
		return nil, err
	}
	var files []codeintel.GraphFile
	truncated, err := t.readEach(ctx, prefix, t.config.GraphMaxFiles, func(p string) bool {
		ext := path.Ext(p)
		return (ext == ".py" || ext == ".go") && t.allowed(ctx, call.Principal, ports.ActionRead, p)
	}, func(p string, data []byte) {
		files = append(files, codeintel.GraphFile{Path: p, Content: data})
	})
	if err != nil {
		return nil, err
	}
	g := codeintel.BuildGraph(files, t.goModules(ctx, call.Principal))
	out := dependencyGraphOutput{Modules: []graphModule{}, Edges: []graphEdge{}, FilesScanned: len(files), Untrusted: true,
		Truncated: boundNames(map[string]bool{"files": truncated}, "files")}
	var text strings.Builder
	for _, m := range g.Modules {
		gm := graphModule{ID: oneLine(content.SanitizeString(m.ID)), Path: oneLine(content.SanitizeString(m.Path)), Language: m.Language}
		out.Modules = append(out.Modules, gm)
		text.WriteString("module " + gm.ID + " (" + gm.Language + ", " + gm.Path + ")\n")
	}
	for _, e := range g.Edges {
		ge := graphEdge{From: oneLine(content.SanitizeString(e.From)), To: oneLine(content.SanitizeString(e.To)), External: e.External}
		out.Edges = append(out.Edges, ge)
		text.WriteString(ge.From + " -> " + ge.To)
		if ge.External {
			text.WriteString(" (external)")
		}
		text.WriteString("\n")
	}
	if len(out.Modules) == 0 {
		text.WriteString("No modules.\n")
	}
	framed := content.Frame(text.String(), content.NewSource("dependencies", "repository", "text", []byte(text.String())))
	out.Marker = framed.Marker
	answer := framed.Text
	if len(files) == 0 && prefix != "" {
		answer += "\n" + msgNothingUnderPrefix + "\n"
	}
	if truncated {
		// The graph is only as whole as the files read: say so where the
		// model reads it, not only in the structured result.
		last := ""
		if len(files) > 0 {
			last = ", the last " + strconv.Quote(oneLine(content.SanitizeString(files[len(files)-1].Path)))
		}
		answer += fmt.Sprintf("\nStopped early: the graph read its %s (ARROWHEAD_DEPENDENCY_GRAPH_MAX_FILES) in path order%s; "+
			"the modules and imports of the files after them are missing. Ask for a narrower path_prefix.\n", catalog.Count(len(files), "files"), last)
	}
	return catalog.Answer(out, answer), nil
}

// goModules finds the go.mod governing a directory by looking up the tree
// through the store, reading each go.mod only when the caller may read it,
// and remembering every answer for the call.
func (t *tree) goModules(ctx context.Context, p ports.Principal) codeintel.GoModuleFinder {
	type found struct {
		dir, module string
		ok          bool
	}
	cache := map[string]found{}
	var lookup func(dir string) found
	lookup = func(dir string) found {
		if f, ok := cache[dir]; ok {
			return f
		}
		var f found
		rel := path.Join(dir, "go.mod")
		if t.allowed(ctx, p, ports.ActionRead, rel) {
			if data, _, err := t.store.Read(ctx, rel, t.config.MaxFileBytes); err == nil {
				if mod := codeintel.GoModulePath(data); mod != "" {
					f = found{dir: dir, module: mod, ok: true}
				}
			}
		}
		if !f.ok && dir != "." {
			f = lookup(path.Dir(dir))
		}
		cache[dir] = f
		return f
	}
	return func(dir string) (string, string, bool) {
		f := lookup(dir)
		return f.dir, f.module, f.ok
	}
}
