package repo

import (
	"bytes"
	"context"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

type codeReadInput struct {
	Path      string `json:"path" description:"File path relative to the repository root." maxLength:"$path"`
	StartLine int    `json:"start_line,omitempty" description:"First line to return, 1-based (default 1)." minimum:"1" maximum:"2147483648"`
	EndLine   int    `json:"end_line,omitempty" description:"Last line to return, inclusive; 0 (the default) means to the end." minimum:"0" maximum:"2147483648"`
}

type codeReadOutput struct {
	content.Framed
	Path       string `json:"path" description:"The file read."`
	StartLine  int    `json:"start_line" description:"First line returned (1-based)." minimum:"1" maximum:"2147483648"`
	EndLine    int    `json:"end_line" description:"Last line returned, inclusive (0 for an empty file)." minimum:"0" maximum:"2147483648"`
	TotalLines int    `json:"total_lines" description:"Lines in the whole file." minimum:"0" maximum:"2147483648"`
	Truncated  bool   `json:"truncated" description:"True when the sanitized slice was cut at the size limit."`
}

// codeRead defines code_read.
func codeRead(*settings.Settings) catalog.Tool[codeReadInput, codeReadOutput] {
	return catalog.Define[codeReadInput, codeReadOutput](catalog.ToolDef{
		Name:        "code_read",
		Family:      catalog.FamilyRepo,
		Scope:       "repo:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CODE_READ_PER_MINUTE", Default: 60},
		Description: "Read a repository file by relative path, optionally sliced to a line range (1-based, inclusive; end_line 0 means to the end). Returns sanitized text framed as untrusted data. Example: code_read(path=\"src/app.py\", start_line=10, end_line=40)",
		Annotations: catalog.Annotations{Title: "Read code", ReadOnly: true, Idempotent: true},
		Bounds:      catalog.Bounds{"path": security.MaxPathBytes},
	})
}

// read validates, authorizes, reads, slices the line range, sanitizes it
// as text and frames it. An end_line past the end is cut to the last line;
// a start_line past the end is refused.
func (t *tree) read(ctx context.Context, call catalog.Call, in codeReadInput) (*catalog.Reply[codeReadOutput], error) {
	rel, err := filePath(in.Path)
	if err != nil {
		return nil, err
	}
	start := max(in.StartLine, 1)
	if in.EndLine != 0 && in.EndLine < start {
		return nil, catalog.Invalid("end_line must be 0 or at least start_line.")
	}
	if !t.allowed(ctx, call.Principal, ports.ActionRead, rel) {
		return nil, catalog.Denied()
	}
	raw, _, err := t.store.Read(ctx, rel, int64(t.settings.RepoMaxFileBytes))
	if err != nil {
		return nil, storeRefusal(err)
	}
	slice, end, total, ok := lineRange(raw, start, in.EndLine)
	if !ok {
		return nil, catalog.Invalid("The line range starts past the end of the file, which has %d lines.", total)
	}
	text, err := content.SanitizeText(slice)
	if err != nil {
		return nil, catalog.Invalid("The file is refused: %s.", err.Error())
	}
	text, truncated := content.Truncate(text, t.settings.ContentMaxBytes)
	framed := content.Frame(text, content.NewSource("repo_file", rel, "text", raw))
	out := codeReadOutput{Framed: framed, Path: rel, StartLine: start, EndLine: end, TotalLines: total, Truncated: truncated}
	return catalog.Answer(out, framed.Text), nil
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
