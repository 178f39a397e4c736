// Package docs is the document suite: doc_search, doc_read, doc_retrieve,
// doc_scan and doc_write over a jailed corpus of JSON, Markdown and text,
// plus the doc:// resources, the docs://index resource, the audit_corpus and
// summarize_document prompts and their completions. Everything read is
// sanitized for its format and framed as untrusted data; every document
// touched is authorized per resource (default deny) after the scope check.
package docs

import (
	"context"
	"crypto/rand"
	"errors"
	"path"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Deps are what the document suite needs.
type Deps struct {
	Settings *settings.Settings
	// Store is the jailed corpus; nil leaves the tools refusing.
	Store ports.DocumentStore
	// Egress performs doc_retrieve's SSRF-guarded fetch.
	Egress ports.Egress
	// Authorizer is the per-resource gate (the same one the App uses).
	Authorizer ports.Authorizer
	// Scanner finds and redacts secrets; one per process.
	Scanner *security.Scanner
	// ConfirmKey keys the overwrite-confirmation state; random when nil.
	ConfirmKey []byte
}

// Components returns the suite's tools, resources and prompts.
func Components(d Deps) ([]catalog.ToolSpec, []catalog.ResourceSpec, []catalog.PromptSpec) {
	if d.Scanner == nil {
		d.Scanner = security.NewRandomScanner()
	}
	if len(d.ConfirmKey) == 0 {
		d.ConfirmKey = make([]byte, 32)
		if _, err := rand.Read(d.ConfirmKey); err != nil {
			panic("docs: no randomness for the confirmation key")
		}
	}
	tools := []catalog.ToolSpec{DocSearch(d), DocRead(d), DocRetrieve(d), DocScan(d), DocWrite(d)}
	return tools, Resources(d), Prompts(d)
}

// Document formats.
const (
	formatJSON     = "json"
	formatMarkdown = "markdown"
	formatText     = "text"
)

// formatOf maps a document path to its format by extension.
func formatOf(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".json":
		return formatJSON
	case ".md", ".markdown":
		return formatMarkdown
	}
	return formatText
}

// mimeOf is the MIME type served for a format.
func mimeOf(format string) string {
	switch format {
	case formatJSON:
		return "application/json"
	case formatMarkdown:
		return "text/markdown"
	}
	return "text/plain"
}

// sanitize turns raw document bytes into safe text for their format.
func (d Deps) sanitize(format string, raw []byte) (string, error) {
	switch format {
	case formatJSON:
		out, err := content.SanitizeJSON(raw, content.JSONLimits{
			MaxBytes:    max(d.Settings.ContentMaxBytes, d.Settings.DocMaxBytes),
			MaxDepth:    d.Settings.JSONMaxDepth,
			MaxElements: d.Settings.JSONMaxElements,
		})
		if err != nil {
			return "", jsonRefusal(err)
		}
		return out, nil
	case formatMarkdown:
		out, err := content.SanitizeMarkdown(raw)
		if err != nil {
			return "", encodingRefusal(err)
		}
		return out, nil
	}
	out, err := content.SanitizeText(raw)
	if err != nil {
		return "", encodingRefusal(err)
	}
	return out, nil
}

// frame sanitizes raw, caps it at ARROWHEAD_CONTENT_MAX_BYTES and wraps it
// in provenance.
func (d Deps) frame(kind, identifier, format string, raw []byte) (content.Framed, bool, error) {
	text, err := d.sanitize(format, raw)
	if err != nil {
		return content.Framed{}, false, err
	}
	text, truncated := content.Truncate(text, d.Settings.ContentMaxBytes)
	return content.Frame(text, content.NewSource(kind, identifier, format, raw)), truncated, nil
}

func jsonRefusal(err error) error {
	for _, s := range []error{content.ErrJSONTooLarge, content.ErrJSONTooDeep, content.ErrJSONTooManyElements,
		content.ErrJSONDuplicateKey, content.ErrJSONNonFinite, content.ErrJSONSyntax, content.ErrJSONTrailingData} {
		if errors.Is(err, s) {
			return catalog.Invalid("The document is refused: %s.", s.Error())
		}
	}
	return err
}

func encodingRefusal(err error) error {
	if errors.Is(err, content.ErrUTF7) {
		return catalog.Invalid("The document is refused: UTF-7 encoded text is not accepted.")
	}
	return err
}

// authorize runs the per-resource check for a document.
func (d Deps) authorize(ctx context.Context, p ports.Principal, action ports.Action, rel string) error {
	if d.Authorizer == nil {
		return catalog.Denied()
	}
	if !d.Authorizer.Authorize(ctx, p, action, ports.Resource{Kind: ports.KindDocument, ID: rel}).Allowed {
		return catalog.Denied()
	}
	return nil
}

// allowFunc adapts the authorizer for per-document filtering.
func (d Deps) allowFunc(p ports.Principal, action ports.Action) func(ctx context.Context, rel string) (bool, error) {
	return func(ctx context.Context, rel string) (bool, error) {
		return d.Authorizer != nil && d.Authorizer.Authorize(ctx, p, action, ports.Resource{Kind: ports.KindDocument, ID: rel}).Allowed, nil
	}
}

func (d Deps) store() (ports.DocumentStore, error) {
	if d.Store == nil {
		return nil, catalog.Unavailable("The document corpus is not configured.")
	}
	return d.Store, nil
}

// docPath validates a caller's document path.
func docPath(p string) (string, error) {
	rel, err := security.CleanRelPath(p)
	if err != nil {
		return "", catalog.Invalid("%s.", capitalize(err.Error()))
	}
	return rel, nil
}

// docPrefix validates a caller's path prefix ("" is the whole corpus).
func docPrefix(p string) (string, error) {
	rel, err := security.CleanRelPrefix(p)
	if err != nil {
		return "", catalog.Invalid("The path prefix is refused: %s.", err.Error())
	}
	return rel, nil
}

// storeRefusal maps store errors to refusals that never name the path.
func storeRefusal(err error) error {
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return catalog.NotFound("Document")
	case errors.Is(err, ports.ErrTooLarge):
		return catalog.Invalid("The document exceeds the size limit.")
	case errors.Is(err, ports.ErrOutsideJail):
		return catalog.Invalid("The path resolves outside the corpus.")
	case errors.Is(err, ports.ErrNotRegular):
		return catalog.Invalid("The path is not a document.")
	case errors.Is(err, ports.ErrExists):
		return catalog.Invalid("A document already exists at this path; set overwrite=true to replace it.")
	case errors.Is(err, ports.ErrQuota):
		return catalog.Refuse(catalog.KindValidation, "The corpus quota would be exceeded; the document was not written.")
	case errors.Is(err, ports.ErrNotDocument):
		return catalog.Invalid("The path does not name an allowed document type.")
	}
	return err
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// allowedExt reports whether the path's extension is a document type.
func (d Deps) allowedExt(rel string) bool {
	ext := strings.ToLower(path.Ext(rel))
	for _, e := range d.Settings.DocAllowedExtensions {
		if e == ext {
			return true
		}
	}
	return false
}
