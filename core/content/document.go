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
	switch strings.ToLower(path.Ext(p)) {
	case ".json":
		return SanitizeJSON(raw, lim)
	case ".md", ".markdown":
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
