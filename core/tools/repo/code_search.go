package repo

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

type codeSearchInput struct {
	Query      string `json:"query" description:"Text to find (a pattern with use_regex)." maxLength:"$query"`
	PathPrefix string `json:"path_prefix,omitempty" description:"Only files under this prefix." maxLength:"$path"`
	UseRegex   bool   `json:"use_regex,omitempty" description:"Treat query as an RE2 regular expression."`
}

type codeMatch struct {
	Path    string `json:"path" description:"File path."`
	Line    int    `json:"line" description:"1-based line." minimum:"1" maximum:"2147483648"`
	Column  int    `json:"column" description:"1-based column, in characters." minimum:"1" maximum:"2147483648"`
	Snippet string `json:"snippet" description:"The sanitized matching line, cut around the match."`
}

type codeSearchOutput struct {
	Matches       []codeMatch `json:"matches" description:"Matching lines."`
	FilesScanned  int         `json:"files_scanned" description:"Files searched." minimum:"0" maximum:"2147483648"`
	BytesScanned  int64       `json:"bytes_scanned" description:"Bytes searched." minimum:"0" maximum:"9007199254740992"`
	Truncated     []string    `json:"truncated" description:"Bounds that cut the search short."`
	FilesExcluded int         `json:"files_excluded" description:"Listed files not searched (not authorized, binary or unreadable)." minimum:"0" maximum:"2147483648"`
	Regex         bool        `json:"regex" description:"Whether the query ran as a pattern."`
	Marker        string      `json:"marker" description:"The untrusted-data marker framing the text answer."`
	Untrusted     bool        `json:"untrusted" description:"Always true."`
}

// codeSearch defines code_search.
func codeSearch(s *settings.Settings) catalog.Tool[codeSearchInput, codeSearchOutput] {
	return catalog.Define[codeSearchInput, codeSearchOutput](catalog.ToolDef{
		Name:        "code_search",
		Family:      catalog.FamilyRepo,
		Scope:       "repo:search",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CODE_SEARCH_PER_MINUTE", Default: 60},
		Description: "Search repository files for a query and return bounded, sanitized snippets with line numbers. Literal by default; use_regex when the deployment enables it. Example: code_search(query=\"TODO\", path_prefix=\"src/\")",
		Annotations: catalog.Annotations{Title: "Search code", ReadOnly: true, Idempotent: true},
		Bounds:      catalog.Bounds{"query": s.SearchQueryMaxLength, "path": security.MaxPathBytes},
	})
}

// search runs the shared search runner (the same matcher, rules and caps
// as doc_search) over the repository's listed files, each authorized for
// search as it is read.
func (t *tree) search(ctx context.Context, call catalog.Call, in codeSearchInput) (*catalog.Reply[codeSearchOutput], error) {
	s := t.settings
	if in.UseRegex && !s.SearchRegexEnabled {
		return nil, catalog.Invalid("Regex search is disabled on this server; search literally instead.")
	}
	m, err := search.NewMatcher(in.Query, in.UseRegex, search.MatcherOptions{MaxQueryChars: s.SearchQueryMaxLength})
	if err != nil {
		return nil, catalog.Invalid("%s", catalog.Sentence(err.Error()))
	}
	prefix, err := catalog.CleanPrefix(in.PathPrefix)
	if err != nil {
		return nil, err
	}
	listed, listTruncated, err := t.listed(ctx, prefix)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(listed))
	for i, f := range listed {
		paths[i] = f.Path
	}
	src := search.NewStoreSource(t.store, paths, t.allowFunc(call.Principal, ports.ActionSearch),
		search.StoreSourceOptions{MaxBytes: int64(s.RepoMaxFileBytes)})
	defer src.Close()
	res, err := search.Run(ctx, src, m, search.LimitsFromSettings(s, s.RepoSearchMaxFiles))
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, storeRefusal(err)
	}
	out := codeSearchOutput{
		Matches:       make([]codeMatch, 0, len(res.Matches)),
		FilesScanned:  res.FilesScanned,
		BytesScanned:  res.BytesScanned,
		Truncated:     res.Truncations(listTruncated),
		FilesExcluded: src.Skipped(),
		Regex:         in.UseRegex,
		Untrusted:     true,
	}
	var text strings.Builder
	for _, hit := range res.Matches {
		path := oneLine(content.SanitizeString(hit.Path))
		snippet := oneLine(content.SanitizeString(hit.Snippet))
		out.Matches = append(out.Matches, codeMatch{Path: path, Line: hit.Line, Column: hit.Column, Snippet: snippet})
		text.WriteString(path + ":" + strconv.Itoa(hit.Line) + ":" + strconv.Itoa(hit.Column) + ": " + snippet + "\n")
	}
	if len(out.Matches) == 0 {
		text.WriteString("No matches.\n")
	}
	framed := content.Frame(text.String(), content.NewSource("search", "repository", "text", []byte(text.String())))
	out.Marker = framed.Marker
	return catalog.Answer(out, framed.Text), nil
}
