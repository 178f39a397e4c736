package repo

import (
	"context"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/ports"
)

type codeSearchInput struct {
	Query      string `json:"query" description:"Text to find (a pattern with use_regex)." maxLength:"$query"`
	PathPrefix string `json:"path_prefix,omitempty" description:"Only files under this prefix." maxLength:"$path"`
	UseRegex   bool   `json:"use_regex,omitempty" description:"Treat query as an RE2 regular expression."`
}

type codeMatch struct {
	Path    string `json:"path" description:"File path."`
	Line    int    `json:"line" description:"1-based line." minimum:"1" maximum:"$count"`
	Column  int    `json:"column" description:"1-based column, in characters." minimum:"1" maximum:"$count"`
	Snippet string `json:"snippet" description:"The sanitized matching line, cut around the match."`
}

type codeSearchOutput struct {
	Matches       []codeMatch `json:"matches" description:"Matching lines, in path then line order: the first ARROWHEAD_SEARCH_MAX_RESULTS of them."`
	FilesScanned  int         `json:"files_scanned" description:"Files searched." minimum:"0" maximum:"$count"`
	FilesListed   int         `json:"files_listed" description:"Files under the prefix the repository serves, counted past the file cap (a lower bound when the walk stopped first)." minimum:"0" maximum:"$count"`
	BytesScanned  int64       `json:"bytes_scanned" description:"Bytes searched." minimum:"0" maximum:"9007199254740992"`
	Complete      bool        `json:"complete" description:"True when every admitted file was searched to its end; false when a bound in truncated cut the search short."`
	Truncated     []string    `json:"truncated" description:"Bounds that cut the search short: results, files, bytes, deadline."`
	FilesExcluded int         `json:"files_excluded" description:"Listed files not searched (not authorized, binary, over the per-file cap or unreadable)." minimum:"0" maximum:"$count"`
	Regex         bool        `json:"regex" description:"Whether the query ran as a pattern."`
	Marker        string      `json:"marker" description:"The untrusted-data marker framing the matches in the text answer."`
	Untrusted     bool        `json:"untrusted" description:"Always true."`

	// SecretsRedacted says in the structure what the text's last
	// sentence says (search.SecretsNote).
	SecretsRedacted bool `json:"secrets_redacted" description:"True when secret values were redacted before matching: text inside a secret is never found, so grep on the raw files may find more lines. Set for every such search, whether or not it met a secret."`
}

// codeSearch defines code_search; "$query" is the family's
// ARROWHEAD_SEARCH_QUERY_MAX_LENGTH bound.
var codeSearch = catalog.Define[codeSearchInput, codeSearchOutput](catalog.ToolDef{
	Name:        "code_search",
	Scope:       "repo:search",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CODE_SEARCH_PER_MINUTE", Default: 60},
	Description: "Search repository files for a query and return the first matches in path and line order as bounded, sanitized snippets with line numbers. Literal by default; use_regex when the deployment enables it. The answer says whether every file was searched and, when a cap stopped it, how far it got. Example: code_search(query=\"TODO\", path_prefix=\"src/\")",
	Annotations: catalog.Annotations{Title: "Search code", ReadOnly: true, Idempotent: true},
})

// search runs the shared search pipeline over the repository under its
// own caps (file count, per-file and total bytes, time), each file
// authorized for search as it is read.
func (t *tree) search(ctx context.Context, call catalog.Call, in codeSearchInput) (*catalog.Reply[codeSearchOutput], error) {
	c := t.config
	if in.UseRegex && !c.RegexEnabled {
		return nil, catalog.Invalid("%s", search.RegexDisabled)
	}
	m, err := search.NewMatcher(in.Query, in.UseRegex, search.MatcherOptions{MaxQueryChars: c.QueryMaxChars})
	if err != nil {
		return nil, catalog.Invalid("%s", catalog.Sentence(err.Error()))
	}
	prefix, err := catalog.CleanPrefix(in.PathPrefix)
	if err != nil {
		return nil, err
	}
	limits := c.Literal
	if in.UseRegex {
		limits = c.Regex
	}
	rep, err := search.Search(ctx, search.Request{
		Store:   t.store,
		Prefix:  prefix,
		Allow:   t.allowFunc(call.Principal, ports.ActionSearch),
		Matcher: m,
		Limits:  limits,
		Redact:  t.redactor(),
	})
	if err != nil {
		return nil, storeRefusal(err) // a cancellation passes as it is
	}
	out := codeSearchOutput{
		Matches:       make([]codeMatch, 0, len(rep.Matches)),
		FilesScanned:  rep.FilesScanned,
		FilesListed:   rep.FilesListed,
		BytesScanned:  rep.BytesScanned,
		Complete:      rep.Complete(),
		Truncated:     rep.Truncated(),
		FilesExcluded: rep.Skipped.Total(),
		Regex:         in.UseRegex,
		Untrusted:     true,
	}
	for _, hit := range rep.Matches {
		out.Matches = append(out.Matches, codeMatch{Path: hit.Path, Line: hit.Line, Column: hit.Column, Snippet: hit.Snippet})
	}
	out.SecretsRedacted = rep.SecretsRedacted
	text, marker := rep.Answer("repository", "files", search.RepoVars(in.UseRegex))
	out.Marker = marker
	return catalog.Answer(out, text), nil
}
