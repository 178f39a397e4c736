// Package docs is the document suite: doc_search, doc_read, doc_retrieve,
// doc_scan and doc_write over a jailed corpus of JSON, Markdown and text,
// plus the doc:// resources, the docs://index resource, the audit_corpus and
// summarize_document prompts and their completions. Everything read is
// sanitized for its format and framed as untrusted data; every document
// touched is authorized per resource (default deny) after the scope check.
package docs

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/attach"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Ports are what the document suite uses.
type Ports struct {
	// Store is the jailed corpus.
	Store ports.DocumentStore
	// Egress performs doc_retrieve's SSRF-guarded fetch.
	Egress ports.Egress
	// Authorizer is the per-resource gate (the same one the App uses).
	Authorizer ports.Authorizer
	// Scanner finds and redacts secrets; one per process.
	Scanner *security.Scanner
}

// Config is what the document suite reads from the settings.
type Config struct {
	// QueryMaxChars is ARROWHEAD_SEARCH_QUERY_MAX_LENGTH, doc_search's
	// "$query" bound.
	QueryMaxChars int `setting:"ARROWHEAD_SEARCH_QUERY_MAX_LENGTH"`
	// RegexEnabled is ARROWHEAD_SEARCH_REGEX_ENABLED.
	RegexEnabled bool `setting:"ARROWHEAD_SEARCH_REGEX_ENABLED"`
	// Search are doc_search's caps.
	Search search.Limits
	// ListMaxFiles is ARROWHEAD_SEARCH_MAX_FILES: what docs://index and
	// the path completions list.
	ListMaxFiles int `setting:"ARROWHEAD_SEARCH_MAX_FILES"`
	// MaxBytes is ARROWHEAD_DOC_MAX_BYTES, the largest document read.
	MaxBytes int `setting:"ARROWHEAD_DOC_MAX_BYTES"`
	// ContentMaxBytes caps the content a result shows.
	ContentMaxBytes int `setting:"ARROWHEAD_CONTENT_MAX_BYTES"`
	// ReadJSON bounds a JSON document read or retrieved, WriteJSON one
	// written.
	ReadJSON, WriteJSON content.JSONLimits
	// RedactReads is ARROWHEAD_REDACT_READS.
	RedactReads bool `setting:"ARROWHEAD_REDACT_READS"`
	// Extensions are the document types doc_write accepts
	// (ARROWHEAD_DOC_ALLOWED_EXTENSIONS).
	Extensions []string `setting:"ARROWHEAD_DOC_ALLOWED_EXTENSIONS"`
	// WriteMaxBytes is ARROWHEAD_DOC_WRITE_MAX_BYTES.
	WriteMaxBytes int `setting:"ARROWHEAD_DOC_WRITE_MAX_BYTES"`
	// ConfirmOverwrite is ARROWHEAD_REQUIRE_WRITE_CONFIRMATION.
	ConfirmOverwrite bool `setting:"ARROWHEAD_REQUIRE_WRITE_CONFIRMATION"`
	// FetchMaxBytes, FetchTimeout and FetchMaxRedirects bound doc_retrieve.
	FetchMaxBytes     int           `setting:"ARROWHEAD_FETCH_MAX_RESPONSE_BYTES"`
	FetchTimeout      time.Duration `setting:"ARROWHEAD_FETCH_TIMEOUT_SECONDS"`
	FetchMaxRedirects int           `setting:"ARROWHEAD_FETCH_MAX_REDIRECTS"`
	// ScanMaxFiles, ScanMaxFindings, ScanFileMaxBytes and ScanTimeout
	// bound a scan.
	ScanMaxFiles     int           `setting:"ARROWHEAD_SCAN_MAX_FILES"`
	ScanMaxFindings  int           `setting:"ARROWHEAD_SCAN_MAX_FINDINGS"`
	ScanFileMaxBytes int           `setting:"ARROWHEAD_SCAN_PER_FILE_MAX_BYTES"`
	ScanTimeout      time.Duration `setting:"ARROWHEAD_SCAN_TIMEOUT_SECONDS"`
}

// Family is the document suite.
var Family = core.Family[Config, Ports, *corpus]{
	ID: catalog.FamilyDocs,
	Configure: func(s *settings.Settings, c *Config) {
		c.Search = search.DocLimits(s)
		c.ReadJSON = content.JSONLimits{
			MaxBytes: max(s.ContentMaxBytes, s.DocMaxBytes), MaxDepth: s.JSONMaxDepth, MaxElements: s.JSONMaxElements,
		}
		c.WriteJSON = content.JSONLimits{
			MaxBytes: s.DocWriteMaxBytes, MaxDepth: s.JSONMaxDepth, MaxElements: s.JSONMaxElements,
		}
	},
	Bounds: bounds,
	Serve:  newCorpus,
	Tools: []core.FamilyTool[*corpus]{
		core.Tool(docSearch, (*corpus).search),
		core.Tool(docRead, (*corpus).readTool),
		core.Tool(docRetrieve, (*corpus).retrieve),
		core.Tool(docScan, (*corpus).scanTool),
		core.Tool(docWrite, (*corpus).write),
	},
	Resources: []core.FamilyResource[*corpus]{
		core.Resource(documentTemplate, (*corpus).readResource, (*corpus).completeDocument),
		core.Resource(indexResource, (*corpus).index, nil),
	},
	Prompts: []core.FamilyPrompt[*corpus]{
		core.Prompt(auditCorpus, (*corpus).auditCorpus, (*corpus).completePrefix),
		core.Prompt(summarizeDocument, (*corpus).summarizeDocument, (*corpus).completeDocument),
	},
}

