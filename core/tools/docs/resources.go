package docs

import (
	"context"
	"encoding/json"
	"net/url"
	"path"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Resource URIs.
const (
	DocScheme   = "doc://"
	DocTemplate = "doc://{+path}"
	IndexURI    = "docs://index"
)

// documentTemplate is the doc:// template, served by readResource and
// completed by completeDocument.
var documentTemplate = catalog.ResourceSpec{
	Name:        "document",
	Template:    DocTemplate,
	Description: "A corpus document by path, sanitized for its format and framed as untrusted data (same checks as doc_read).",
	Scope:       "docs:read",
	Match:       matchDoc,
}

// indexResource is docs://index, served by index.
var indexResource = catalog.ResourceSpec{
	Name:        "index",
	URI:         IndexURI,
	Description: "The corpus documents the caller may read, with sizes and doc:// URIs.",
	MimeType:    "application/json",
	Scope:       "docs:read",
}

func (c *corpus) readResource(ctx context.Context, call catalog.ResourceCall) ([]catalog.ResourceContent, error) {
	out, err := c.read(ctx, call.Principal, call.Vars["path"])
	if err != nil {
		return nil, err
	}
	return []catalog.ResourceContent{{URI: DocURI(out.Path), MimeType: mimeOf(out.ContentType), Text: out.Text}}, nil
}

func (c *corpus) completeDocument(ctx context.Context, call catalog.CompletionCall) (catalog.Completion, error) {
	if call.Argument != "path" {
		return catalog.Completion{}, nil
	}
	return c.completePaths(ctx, call.Principal, call.Value, false)
}

func (c *corpus) index(ctx context.Context, call catalog.ResourceCall) ([]catalog.ResourceContent, error) {
	listed, truncated, err := c.store.List(ctx, "", c.config.ListMaxFiles)
	if err != nil {
		return nil, storeRefusal(err)
	}
	allow := c.allowFunc(call.Principal, ports.ActionRead)
	docs := []map[string]any{}
	for _, f := range listed {
		if ok, _ := allow(ctx, f.Path); ok {
			docs = append(docs, map[string]any{"path": f.Path, "size": f.Size, "uri": DocURI(f.Path)})
		}
	}
	body, err := json.Marshal(map[string]any{"documents": docs, "truncated": truncated})
	if err != nil {
		return nil, err
	}
	return []catalog.ResourceContent{{URI: IndexURI, MimeType: "application/json", Text: string(body)}}, nil
}

// matchDoc extracts the path of a doc:// URI (percent-decoded).
func matchDoc(uri string) (map[string]string, bool) {
	rest, ok := strings.CutPrefix(uri, DocScheme)
	if !ok || rest == "" || strings.ContainsAny(rest, "?#") {
		return nil, false
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return nil, false
	}
	return map[string]string{"path": p}, true
}

// completePaths offers document paths (or, for dirs, directory prefixes)
// the caller may read that start with value, at most
// catalog.MaxCompletionValues.
func (c *corpus) completePaths(ctx context.Context, p ports.Principal, value string, dirs bool) (catalog.Completion, error) {
	// List under the directory part of what was typed (a component
	// boundary), then filter by the partial last component.
	prefix := ""
	if i := strings.LastIndex(value, "/"); i >= 0 {
		if dir, err := catalog.CleanPrefix(value[:i+1]); err == nil {
			prefix = dir
		} else {
			return catalog.Completion{Values: []string{}}, nil
		}
	}
	listed, _, err := c.store.List(ctx, prefix, c.config.ListMaxFiles)
	if err != nil {
		return catalog.Completion{}, storeRefusal(err)
	}
	allow := c.allowFunc(p, ports.ActionRead)
	seen := map[string]bool{}
	values := []string{}
	more := false
	for _, f := range listed {
		cand := f.Path
		if dirs {
			dir := path.Dir(f.Path)
			if dir == "." {
				continue
			}
			cand = dir + "/"
		}
		if !strings.HasPrefix(cand, value) || seen[cand] {
			continue
		}
		if ok, _ := allow(ctx, f.Path); !ok {
			continue
		}
		if len(values) == catalog.MaxCompletionValues {
			more = true
			break
		}
		seen[cand] = true
		values = append(values, cand)
	}
	return catalog.Completion{Values: values, Total: len(values), HasMore: more}, nil
}
