package docs

import (
	"context"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

type docReadInput struct {
	Path string `json:"path" description:"Document path relative to the corpus root." maxLength:"$path"`
}

// sanitizedDocument is the part of doc_read's and doc_retrieve's output
// that says how the content was treated.
type sanitizedDocument struct {
	content.Framed
	ContentType string `json:"content_type" description:"Format the document was sanitized as." enum:"json,markdown,text"`
	Truncated   bool   `json:"truncated" description:"True when the sanitized content was cut at the size limit."`
}

// readOutput is doc_read's output, and what the doc:// resource serves.
type readOutput struct {
	sanitizedDocument
	Path string `json:"path" description:"The document path."`
}

// docRead defines doc_read.
var docRead = catalog.Define[docReadInput, readOutput](catalog.ToolDef{
	Name:        "doc_read",
	Scope:       "docs:read",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_DOC_READ_PER_MINUTE", Default: 60},
	Description: "Read a JSON, Markdown or text document from the corpus by relative path; returns sanitized content framed as untrusted data. Example: doc_read(path=\"notes/todo.md\")",
	Annotations: catalog.Annotations{Title: "Read document", ReadOnly: true, Idempotent: true},
})

func (c *corpus) readTool(ctx context.Context, call catalog.Call, in docReadInput) (*catalog.Reply[readOutput], error) {
	out, err := c.read(ctx, call.Principal, in.Path)
	if err != nil {
		return nil, err
	}
	return catalog.Answer(out, out.Text+c.cutNote(out.Truncated)), nil
}

// cutNote is the text's last sentence when the sanitized content was cut
// at ARROWHEAD_CONTENT_MAX_BYTES.
func (c *corpus) cutNote(cut bool) string {
	return content.CutNote(cut, "ARROWHEAD_CONTENT_MAX_BYTES", int64(c.config.ContentMaxBytes))
}

// read is the shared path of doc_read and the doc:// resource: validate,
// authorize, read, sanitize for the format, frame.
func (c *corpus) read(ctx context.Context, p ports.Principal, reqPath string) (readOutput, error) {
	rel, err := catalog.CleanPath(reqPath)
	if err != nil {
		return readOutput{}, err
	}
	if err := c.authorize(ctx, p, ports.ActionRead, rel); err != nil {
		return readOutput{}, err
	}
	raw, _, err := c.store.Read(ctx, rel, int64(c.config.MaxBytes))
	if err != nil {
		return readOutput{}, storeRefusal(err)
	}
	format := content.DocumentFormat(rel)
	framed, truncated, err := c.frame("document", rel, format, raw)
	if err != nil {
		return readOutput{}, err
	}
	return readOutput{sanitizedDocument{framed, format, truncated}, rel}, nil
}
