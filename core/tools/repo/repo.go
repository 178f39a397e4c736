// Package repo is the repo family: code_search, code_read, symbol_map and
// dependency_graph over a jailed, read-only source tree (ports.RepoStore),
// separate from the document corpus. Every file a tool touches is
// authorized per file as a repository resource (ports.KindRepoFile, read or
// search), so a document grant never reaches code; everything read is
// sanitized as text and framed as untrusted data. Symbols and imports are
// parsed (core/codeintel, or a ports.SymbolTagger), never executed.
package repo

import (
	"context"
	"errors"
	"strings"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/search"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Ports are what the repo family uses.
type Ports struct {
	// Repo is the source tree. Nil when ARROWHEAD_REPO_ROOT names no
	// existing directory: every repo tool then refuses as not configured,
	// as the seed says ("every repo tool fails"), and the rest of the
	// server starts.
	Repo ports.RepoStore `port:"optional"`
	// Authorizer is the per-resource gate (the same one the App uses).
	Authorizer ports.Authorizer
	// Tagger extracts symbols for languages other than Go and Python
	// (universal-ctags when it is installed); nil leaves them to the line
	// heuristic.
	Tagger ports.SymbolTagger `port:"optional"`
	// Scanner redacts secrets in code_search snippets; nil leaves them
	// as sanitized.
	Scanner *security.Scanner `port:"optional"`
}

// notConfigured is the refusal of every repo tool without a repository.
const notConfigured = "The repository is not configured on this server (ARROWHEAD_REPO_ROOT names no directory)."

// Config is what the repo family reads from the settings.
type Config struct {
	// QueryMaxChars is ARROWHEAD_SEARCH_QUERY_MAX_LENGTH, code_search's
	// "$query" bound.
	QueryMaxChars int `setting:"ARROWHEAD_SEARCH_QUERY_MAX_LENGTH"`
	// RegexEnabled is ARROWHEAD_SEARCH_REGEX_ENABLED.
	RegexEnabled bool `setting:"ARROWHEAD_SEARCH_REGEX_ENABLED"`
	// Literal and Regex are code_search's caps for a literal query and for
	// a pattern.
	Literal, Regex search.Limits
	// MaxFiles is ARROWHEAD_REPO_SEARCH_MAX_FILES, the per-walk cap of
	// every repo tool.
	MaxFiles int `setting:"ARROWHEAD_REPO_SEARCH_MAX_FILES"`
	// MaxFileBytes is ARROWHEAD_REPO_MAX_FILE_BYTES, what one read takes.
	MaxFileBytes int64 `setting:"ARROWHEAD_REPO_MAX_FILE_BYTES"`
	// ContentMaxBytes caps what code_read returns of a file.
	ContentMaxBytes int `setting:"ARROWHEAD_CONTENT_MAX_BYTES"`
	// RedactReads is ARROWHEAD_REDACT_READS: whether code_search redacts a
	// matched file before cutting snippets from it.
	RedactReads bool `setting:"ARROWHEAD_REDACT_READS"`
	// SymbolMapMaxFiles and SymbolMapMaxSymbols bound symbol_map,
	// GraphMaxFiles dependency_graph.
	SymbolMapMaxFiles   int `setting:"ARROWHEAD_SYMBOL_MAP_MAX_FILES"`
	SymbolMapMaxSymbols int `setting:"ARROWHEAD_SYMBOL_MAP_MAX_SYMBOLS"`
	GraphMaxFiles       int `setting:"ARROWHEAD_DEPENDENCY_GRAPH_MAX_FILES"`
}

// Family is the repo family.
var Family = core.Family[Config, Ports, *tree]{
	ID: catalog.FamilyRepo,
	Configure: func(s *settings.Settings, c *Config) {
		c.Literal, c.Regex = search.RepoLimits(s, false), search.RepoLimits(s, true)
	},
	Bounds: func(c Config) catalog.Bounds { return catalog.Bounds{"query": c.QueryMaxChars} },
	Serve:  newTree,
	Tools: []core.FamilyTool[*tree]{
		core.Tool(codeSearch, (*tree).search).Needs(hasRepo, notConfigured),
		core.Tool(codeRead, (*tree).read).Needs(hasRepo, notConfigured),
		core.Tool(symbolMap, (*tree).symbolMap).Needs(hasRepo, notConfigured),
		core.Tool(dependencyGraph, (*tree).graph).Needs(hasRepo, notConfigured),
	},
}

// hasRepo is every repo tool's readiness: a repository is open.
func hasRepo(t *tree) bool { return t.store != nil }

// tree is the repository as the tools see it: the store and the gate
// every file passes, the symbol tagger and the secret scanner.
type tree struct {
	config     Config
	store      ports.RepoStore
	authorizer ports.Authorizer
	tagger     ports.SymbolTagger
	scanner    *security.Scanner
}

func newTree(c Config, p Ports) *tree {
	return &tree{config: c, store: p.Repo, authorizer: p.Authorizer, tagger: p.Tagger, scanner: p.Scanner}
}

// redactor is the secret scanner's line-keeping redaction of a file the
// search matched (see search.Request.Redact), or nil without a scanner or
// with ARROWHEAD_REDACT_READS=false: nothing is redacted, and the answer
// says nothing of secrets.
func (t *tree) redactor() func(string) string {
	if t.scanner == nil || !t.config.RedactReads {
		return nil
	}
	return t.scanner.RedactLines
}

func (t *tree) allowed(ctx context.Context, p ports.Principal, action ports.Action, rel string) bool {
	return t.authorizer.Authorize(ctx, p, action, ports.Resource{Kind: ports.KindRepoFile, ID: rel}).Allowed
}

// allowFunc adapts the authorizer for per-file filtering.
func (t *tree) allowFunc(p ports.Principal, action ports.Action) func(ctx context.Context, rel string) (bool, error) {
	return func(ctx context.Context, rel string) (bool, error) { return t.allowed(ctx, p, action, rel), nil }
}

// storeRefusal maps store errors to refusals that never name the path.
func storeRefusal(err error) error {
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return catalog.NotFound("Repository file")
	case errors.Is(err, ports.ErrTooLarge):
		return catalog.Invalid("The file exceeds the size limit.")
	case errors.Is(err, ports.ErrOutsideJail):
		return catalog.Invalid("The path resolves outside the repository.")
	case errors.Is(err, ports.ErrNotRegular):
		return catalog.Invalid("The path is not a regular file.")
	case errors.Is(err, ports.ErrBinary):
		return catalog.Invalid("The file is not text.")
	case errors.Is(err, ports.ErrFileType):
		return catalog.Invalid("This file type is not served: its name matches neither ARROWHEAD_REPO_ALLOWED_EXTENSIONS nor ARROWHEAD_REPO_ALLOWED_NAMES, which the operator can extend.")
	}
	return err
}

