package coretools

import (
	"context"
	"errors"
	"mime"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/settings"
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
	msgFetchNotText     = "The response is not text; only textual content types are returned."
	msgFetchUTF7        = "The response's encoding is refused (UTF-7)."
	msgFetchEmptyURL    = "Argument 'url' must not be empty."
	msgFetchUnavailable = "Outbound fetching is not configured."
	msgFetchFailed      = "The URL could not be fetched."
)

// SafeFetch declares safe_fetch: one public http(s) URL fetched through the
// SSRF-guarded egress path, its text sanitized and framed as untrusted data.
func SafeFetch(d Deps) catalog.ToolSpec {
	maxBytes := d.Settings.FetchMaxResponseBytes
	timeout := settings.Seconds(d.Settings.FetchTimeoutSeconds)
	maxRedirects := d.Settings.FetchMaxRedirects
	props := content.FrameProperties()
	props["status"] = catalog.Integer("HTTP status of the final response.", 100, 599)
	props["content_type"] = catalog.String("Media type of the response, without parameters.", 0)
	props["final_url"] = catalog.String("URL of the last hop, after redirects.", 0)
	props["truncated"] = catalog.Boolean("Present and true when the text was cut to the size limit.")
	return catalog.MustTool(catalog.ToolDef{
		Name:    "safe_fetch",
		Family:  catalog.FamilyCore,
		Scope:   "tools:read",
		Ceiling: catalog.Ceiling{Var: "ARROWHEAD_SAFE_FETCH_PER_MINUTE", Default: 30},
		Description: "Fetch a public http(s) URL and return its status, content type and sanitized body text. " +
			"Private, loopback, link-local and metadata addresses are refused. Example: safe_fetch(url=\"https://example.com\")",
		Input: catalog.Object(map[string]*catalog.Schema{
			"url": catalog.String("Absolute http or https URL.", SafeFetchMaxURLLength),
		}, "url"),
		Output: catalog.Object(props,
			"status", "content_type", "final_url", "content", "marker", "source", "untrusted"),
		Annotations: catalog.Annotations{Title: "Safe fetch", ReadOnly: true, OpenWorld: true},
		Handler: func(ctx context.Context, call catalog.Call) (catalog.Result, error) {
			var args struct {
				URL string `json:"url"`
			}
			if err := call.Bind(&args); err != nil {
				return catalog.Result{}, err
			}
			if strings.TrimSpace(args.URL) == "" {
				return catalog.Result{}, catalog.Refuse(catalog.KindValidation, msgFetchEmptyURL)
			}
			if d.Egress == nil {
				return catalog.Result{}, catalog.Unavailable(msgFetchUnavailable)
			}
			// Built from scratch: no inbound header, cookie or credential is
			// carried, and Internal stays false for a caller's URL.
			resp, err := d.Egress.Fetch(ctx, ports.FetchRequest{
				Method:       fetchMethod,
				URL:          args.URL,
				Headers:      map[string]string{"Accept": fetchAccept},
				MaxBytes:     int64(maxBytes),
				Timeout:      timeout,
				MaxRedirects: maxRedirects,
			})
			if err != nil {
				return catalog.Result{}, fetchRefusal(err)
			}
			mediaType, ok := textualMediaType(resp.ContentType)
			if !ok {
				return catalog.Result{}, catalog.Refuse(catalog.KindValidation, msgFetchNotText)
			}
			text, err := content.SanitizeText(resp.Body)
			if err != nil {
				return catalog.Result{}, catalog.Refuse(catalog.KindValidation, msgFetchUTF7)
			}
			// Sanitizing can grow the text (each invalid byte becomes a
			// three-byte replacement character); hold it to the same cap.
			text, truncated := content.Truncate(text, maxBytes)
			framed := content.Frame(text, content.NewSource("url", resp.FinalURL, "text", resp.Body))
			out := framed.Structured()
			out["status"] = resp.Status
			out["content_type"] = mediaType
			out["final_url"] = framed.Source.Identifier
			if truncated {
				out["truncated"] = true
			}
			return catalog.Result{Structured: out, Text: framed.Text}, nil
		},
	})
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

// fetchRefusal maps an egress refusal to a caller-safe ToolError. The
// reasons are fixed texts that never carry the URL, host or address; the
// egress error stays attached as the operators' cause.
func fetchRefusal(err error) error {
	reason := ports.EgressReasonOf(err)
	switch reason {
	case ports.EgressBadURL, ports.EgressScheme, ports.EgressCredentials,
		ports.EgressHostNotAllowed, ports.EgressPortNotAllowed, ports.EgressBlockedAddress:
		return catalog.Refuse(catalog.KindValidation, sentence(reason)).WithCause(err)
	case ports.EgressResolve, ports.EgressConnect, ports.EgressTimeout, ports.EgressTooLarge,
		ports.EgressProtocol, ports.EgressTooManyRedirect, ports.EgressRedirectRefused:
		return catalog.Failed(sentence(reason)).WithCause(err)
	}
	return catalog.Failed(msgFetchFailed).WithCause(err)
}

// sentence renders a reason as a message: capitalised, with a full stop.
func sentence(r ports.EgressReason) string {
	s := string(r)
	return strings.ToUpper(s[:1]) + s[1:] + "."
}
