package content

import (
	"path"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/settings"
)

// SanitizeDocument sanitizes a corpus document for the format its path
// names: .json with SanitizeJSON under lim, .md and .markdown with
// SanitizeMarkdown, anything else with SanitizeText. It is the text
// doc_index chunks, so pack_context finds a retrieved chunk again in the
// document's current text by running the same function.
func SanitizeDocument(p string, raw []byte, lim JSONLimits) (string, error) {
	return SanitizeAs(DocumentFormat(p), raw, lim)
}

// Document formats: the content_type a frame of the document states.
const (
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
	FormatText     = "text"
)

// DocumentFormat is the format a corpus document's path names: json for
// .json, markdown for .md and .markdown, text otherwise. Every tool that
// shows a document (doc_read, doc_search, pack_context) sanitizes it as
// this format and says so in its frame.
func DocumentFormat(p string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".json":
		return FormatJSON
	case ".md", ".markdown":
		return FormatMarkdown
	}
	return FormatText
}

// SanitizeAs sanitizes raw as format (FormatJSON under lim, FormatMarkdown,
// anything else as text).
func SanitizeAs(format string, raw []byte, lim JSONLimits) (string, error) {
	switch format {
	case FormatJSON:
		return SanitizeJSON(raw, lim)
	case FormatMarkdown:
		return SanitizeMarkdown(raw)
	}
	return SanitizeText(raw)
}

// DocumentJSONLimits are the JSON bounds SanitizeDocument runs under for
// a corpus document: ARROWHEAD_DOC_MAX_BYTES, ARROWHEAD_JSON_MAX_DEPTH and
// ARROWHEAD_JSON_MAX_ELEMENTS, the one place doc_index and pack_context
// take them from the settings.
func DocumentJSONLimits(s *settings.Settings) JSONLimits {
	return JSONLimits{MaxBytes: s.DocMaxBytes, MaxDepth: s.JSONMaxDepth, MaxElements: s.JSONMaxElements}
}