// firstListing is the smallest listing eachCandidate starts from.
const firstListing = 64

// eachCandidate hands use the files under prefix that keep accepts (a
// cheap test of name and authorization), in lexical order, until use has
// accepted need of them (it declines a file it could not read). truncated
// reports that more candidates remained, or that the per-walk cap
// (ARROWHEAD_REPO_SEARCH_MAX_FILES) stopped the listing first. It lists a
// little more than it needs and grows the listing fourfold while too few
// files are accepted, so a map of the first few hundred files never walks
// the whole tree; a relisting resumes after the last file handled.
func (t *tree) eachCandidate(ctx context.Context, prefix string, need int, keep func(string) bool,
	use func(ports.FileInfo) (bool, error)) (truncated bool, err error) {
	limit := min(max(2*need, firstListing), t.config.MaxFiles)
	used, last := 0, ""
	for {
		files, listTruncated, err := t.store.List(ctx, prefix, limit)
		if err != nil {
			return false, storeRefusal(err)
		}
		for _, f := range files {
			if last != "" && f.Path <= last {
				continue // handled by an earlier, shorter listing
			}
			last = f.Path
			if !keep(f.Path) {
				continue
			}
			if used == need {
				return true, nil
			}
			ok, err := use(f)
			if err != nil {
				return false, err
			}
			if ok {
				used++
			}
		}
		if !listTruncated || limit == t.config.MaxFiles {
			return listTruncated, nil
		}
		limit = min(4*limit, t.config.MaxFiles)
	}
}

// readEach reads the candidates eachCandidate hands out, passing over the
// ones that cannot be read as text, until need have been read.
func (t *tree) readEach(ctx context.Context, prefix string, need int, keep func(string) bool, use func(path string, data []byte)) (bool, error) {
	return t.eachCandidate(ctx, prefix, need, keep, func(f ports.FileInfo) (bool, error) {
		data, _, err := t.store.Read(ctx, f.Path, t.config.MaxFileBytes)
		if err != nil {
			if unreadable(err) {
				return false, nil
			}
			return false, err
		}
		use(f.Path, data)
		return true, nil
	})
}

// unreadable reports a store refusal a walk passes over rather than fails
// on: the file went away, grew, or is not text.
func unreadable(err error) bool {
	return errors.Is(err, ports.ErrNotFound) || errors.Is(err, ports.ErrTooLarge) || errors.Is(err, ports.ErrBinary) ||
		errors.Is(err, ports.ErrNotRegular) || errors.Is(err, ports.ErrOutsideJail) || errors.Is(err, ports.ErrFileType)
}

// msgNothingUnderPrefix follows an empty map or graph whose path_prefix
// reached no file: most often a mistyped prefix, which "No symbols." alone
// would hide.
const msgNothingUnderPrefix = "No source file you may read lies under path_prefix. " + catalog.PrefixRule

// oneLine keeps a sanitized value on one line of the text answer.
func oneLine(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "\r", " "), "\n", " ") }