// bounds are the schema bounds the operator sets: doc_search's query and
// doc_write's content and attachment.
func bounds(c Config) catalog.Bounds {
	b := attach.Bounds(c.WriteMaxBytes)
	b["query"] = c.QueryMaxChars
	b["content"] = c.WriteMaxBytes
	return b
}

// corpus is the jailed corpus as its tools see it: the store and the
// per-resource gate every document passes, the secret scanner, and
// doc_retrieve's egress path (which never sees the corpus).
type corpus struct {
	config     Config
	store      ports.DocumentStore
	authorizer ports.Authorizer
	scanner    *security.Scanner
	egress     ports.Egress
	// confirmSeal seals doc_write's overwrite confirmation state.
	confirmSeal catalog.InputSeal
}

func newCorpus(c Config, p Ports) *corpus {
	return &corpus{config: c, store: p.Store, authorizer: p.Authorizer, scanner: p.Scanner, egress: p.Egress,
		confirmSeal: catalog.NewInputSeal(confirmTTL)}
}

// redactor is the secret scanner's line-keeping redaction of a file the
// search matched (see search.Request.Redact), or nil without a scanner or
// with ARROWHEAD_REDACT_READS=false: nothing is redacted, and the answer
// says nothing of secrets.
func (c *corpus) redactor() func(string) string {
	if c.scanner == nil || !c.config.RedactReads {
		return nil
	}
	return c.scanner.RedactLines
}

// mimeOf is the MIME type served for a format.
func mimeOf(format string) string {
	switch format {
	case content.FormatJSON:
		return "application/json"
	case content.FormatMarkdown:
		return "text/markdown"
	}
	return "text/plain"
}

// frame sanitizes raw, caps it at ARROWHEAD_CONTENT_MAX_BYTES and wraps it
// in provenance. Markdown and text are redacted before they are sanitized
// (unless ARROWHEAD_REDACT_READS=false): the Markdown sanitizer escapes what
// a renderer could link, and an escaped DSN or URL no longer looks like
// one to the scanner that runs on every result after it. JSON keeps its
// shape through its sanitizer and is redacted on the way out.
func (c *corpus) frame(kind, identifier, format string, raw []byte) (content.Framed, bool, error) {
	src := raw
	if redact := c.redactor(); redact != nil && format != content.FormatJSON {
		src = []byte(redact(string(raw)))
	}
	text, err := content.SanitizeAs(format, src, c.config.ReadJSON)
	if err != nil {
		return content.Framed{}, false, documentRefusal(err)
	}
	text, truncated := content.Truncate(text, c.config.ContentMaxBytes)
	return content.Frame(text, content.NewSource(kind, identifier, format, raw)), truncated, nil
}

// documentRefusal names what a sanitizer refused in a document.
func documentRefusal(err error) error {
	for _, s := range []error{content.ErrJSONTooLarge, content.ErrJSONTooDeep, content.ErrJSONTooManyElements,
		content.ErrJSONDuplicateKey, content.ErrJSONNonFinite, content.ErrJSONSyntax, content.ErrJSONTrailingData} {
		if errors.Is(err, s) {
			return catalog.Invalid("The document is refused: %s.", s.Error())
		}
	}
	if errors.Is(err, content.ErrUTF7) {
		return catalog.Invalid("The document is refused: UTF-7 encoded text is not accepted.")
	}
	return err
}

// authorize runs the per-resource check for a document.
func (c *corpus) authorize(ctx context.Context, p ports.Principal, action ports.Action, rel string) error {
	if !c.authorizer.Authorize(ctx, p, action, ports.Resource{Kind: ports.KindDocument, ID: rel}).Allowed {
		return catalog.Denied()
	}
	return nil
}

// allowFunc adapts the authorizer for per-document filtering.
func (c *corpus) allowFunc(p ports.Principal, action ports.Action) func(ctx context.Context, rel string) (bool, error) {
	return func(ctx context.Context, rel string) (bool, error) {
		return c.authorizer.Authorize(ctx, p, action, ports.Resource{Kind: ports.KindDocument, ID: rel}).Allowed, nil
	}
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
		return catalog.Invalid("The path does not name an allowed document type (ARROWHEAD_DOC_ALLOWED_EXTENSIONS, which the operator can extend).")
	}
	return err
}

// allowedExt reports whether the path's extension is a document type.
func allowedExt(c Config, rel string) bool {
	return slices.Contains(c.Extensions, strings.ToLower(path.Ext(rel)))
}
