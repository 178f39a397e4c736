package docs

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

type docSearchInput struct {
	Query      string `json:"query" description:"Text to find (a pattern with use_regex)." maxLength:"$query"`
	PathPrefix string `json:"path_prefix,omitempty" description:"Only documents under this prefix." maxLength:"$path"`
	UseRegex   bool   `json:"use_regex,omitempty" description:"Treat query as an RE2 regular expression."`
}

type searchMatch struct {
	Path    string `json:"path" description:"Document path."`
	Line    int    `json:"line" description:"1-based line." minimum:"1" maximum:"2147483648"`
	Column  int    `json:"column" description:"1-based column, in characters." minimum:"1" maximum:"2147483648"`
	Snippet string `json:"snippet" description:"The sanitized matching line, cut around the match."`
}

type docSearchOutput struct {
	Matches       []searchMatch `json:"matches" description:"Matching lines."`
	FilesScanned  int           `json:"files_scanned" description:"Documents searched." minimum:"0" maximum:"2147483648"`
	BytesScanned  int64         `json:"bytes_scanned" description:"Bytes searched." minimum:"0" maximum:"9007199254740992"`
	Truncated     []string      `json:"truncated" description:"Bounds that cut the search short."`
	Marker        string        `json:"marker" description:"The untrusted-data marker framing the text answer."`
	Untrusted     bool          `json:"untrusted" description:"Always true."`
	Regex         bool          `json:"regex" description:"Whether the query ran as a pattern."`
	FilesExcluded int           `json:"files_excluded" description:"Listed documents not searched (not authorized or unreadable)." minimum:"0" maximum:"2147483648"`
}

// docSearch defines doc_search.
func docSearch(s *settings.Settings) catalog.Tool[docSearchInput, docSearchOutput] {
	return catalog.Define[docSearchInput, docSearchOutput](catalog.ToolDef{
		Name:        "doc_search",
		Family:      catalog.FamilyDocs,
		Scope:       "docs:search",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_DOC_SEARCH_PER_MINUTE", Default: 60},
		Description: "Search corpus documents for a query and return bounded, sanitized snippets. Literal by default; use_regex when the deployment enables it. Example: doc_search(query=\"deadline\", path_prefix=\"notes/\")",
		Annotations: catalog.Annotations{Title: "Search documents", ReadOnly: true, Idempotent: true},
		Bounds:      catalog.Bounds{"query": s.SearchQueryMaxLength, "path": security.MaxPathBytes},
	})
}

func (c *corpus) search(ctx context.Context, call catalog.Call, in docSearchInput) (*catalog.Reply[docSearchOutput], error) {
	s := c.settings
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
	listed, listTruncated, err := c.store.List(ctx, prefix, s.SearchMaxFiles)
	if err != nil {
		return nil, storeRefusal(err)
	}
	paths := make([]string, len(listed))
	for i, f := range listed {
		paths[i] = f.Path
	}
	src := search.NewStoreSource(c.store, paths, c.allowFunc(call.Principal, ports.ActionSearch),
		search.StoreSourceOptions{MaxBytes: int64(s.DocMaxBytes)})
	defer src.Close()
	res, err := search.Run(ctx, src, m, search.LimitsFromSettings(s, s.SearchMaxFiles))
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, storeRefusal(err)
	}
	return searchResult(res, src.Skipped(), listTruncated, in.UseRegex), nil
}

// searchResult sanitizes every snippet and frames the text answer once.
func searchResult(res search.Result, excluded int, listTruncated, regex bool) *catalog.Reply[docSearchOutput] {
	out := docSearchOutput{
		Matches:       make([]searchMatch, 0, len(res.Matches)),
		FilesScanned:  res.FilesScanned,
		BytesScanned:  res.BytesScanned,
		Untrusted:     true,
		Regex:         regex,
		FilesExcluded: excluded,
	}
	var text strings.Builder
	for _, m := range res.Matches {
		snippet := content.SanitizeString(m.Snippet)
		path := content.SanitizeString(m.Path)
		snippet = strings.ReplaceAll(snippet, "\n", " ")
		out.Matches = append(out.Matches, searchMatch{Path: path, Line: m.Line, Column: m.Column, Snippet: snippet})
		text.WriteString(path)
		text.WriteString(":")
		text.WriteString(strconv.Itoa(m.Line))
		text.WriteString(":")
		text.WriteString(strconv.Itoa(m.Column))
		text.WriteString(": ")
		text.WriteString(snippet)
		text.WriteString("\n")
	}
	if res.ResultsTruncated {
		out.Truncated = append(out.Truncated, "results")
	}
	if res.FilesTruncated || listTruncated {
		out.Truncated = append(out.Truncated, "files")
	}
	if res.BytesTruncated {
		out.Truncated = append(out.Truncated, "bytes")
	}
	if res.DeadlineExceeded {
		out.Truncated = append(out.Truncated, "deadline")
	}
	if len(out.Matches) == 0 {
		text.WriteString("No matches.\n")
	}
	framed := content.Frame(text.String(), content.NewSource("search", "corpus", "text", []byte(text.String())))
	out.Marker = framed.Marker
	return catalog.Answer(out, framed.Text)
}
