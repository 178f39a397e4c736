package docs

import (
	"context"
	"mime"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// MaxRetrieveURLLength bounds doc_retrieve's URL argument.
const MaxRetrieveURLLength = 2048

// retrieveFormats maps the accepted content types to document formats.
var retrieveFormats = map[string]string{
	"application/json": formatJSON,
	"text/json":        formatJSON,
	"text/markdown":    formatMarkdown,
	"text/x-markdown":  formatMarkdown,
	"text/plain":       formatText,
}

// DocRetrieve declares doc_retrieve.
func DocRetrieve(d Deps) catalog.ToolSpec {
	props := readOutput().Properties
	props["url"] = catalog.String("The final URL after redirects.", 0)
	props["status"] = catalog.Integer("HTTP status.", 100, 599)
	delete(props, "path")
	return catalog.MustTool(catalog.ToolDef{
		Name:        "doc_retrieve",
		Family:      catalog.FamilyDocs,
		Scope:       "docs:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_DOC_RETRIEVE_PER_MINUTE", Default: 30},
		Description: "Retrieve a JSON, Markdown or text document from a public URL, SSRF-guarded, size-capped and sanitized; returns untrusted framed content. Example: doc_retrieve(url=\"https://example.com/README.md\")",
		Input: catalog.Object(map[string]*catalog.Schema{
			"url": catalog.String("Public http or https URL.", MaxRetrieveURLLength),
		}, "url"),
		Output:      catalog.Object(props, "url", "status", "content_type", "truncated", "content", "marker", "source", "untrusted"),
		Annotations: catalog.Annotations{Title: "Retrieve document", ReadOnly: true, OpenWorld: true},
		Handler: func(ctx context.Context, call catalog.Call) (catalog.Result, error) {
			var args struct {
				URL string `json:"url"`
			}
			if err := call.Bind(&args); err != nil {
				return catalog.Result{}, err
			}
			if d.Egress == nil {
				return catalog.Result{}, catalog.Unavailable("Outbound fetching is not configured.")
			}
			s := d.Settings
			resp, err := d.Egress.Fetch(ctx, ports.FetchRequest{
				Method:       "GET",
				URL:          args.URL,
				Headers:      map[string]string{"Accept": "application/json, text/markdown, text/plain;q=0.9"},
				MaxBytes:     int64(s.FetchMaxResponseBytes),
				Timeout:      settings.Seconds(s.FetchTimeoutSeconds),
				MaxRedirects: s.FetchMaxRedirects,
			})
			if err != nil {
				return catalog.Result{}, egressRefusal(err)
			}
			if resp.Status < 200 || resp.Status > 299 {
				return catalog.Result{}, catalog.Failed("The server answered with a non-success status; nothing was retrieved.")
			}
			mt, _, err := mime.ParseMediaType(resp.ContentType)
			format, ok := retrieveFormats[strings.ToLower(mt)]
			if err != nil || !ok {
				return catalog.Result{}, catalog.Invalid("Only JSON, Markdown and plain-text documents can be retrieved.")
			}
			framed, truncated, err := d.frame("url", resp.FinalURL, format, resp.Body)
			if err != nil {
				return catalog.Result{}, err
			}
			out := framed.Structured()
			out["url"] = framed.Source.Identifier
			out["status"] = resp.Status
			out["content_type"] = format
			out["truncated"] = truncated
			return catalog.Result{Structured: out, Text: framed.Text}, nil
		},
	})
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
