package search

import (
	"time"

	"github.com/arrowhead-go/arrowhead/core/settings"
)

// DocLimits are doc_search's caps: the ARROWHEAD_SEARCH_* bounds over the
// corpus, each document read within ARROWHEAD_DOC_MAX_BYTES.
func DocLimits(s *settings.Settings) Limits {
	return Limits{
		MaxFiles:        s.SearchMaxFiles,
		MaxResults:      s.SearchMaxResults,
		MaxTotalBytes:   int64(s.SearchMaxTotalBytes),
		SnippetMaxChars: s.SearchSnippetMaxChars,
		MaxFileBytes:    int64(s.DocMaxBytes),
		Deadline:        time.Duration(s.SearchRegexTimeoutMS) * time.Millisecond,
	}
}

// DocVars name doc_search's caps.
var DocVars = Vars{
	Files:      "ARROWHEAD_SEARCH_MAX_FILES",
	FileBytes:  "ARROWHEAD_DOC_MAX_BYTES",
	TotalBytes: "ARROWHEAD_SEARCH_MAX_TOTAL_BYTES",
	Results:    "ARROWHEAD_SEARCH_MAX_RESULTS",
	Deadline:   "ARROWHEAD_SEARCH_REGEX_TIMEOUT_MS",
}

// RepoLimits are code_search's caps, sized for real repositories: the
// repository's own file, per-file and total byte caps, the shared result
// and snippet caps, and a wall-clock budget (the regex timeout for a
// pattern, which the deployment opted into with that bound).
func RepoLimits(s *settings.Settings, regex bool) Limits {
	deadline := time.Duration(s.RepoSearchTimeoutMS) * time.Millisecond
	if regex {
		deadline = time.Duration(s.SearchRegexTimeoutMS) * time.Millisecond
	}
	return Limits{
		MaxFiles:        s.RepoSearchMaxFiles,
		MaxFileBytes:    int64(s.RepoMaxFileBytes),
		MaxTotalBytes:   int64(s.RepoSearchMaxTotalBytes),
		MaxResults:      s.SearchMaxResults,
		SnippetMaxChars: s.SearchSnippetMaxChars,
		Deadline:        deadline,
	}
}

// RepoVars name code_search's caps; the deadline variable depends on
// whether the query is a pattern.
func RepoVars(regex bool) Vars {
	v := Vars{
		Files:      "ARROWHEAD_REPO_SEARCH_MAX_FILES",
		FileBytes:  "ARROWHEAD_REPO_MAX_FILE_BYTES",
		TotalBytes: "ARROWHEAD_REPO_SEARCH_MAX_TOTAL_BYTES",
		Results:    "ARROWHEAD_SEARCH_MAX_RESULTS",
		Deadline:   "ARROWHEAD_REPO_SEARCH_TIMEOUT_MS",
	}
	if regex {
		v.Deadline = "ARROWHEAD_SEARCH_REGEX_TIMEOUT_MS"
	}
	return v
}

// RegexDisabled is the refusal of a pattern query on a deployment that
// has not enabled them; it names the variable that does.
const RegexDisabled = "Regex search is disabled on this server (ARROWHEAD_SEARCH_REGEX_ENABLED=false); search literally instead, or ask the operator to enable it."
