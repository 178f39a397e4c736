package coretools

import (
	"context"
	"errors"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

// ReadFile declares read_file: a text file from the sandbox jail, by
// relative path, sanitized and framed as untrusted data.
func ReadFile(d Deps) catalog.ToolSpec {
	maxBytes := int64(d.Settings.ReadFileMaxBytes)
	props := content.FrameProperties()
	props["path"] = catalog.String("The relative path that was read.", 0)
	return catalog.MustTool(catalog.ToolDef{
		Name:        "read_file",
		Family:      catalog.FamilyCore,
		Scope:       "tools:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_READ_FILE_PER_MINUTE", Default: 60},
		Description: "Read a text file from the server's sandbox directory by relative path. Example: read_file(path=\"welcome.txt\").",
		Input: catalog.Object(map[string]*catalog.Schema{
			"path": catalog.String("Path relative to the sandbox root.", security.MaxPathBytes),
		}, "path"),
		Output:      catalog.Object(props, "path", "content", "marker", "source", "untrusted"),
		Annotations: catalog.Annotations{Title: "Read file", ReadOnly: true, Idempotent: true},
		Handler: func(ctx context.Context, call catalog.Call) (catalog.Result, error) {
			var args struct {
				Path string `json:"path"`
			}
			if err := call.Bind(&args); err != nil {
				return catalog.Result{}, err
			}
			rel, err := security.CleanRelPath(args.Path)
			if err != nil {
				return catalog.Result{}, catalog.Invalid("%s.", capitalized(err))
			}
			if d.Sandbox == nil {
				return catalog.Result{}, catalog.Unavailable("The sandbox is not configured.")
			}
			raw, _, err := d.Sandbox.ReadFile(ctx, rel, maxBytes)
			if err != nil {
				return catalog.Result{}, fileRefusal(err)
			}
			text, err := content.SanitizeText(raw)
			if err != nil {
				return catalog.Result{}, catalog.Invalid("The file's encoding is refused (UTF-7).")
			}
			framed := content.Frame(text, content.NewSource("file", rel, "text", raw))
			out := framed.Structured()
			out["path"] = rel
			return catalog.Result{Structured: out, Text: framed.Text}, nil
		},
	})
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
