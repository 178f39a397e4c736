package docs

import (
	"context"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

// readOutput is doc_read's (and the doc:// resource's) structured shape.
func readOutput() *catalog.Schema {
	props := content.FrameProperties()
	props["path"] = catalog.String("The document path.", 0)
	props["content_type"] = catalog.Enum("Format the document was sanitized as.", formatJSON, formatMarkdown, formatText)
	props["truncated"] = catalog.Boolean("True when the sanitized content was cut at the size limit.")
	return catalog.Object(props, "path", "content_type", "truncated", "content", "marker", "source", "untrusted")
}

// DocRead declares doc_read.
func DocRead(d Deps) catalog.ToolSpec {
	return catalog.MustTool(catalog.ToolDef{
		Name:        "doc_read",
		Family:      catalog.FamilyDocs,
		Scope:       "docs:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_DOC_READ_PER_MINUTE", Default: 60},
		Description: "Read a JSON, Markdown or text document from the corpus by relative path; returns sanitized content framed as untrusted data. Example: doc_read(path=\"notes/todo.md\")",
		Input: catalog.Object(map[string]*catalog.Schema{
			"path": catalog.String("Document path relative to the corpus root.", security.MaxPathBytes),
		}, "path"),
		Output:      readOutput(),
		Annotations: catalog.Annotations{Title: "Read document", ReadOnly: true, Idempotent: true},
		Handler: func(ctx context.Context, call catalog.Call) (catalog.Result, error) {
			var args struct {
				Path string `json:"path"`
			}
			if err := call.Bind(&args); err != nil {
				return catalog.Result{}, err
			}
			out, framed, err := d.read(ctx, call.Principal, args.Path)
			if err != nil {
				return catalog.Result{}, err
			}
			return catalog.Result{Structured: out, Text: framed.Text}, nil
		},
	})
}

// read is the shared path of doc_read and the doc:// resource: validate,
// authorize, read, sanitize for the format, frame.
func (d Deps) read(ctx context.Context, p ports.Principal, reqPath string) (map[string]any, content.Framed, error) {
	rel, err := docPath(reqPath)
	if err != nil {
		return nil, content.Framed{}, err
	}
	if err := d.authorize(ctx, p, ports.ActionRead, rel); err != nil {
		return nil, content.Framed{}, err
	}
	st, err := d.store()
	if err != nil {
		return nil, content.Framed{}, err
	}
	raw, _, err := st.Read(ctx, rel, int64(d.Settings.DocMaxBytes))
	if err != nil {
		return nil, content.Framed{}, storeRefusal(err)
	}
	format := formatOf(rel)
	framed, truncated, err := d.frame("document", rel, format, raw)
	if err != nil {
		return nil, content.Framed{}, err
	}
	out := framed.Structured()
	out["path"] = rel
	out["content_type"] = format
	out["truncated"] = truncated
	return out, framed, nil
}
