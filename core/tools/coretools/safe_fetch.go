package coretools

import (
	"context"
	"errors"
	"mime"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

// SafeFetchMaxURLLength bounds the url argument, in characters.
const SafeFetchMaxURLLength = 2048

// fetchMethod is the only method safe_fetch sends.
const fetchMethod = "GET"

// fetchAccept announces the textual types safe_fetch returns.
const fetchAccept = "text/*, application/json, application/xml, application/*+json, application/*+xml;q=0.9"

// Caller-safe refusals of safe_fetch that do not come from the egress path.
const (
	msgFetchNotText  = "The response is not text; only textual content types are returned."
	msgFetchUTF7     = "The response's encoding is refused (UTF-7)."
	msgFetchEmptyURL = "Argument 'url' must not be empty."
	msgFetchFailed   = "The URL could not be fetched."
)

type safeFetchInput struct {
	URL string `json:"url" description:"Absolute http or https URL." maxLength:"$url"`
}

type safeFetchOutput struct {
	content.Framed
	Status      int    `json:"status" description:"HTTP status of the final response." minimum:"100" maximum:"599"`
	ContentType string `json:"content_type" description:"Media type of the response, without parameters."`
	FinalURL    string `json:"final_url" description:"URL of the last hop, after redirects."`
	Truncated   bool   `json:"truncated,omitempty" description:"Present and true when the text was cut to the size limit."`
}

// safeFetch defines safe_fetch: one public http(s) URL fetched through the
// SSRF-guarded egress path, its text sanitized and framed as untrusted data.
var safeFetch = catalog.Define[safeFetchInput, safeFetchOutput](catalog.ToolDef{
	Name:    "safe_fetch",
	Scope:   "tools:read",
	Ceiling: catalog.Ceiling{Var: "ARROWHEAD_SAFE_FETCH_PER_MINUTE", Default: 30},
	Description: "Fetch a public http(s) URL and return its status, content type and sanitized body text. " +
		"Private, loopback, link-local and metadata addresses are refused. Example: safe_fetch(url=\"https://example.com\")",
	Annotations: catalog.Annotations{Title: "Safe fetch", ReadOnly: true, OpenWorld: true},
	Bounds:      catalog.Bounds{"url": SafeFetchMaxURLLength},
})

func (f *server) fetch(ctx context.Context, _ catalog.Call, in safeFetchInput) (*catalog.Reply[safeFetchOutput], error) {
	if strings.TrimSpace(in.URL) == "" {
		return nil, catalog.Refuse(catalog.KindValidation, msgFetchEmptyURL)
	}
	maxBytes := f.config.FetchMaxResponseBytes
	// Built from scratch: no inbound header, cookie or credential is
	// carried, and Internal stays false for a caller's URL.
	resp, err := f.egress.Fetch(ctx, ports.FetchRequest{
		Method:       fetchMethod,
		URL:          in.URL,
		Headers:      map[string]string{"Accept": fetchAccept},
		MaxBytes:     int64(maxBytes),
		Timeout:      f.config.FetchTimeout,
		MaxRedirects: f.config.FetchMaxRedirects,
	})
	if err != nil {
		return nil, catalog.EgressRefusal(err, msgFetchFailed)
	}
	mediaType, ok := textualMediaType(resp.ContentType)
	if !ok {
		return nil, catalog.Refuse(catalog.KindValidation, msgFetchNotText)
	}
	text, err := content.SanitizeText(resp.Body)
	if err != nil {
		return nil, catalog.Refuse(catalog.KindValidation, msgFetchUTF7)
	}
	// Sanitizing can grow the text (each invalid byte becomes a three-byte
	// replacement character); hold it to the same cap.
	text, truncated := content.Truncate(text, maxBytes)
	framed := content.Frame(text, content.NewSource("url", resp.FinalURL, "text", resp.Body))
	return catalog.Answer(safeFetchOutput{
		Framed:      framed,
		Status:      resp.Status,
		ContentType: mediaType,
		FinalURL:    framed.Source.Identifier,
		Truncated:   truncated,
	}, framed.Text+content.CutNote(truncated, "ARROWHEAD_FETCH_MAX_RESPONSE_BYTES", int64(maxBytes))), nil
}

// textualMediaType returns the lower-case media type of a textual
// response: text/*, JSON, XML, or any +json / +xml structured suffix.
func textualMediaType(contentType string) (string, bool) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return "", false
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", mt == "application/xml",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		return mt, true
	}
	return "", false
}
