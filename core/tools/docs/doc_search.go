package docs

import (
	"context"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/ports"
)

type docSearchInput struct {
	Query      string `json:"query" description:"Text to find (a pattern with use_regex)." maxLength:"$query"`
	PathPrefix string `json:"path_prefix,omitempty" description:"Only documents under this prefix." maxLength:"$path"`
	UseRegex   bool   `json:"use_regex,omitempty" description:"Treat query as an RE2 regular expression."`
}

type searchMatch struct {
	Path    string `json:"path" description:"Document path."`
	Line    int    `json:"line" description:"1-based line." minimum:"1" maximum:"$count"`
	Column  int    `json:"column" description:"1-based column, in characters." minimum:"1" maximum:"$count"`
	Snippet string `json:"snippet" description:"The sanitized matching line, cut around the match."`
}

type docSearchOutput struct {
	Matches       []searchMatch `json:"matches" description:"Matching lines, in path then line order: the first ARROWHEAD_SEARCH_MAX_RESULTS of them."`
	FilesScanned  int           `json:"files_scanned" description:"Documents searched." minimum:"0" maximum:"$count"`
	FilesListed   int           `json:"files_listed" description:"Documents under the prefix, counted past the file cap (a lower bound when the walk stopped first)." minimum:"0" maximum:"$count"`
	BytesScanned  int64         `json:"bytes_scanned" description:"Bytes searched." minimum:"0" maximum:"9007199254740992"`
	Complete      bool          `json:"complete" description:"True when every admitted document was searched to its end; false when a bound in truncated cut the search short."`
	Truncated     []string      `json:"truncated" description:"Bounds that cut the search short: results, files, bytes, deadline."`
	Marker        string        `json:"marker" description:"The untrusted-data marker framing the matches in the text answer."`
	Untrusted     bool          `json:"untrusted" description:"Always true."`
	Regex         bool          `json:"regex" description:"Whether the query ran as a pattern."`
	FilesExcluded int           `json:"files_excluded" description:"Listed documents not searched (not authorized, over the size limit or unreadable)." minimum:"0" maximum:"$count"`

	// SecretsRedacted says in the structure what the text's last
	// sentence says (search.SecretsNote).
	SecretsRedacted bool `json:"secrets_redacted" description:"True when secret values were redacted before matching: text inside a secret is never found, so grep on the raw documents may find more lines. Set for every such search, whether or not it met a secret."`
}

// docSearch defines doc_search; "$query" is the family's
// ARROWHEAD_SEARCH_QUERY_MAX_LENGTH bound.
var docSearch = catalog.Define[docSearchInput, docSearchOutput](catalog.ToolDef{
	Name:        "doc_search",
	Scope:       "docs:search",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_DOC_SEARCH_PER_MINUTE", Default: 60},
	Description: "Search corpus documents for a query and return the first matches in path and line order as bounded, sanitized snippets. Literal by default; use_regex when the deployment enables it. The answer says whether every document was searched and, when a cap stopped it, how far it got. Example: doc_search(query=\"deadline\", path_prefix=\"notes/\")",
	Annotations: catalog.Annotations{Title: "Search documents", ReadOnly: true, Idempotent: true},
})

// search runs the shared search pipeline over the corpus under the
// ARROWHEAD_SEARCH_* caps, each document authorized for search as it is
// read.
func (c *corpus) search(ctx context.Context, call catalog.Call, in docSearchInput) (*catalog.Reply[docSearchOutput], error) {
	if in.UseRegex && !c.config.RegexEnabled {
		return nil, catalog.Invalid("%s", search.RegexDisabled)
	}
	m, err := search.NewMatcher(in.Query, in.UseRegex, search.MatcherOptions{MaxQueryChars: c.config.QueryMaxChars})
	if err != nil {
		return nil, catalog.Invalid("%s", catalog.Sentence(err.Error()))
	}
	prefix, err := catalog.CleanPrefix(in.PathPrefix)
	if err != nil {
		return nil, err
	}
	rep, err := search.Search(ctx, search.Request{
		Store:   c.store,
		Prefix:  prefix,
		Allow:   c.allowFunc(call.Principal, ports.ActionSearch),
		Matcher: m,
		Limits:  c.config.Search,
		Redact:  c.redactor(),
	})
	if err != nil {
		return nil, storeRefusal(err) // a cancellation passes as it is
	}
	out := docSearchOutput{
		Matches:       make([]searchMatch, 0, len(rep.Matches)),
		FilesScanned:  rep.FilesScanned,
		FilesListed:   rep.FilesListed,
		BytesScanned:  rep.BytesScanned,
		Complete:      rep.Complete(),
		Truncated:     rep.Truncated(),
		Untrusted:     true,
		Regex:         in.UseRegex,
		FilesExcluded: rep.Skipped.Total(),
	}
	for i, m := range rep.Matches {
		if content.DocumentFormat(m.Path) == content.FormatMarkdown {
			// A Markdown document's line is sanitized as doc_read
			// sanitizes the document (an image beacon, raw HTML, a
			// comment that hides what follows), then kept on its line.
			if md, err := content.SanitizeMarkdown([]byte(m.Snippet)); err == nil {
				m.Snippet = search.SanitizeSnippet(md)
			} else {
				m.Snippet = ""
			}
			rep.Matches[i] = m
		}
		out.Matches = append(out.Matches, searchMatch{Path: m.Path, Line: m.Line, Column: m.Column, Snippet: m.Snippet})
	}
	out.SecretsRedacted = rep.SecretsRedacted
	text, marker := rep.Answer("corpus", "documents", search.DocVars)
	out.Marker = marker
	return catalog.Answer(out, text), nil
}
