package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

type codeReadInput struct {
	Path      string `json:"path" description:"File path relative to the repository root." maxLength:"$path"`
	StartLine int    `json:"start_line,omitempty" description:"First line to return, 1-based (default 1)." minimum:"1" maximum:"$count"`
	EndLine   int    `json:"end_line,omitempty" description:"Last line to return, inclusive; 0 (the default) means to the end." minimum:"0" maximum:"$count"`
}

type codeReadOutput struct {
	content.Framed
	Path       string `json:"path" description:"The file read."`
	StartLine  int    `json:"start_line" description:"First line returned (1-based)." minimum:"1" maximum:"$count"`
	EndLine    int    `json:"end_line" description:"Last line returned, inclusive (0 for an empty file)." minimum:"0" maximum:"$count"`
	TotalLines int    `json:"total_lines" description:"Lines in the whole file." minimum:"0" maximum:"$count"`
	Truncated  bool   `json:"truncated" description:"True when the sanitized slice was cut at the size limit."`
}

// codeRead defines code_read.
var codeRead = catalog.Define[codeReadInput, codeReadOutput](catalog.ToolDef{
	Name:        "code_read",
	Scope:       "repo:read",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CODE_READ_PER_MINUTE", Default: 60},
	Description: "Read a repository file by relative path, optionally sliced to a line range (1-based, inclusive; end_line 0 means to the end). Returns sanitized text framed as untrusted data. Example: code_read(path=\"src/app.py\", start_line=10, end_line=40)",
	Annotations: catalog.Annotations{Title: "Read code", ReadOnly: true, Idempotent: true},
})

// read is code_read: an excerpt, framed.
func (t *tree) read(ctx context.Context, call catalog.Call, in codeReadInput) (*catalog.Reply[codeReadOutput], error) {
	ex, err := Reader{t}.Read(ctx, call.Principal, in.Path, in.StartLine, in.EndLine)
	if err != nil {
		return nil, err
	}
	framed := content.Frame(ex.Text, content.NewSource("repo_file", ex.Path, "text", ex.Raw))
	out := codeReadOutput{Framed: framed, Path: ex.Path, StartLine: ex.StartLine, EndLine: ex.EndLine, TotalLines: ex.TotalLines, Truncated: ex.Truncated}
	text := framed.Text
	if ex.Truncated {
		// The line after the last whole one shown, which the cut may
		// have left partly shown.
		next := ex.StartLine + strings.Count(ex.Text, "\n")
		text += content.CutNote(true, "ARROWHEAD_CONTENT_MAX_BYTES", int64(t.config.ContentMaxBytes)) +
			fmt.Sprintf(" Read on with start_line=%d (the file has %d lines).\n", next, ex.TotalLines)
	}
	return catalog.Answer(out, text), nil
}

// Excerpt is a line range of one repository file as code_read serves it.
type Excerpt struct {
	// Path is the cleaned repository-relative path.
	Path string
	// StartLine and EndLine are the lines returned (1-based, inclusive).
	StartLine, EndLine int
	// TotalLines is the file's line count.
	TotalLines int
	// Text is the slice sanitized as text and cut at
	// ARROWHEAD_CONTENT_MAX_BYTES.
	Text      string
	Truncated bool
	// Raw is the whole file as read, for provenance.
	Raw []byte
}

// Reader reads excerpts under code_read's rules, for other families that
// must reach no code code_read could not (code_explain): the same path
// validation, repo_file read authorization, store caps, line-range rules
// and sanitization.
type Reader struct{ t *tree }

// NewReader returns a Reader over store under c's caps (the repo family's
// Config: its per-file and content caps apply).
func NewReader(c Config, store ports.RepoStore, authorizer ports.Authorizer) Reader {
	return Reader{&tree{config: c, store: store, authorizer: authorizer}}
}

// Read validates, authorizes, reads, slices the line range and sanitizes
// it as text. An end_line past the end is cut to the last line; a
// start_line past the end is refused. Refusals are catalog.ToolErrors that
// never echo the path.
func (r Reader) Read(ctx context.Context, p ports.Principal, reqPath string, startLine, endLine int) (Excerpt, error) {
	t := r.t
	rel, err := catalog.CleanPath(reqPath)
	if err != nil {
		return Excerpt{}, err
	}
	start := max(startLine, 1)
	if endLine != 0 && endLine < start {
		return Excerpt{}, catalog.Invalid("end_line must be 0 or at least start_line.")
	}
	if !t.allowed(ctx, p, ports.ActionRead, rel) {
		return Excerpt{}, catalog.Denied()
	}
	raw, _, err := t.store.Read(ctx, rel, t.config.MaxFileBytes)
	if errors.Is(err, ports.ErrFileType) && path.Ext(rel) == "" {
		// Decided from the name alone, like the store's refusal, so it
		// says nothing of whether a directory of that name exists.
		return Excerpt{}, catalog.Invalid("This name is not served as a file: it has no extension and is not in " +
			"ARROWHEAD_REPO_ALLOWED_NAMES. If it is a directory, code_read cannot read it; symbol_map or code_search with path_prefix covers one.")
	}
	if err != nil {
		return Excerpt{}, storeRefusal(err)
	}
	slice, end, total, ok := lineRange(raw, start, endLine)
	if !ok {
		return Excerpt{}, catalog.Invalid("The line range starts past the end of the file, which has %d lines.", total)
	}
	text, err := content.SanitizeText(slice)
	if err != nil {
		return Excerpt{}, catalog.Invalid("The file is refused: %s.", err.Error())
	}
	text, truncated := content.Truncate(text, t.config.ContentMaxBytes)
	return Excerpt{Path: rel, StartLine: start, EndLine: end, TotalLines: total, Text: text, Truncated: truncated, Raw: raw}, nil
}

// lineRange returns lines start..end (1-based, inclusive; end 0 or past
// the end means the last line) of data, the last line returned and the
// file's line count. A final newline ends the last line rather than
// starting another, so "a\nb\n" has two lines. ok is false when start is
// past the end (an empty file has no lines, and only start 1 is accepted
// for it, returning nothing).
func lineRange(data []byte, start, end int) (slice []byte, last, total int, ok bool) {
	total = bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		total++
	}
	if total == 0 {
		return nil, 0, 0, start == 1
	}
	if start > total {
		return nil, 0, total, false
	}
	if end == 0 || end > total {
		end = total
	}
	from := 0
	for line := 1; line < start; line++ {
		from += bytes.IndexByte(data[from:], '\n') + 1
	}
	to := from
	for line := start; line <= end; line++ {
		i := bytes.IndexByte(data[to:], '\n')
		if i < 0 {
			to = len(data)
			break
		}
		to += i + 1
	}
	return data[from:to], end, total, true
}
