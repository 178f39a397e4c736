package docs

import (
	"context"
	"mime"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

// MaxRetrieveURLLength bounds doc_retrieve's URL argument.
const MaxRetrieveURLLength = 2048

// retrieveFormats maps the accepted content types to document formats.
var retrieveFormats = map[string]string{
	"application/json": content.FormatJSON,
	"text/json":        content.FormatJSON,
	"text/markdown":    content.FormatMarkdown,
	"text/x-markdown":  content.FormatMarkdown,
	"text/plain":       content.FormatText,
}

type docRetrieveInput struct {
	URL string `json:"url" description:"Public http or https URL." maxLength:"$url"`
}

type retrieveOutput struct {
	sanitizedDocument
	URL    string `json:"url" description:"The final URL after redirects."`
	Status int    `json:"status" description:"HTTP status." minimum:"100" maximum:"599"`
}

// docRetrieve defines doc_retrieve.
var docRetrieve = catalog.Define[docRetrieveInput, retrieveOutput](catalog.ToolDef{
	Name:        "doc_retrieve",
	Scope:       "docs:read",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_DOC_RETRIEVE_PER_MINUTE", Default: 30},
	Description: "Retrieve a JSON, Markdown or text document from a public URL, SSRF-guarded, size-capped and sanitized; returns untrusted framed content. Example: doc_retrieve(url=\"https://example.com/README.md\")",
	Annotations: catalog.Annotations{Title: "Retrieve document", ReadOnly: true, OpenWorld: true},
	Bounds:      catalog.Bounds{"url": MaxRetrieveURLLength},
})

// retrieve is doc_retrieve: the egress path, bounded and sanitized by the
// Config. It never reads the corpus.
func (c *corpus) retrieve(ctx context.Context, _ catalog.Call, in docRetrieveInput) (*catalog.Reply[retrieveOutput], error) {
	resp, err := c.egress.Fetch(ctx, ports.FetchRequest{
		Method:       "GET",
		URL:          in.URL,
		Headers:      map[string]string{"Accept": "application/json, text/markdown, text/plain;q=0.9"},
		MaxBytes:     int64(c.config.FetchMaxBytes),
		Timeout:      c.config.FetchTimeout,
		MaxRedirects: c.config.FetchMaxRedirects,
	})
	if err != nil {
		return nil, egressRefusal(err)
	}
	if resp.Status < 200 || resp.Status > 299 {
		return nil, catalog.Failed("The server answered with a non-success status; nothing was retrieved.")
	}
	mt, _, err := mime.ParseMediaType(resp.ContentType)
	format, ok := retrieveFormats[strings.ToLower(mt)]
	if err != nil || !ok {
		return nil, catalog.Invalid("Only JSON, Markdown and plain-text documents can be retrieved.")
	}
	framed, truncated, err := c.frame("url", resp.FinalURL, format, resp.Body)
	if err != nil {
		return nil, err
	}
	out := retrieveOutput{sanitizedDocument{framed, format, truncated}, framed.Source.Identifier, resp.Status}
	return catalog.Answer(out, framed.Text+c.cutNote(truncated)), nil
}

// egressRefusal maps the egress path's reasons: address and URL problems
// are the caller's (validation); the rest are failures of the fetch. The
// reasons never carry the URL.
func egressRefusal(err error) error {
	switch r := ports.EgressReasonOf(err); r {
	case "":
		return err
	case ports.EgressBadURL, ports.EgressScheme, ports.EgressCredentials, ports.EgressHostNotAllowed,
		ports.EgressPortNotAllowed, ports.EgressBlockedAddress, ports.EgressRedirectRefused:
		return catalog.Invalid("The URL is refused: %s.", string(r))
	default:
		return catalog.Failed("The document could not be retrieved: " + string(r) + ".")
	}
}
