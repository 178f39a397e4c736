package search

import (
	"time"

	"github.com/arrowhead-go/arrowhead/core/settings"
)

// LimitsFromSettings are the ARROWHEAD_SEARCH_* bounds of one Run over at
// most maxFiles files: the one place doc_search, code_search and
// pack_context turn the settings into Limits (each has its own file cap).
func LimitsFromSettings(s *settings.Settings, maxFiles int) Limits {
	return Limits{
		MaxFiles:        maxFiles,
		MaxResults:      s.SearchMaxResults,
		MaxTotalBytes:   int64(s.SearchMaxTotalBytes),
		SnippetMaxChars: s.SearchSnippetMaxChars,
		Deadline:        time.Duration(s.SearchRegexTimeoutMS) * time.Millisecond,
	}
}
