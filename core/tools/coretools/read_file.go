package coretools

import (
	"context"
	"errors"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/ports"
)

type readFileInput struct {
	Path string `json:"path" description:"Path relative to the sandbox root." maxLength:"$path"`
}

type readFileOutput struct {
	content.Framed
	Path string `json:"path" description:"The relative path that was read."`
}

// readFile defines read_file: a text file from the sandbox jail, by
// relative path, sanitized and framed as untrusted data.
var readFile = catalog.Define[readFileInput, readFileOutput](catalog.ToolDef{
	Name:        "read_file",
	Scope:       "tools:read",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_READ_FILE_PER_MINUTE", Default: 60},
	Description: "Read a text file from the server's sandbox directory by relative path. Example: read_file(path=\"welcome.txt\").",
	Annotations: catalog.Annotations{Title: "Read file", ReadOnly: true, Idempotent: true},
})

func (r *server) read(ctx context.Context, _ catalog.Call, in readFileInput) (*catalog.Reply[readFileOutput], error) {
	rel, err := catalog.CleanPath(in.Path)
	if err != nil {
		return nil, err
	}
	raw, _, err := r.jail.ReadFile(ctx, rel, r.config.ReadFileMaxBytes)
	if err != nil {
		return nil, fileRefusal(err)
	}
	text, err := content.SanitizeText(raw)
	if err != nil {
		return nil, catalog.Invalid("The file's encoding is refused (UTF-7).")
	}
	framed := content.Frame(text, content.NewSource("file", rel, "text", raw))
	return catalog.Answer(readFileOutput{Framed: framed, Path: rel}, framed.Text), nil
}

// fileRefusal maps jail errors to caller-safe refusals that never name the
// path.
func fileRefusal(err error) error {
	switch {
	case errors.Is(err, ports.ErrNotFound):
		return catalog.NotFound("File")
	case errors.Is(err, ports.ErrTooLarge):
		return catalog.Invalid("The file exceeds the size limit.")
	case errors.Is(err, ports.ErrOutsideJail):
		return catalog.Invalid("The path resolves outside the sandbox.")
	case errors.Is(err, ports.ErrNotRegular):
		return catalog.Invalid("The path is not a regular file.")
	}
	return err
}
