package docs

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

// DocSearch declares doc_search.
func DocSearch(d Deps) catalog.ToolSpec {
	s := d.Settings
	match := catalog.Object(map[string]*catalog.Schema{
		"path":    catalog.String("Document path.", 0),
		"line":    catalog.Integer("1-based line.", 1, 1<<31),
		"column":  catalog.Integer("1-based column, in characters.", 1, 1<<31),
		"snippet": catalog.String("The sanitized matching line, cut around the match.", 0),
	}, "path", "line", "column", "snippet")
	return catalog.MustTool(catalog.ToolDef{
		Name:        "doc_search",
		Family:      catalog.FamilyDocs,
		Scope:       "docs:search",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_DOC_SEARCH_PER_MINUTE", Default: 60},
		Description: "Search corpus documents for a query and return bounded, sanitized snippets. Literal by default; use_regex when the deployment enables it. Example: doc_search(query=\"deadline\", path_prefix=\"notes/\")",
		Input: catalog.Object(map[string]*catalog.Schema{
			"query":       catalog.String("Text to find (a pattern with use_regex).", s.SearchQueryMaxLength),
			"path_prefix": catalog.String("Only documents under this prefix.", security.MaxPathBytes),
			"use_regex":   catalog.Boolean("Treat query as an RE2 regular expression."),
		}, "query"),
		Output: catalog.Object(map[string]*catalog.Schema{
			"matches":        catalog.Array("Matching lines.", match, 0),
			"files_scanned":  catalog.Integer("Documents searched.", 0, 1<<31),
			"bytes_scanned":  catalog.Integer("Bytes searched.", 0, 1<<53),
			"truncated":      catalog.Array("Bounds that cut the search short.", catalog.String("", 0), 0),
			"marker":         catalog.String("The untrusted-data marker framing the text answer.", 0),
			"untrusted":      catalog.Boolean("Always true."),
			"regex":          catalog.Boolean("Whether the query ran as a pattern."),
			"files_excluded": catalog.Integer("Listed documents not searched (not authorized or unreadable).", 0, 1<<31),
		}, "matches", "files_scanned", "bytes_scanned", "truncated", "marker", "untrusted", "regex", "files_excluded"),
		Annotations: catalog.Annotations{Title: "Search documents", ReadOnly: true, Idempotent: true},
		Handler: func(ctx context.Context, call catalog.Call) (catalog.Result, error) {
			var args struct {
				Query      string `json:"query"`
				PathPrefix string `json:"path_prefix"`
				UseRegex   bool   `json:"use_regex"`
			}
			if err := call.Bind(&args); err != nil {
				return catalog.Result{}, err
			}
			if args.UseRegex && !s.SearchRegexEnabled {
				return catalog.Result{}, catalog.Invalid("Regex search is disabled on this server; search literally instead.")
			}
			m, err := search.NewMatcher(args.Query, args.UseRegex, search.MatcherOptions{MaxQueryChars: s.SearchQueryMaxLength})
			if err != nil {
				return catalog.Result{}, catalog.Invalid("%s.", capitalize(err.Error()))
			}
			prefix, err := docPrefix(args.PathPrefix)
			if err != nil {
				return catalog.Result{}, err
			}
			st, err := d.store()
			if err != nil {
				return catalog.Result{}, err
			}
			listed, listTruncated, err := st.List(ctx, prefix, s.SearchMaxFiles)
			if err != nil {
				return catalog.Result{}, storeRefusal(err)
			}
			paths := make([]string, len(listed))
			for i, f := range listed {
				paths[i] = f.Path
			}
			src := search.NewStoreSource(st, paths, d.allowFunc(call.Principal, ports.ActionSearch),
				search.StoreSourceOptions{MaxBytes: int64(s.DocMaxBytes)})
			defer src.Close()
			res, err := search.Run(ctx, src, m, search.Limits{
				MaxFiles:        s.SearchMaxFiles,
				MaxResults:      s.SearchMaxResults,
				MaxTotalBytes:   int64(s.SearchMaxTotalBytes),
				SnippetMaxChars: s.SearchSnippetMaxChars,
				Deadline:        time.Duration(s.SearchRegexTimeoutMS) * time.Millisecond,
			})
			if err != nil {
				if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
					return catalog.Result{}, err
				}
				return catalog.Result{}, storeRefusal(err)
			}
			return searchResult(res, src.Skipped(), listTruncated, args.UseRegex), nil
		},
	})
}

// searchResult sanitizes every snippet and frames the text answer once.
func searchResult(res search.Result, excluded int, listTruncated, regex bool) catalog.Result {
	matches := make([]any, 0, len(res.Matches))
	var text strings.Builder
	for _, m := range res.Matches {
		snippet := content.SanitizeString(m.Snippet)
		path := content.SanitizeString(m.Path)
		snippet = strings.ReplaceAll(snippet, "\n", " ")
		matches = append(matches, map[string]any{"path": path, "line": m.Line, "column": m.Column, "snippet": snippet})
		text.WriteString(path)
		text.WriteString(":")
		text.WriteString(strconv.Itoa(m.Line))
		text.WriteString(":")
		text.WriteString(strconv.Itoa(m.Column))
		text.WriteString(": ")
		text.WriteString(snippet)
		text.WriteString("\n")
	}
	truncated := []any{}
	if res.ResultsTruncated {
		truncated = append(truncated, "results")
	}
	if res.FilesTruncated || listTruncated {
		truncated = append(truncated, "files")
	}
	if res.BytesTruncated {
		truncated = append(truncated, "bytes")
	}
	if res.DeadlineExceeded {
		truncated = append(truncated, "deadline")
	}
	if len(matches) == 0 {
		text.WriteString("No matches.\n")
	}
	framed := content.Frame(text.String(), content.NewSource("search", "corpus", "text", []byte(text.String())))
	return catalog.Result{
		Structured: map[string]any{
			"matches":        matches,
			"files_scanned":  res.FilesScanned,
			"bytes_scanned":  res.BytesScanned,
			"truncated":      truncated,
			"marker":         framed.Marker,
			"untrusted":      true,
			"regex":          regex,
			"files_excluded": excluded,
		},
		Text: framed.Text,
	}
}
