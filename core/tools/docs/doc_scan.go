package docs

import (
	"context"
	"errors"
	"strconv"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

// DocScan declares doc_scan.
func DocScan(d Deps) catalog.ToolSpec {
	s := d.Settings
	finding := catalog.Object(map[string]*catalog.Schema{
		"type":        catalog.String("Secret or PII type.", 0),
		"path":        catalog.String("Document path.", 0),
		"line":        catalog.Integer("1-based line.", 1, 1<<31),
		"column":      catalog.Integer("1-based column, in characters.", 1, 1<<31),
		"placeholder": catalog.String("[REDACTED:TYPE:tag]; the tag is a keyed hash, never the value.", 0),
	}, "type", "path", "line", "column", "placeholder")
	return catalog.MustTool(catalog.ToolDef{
		Name:        "doc_scan",
		Family:      catalog.FamilyDocs,
		Scope:       "docs:scan",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_DOC_SCAN_PER_MINUTE", Default: 20},
		Description: "Scan corpus documents for secrets and PII; returns type, location and a hashed placeholder, never the raw value. Example: doc_scan(path_prefix=\"exports/\")",
		Input: catalog.Object(map[string]*catalog.Schema{
			"path_prefix": catalog.String("Only documents under this prefix.", security.MaxPathBytes),
		}),
		Output: catalog.Object(map[string]*catalog.Schema{
			"findings":      catalog.Array("Redacted findings.", finding, 0),
			"files_scanned": catalog.Integer("Documents scanned.", 0, 1<<31),
			"files_skipped": catalog.Integer("Documents not scanned (not authorized, too large or unreadable).", 0, 1<<31),
			"truncated":     catalog.Array("Bounds that cut the scan short.", catalog.String("", 0), 0),
		}, "findings", "files_scanned", "files_skipped", "truncated"),
		Annotations: catalog.Annotations{Title: "Scan documents for secrets", ReadOnly: true, Idempotent: true},
		Handler: func(ctx context.Context, call catalog.Call) (catalog.Result, error) {
			var args struct {
				PathPrefix string `json:"path_prefix"`
			}
			if err := call.Bind(&args); err != nil {
				return catalog.Result{}, err
			}
			prefix, err := docPrefix(args.PathPrefix)
			if err != nil {
				return catalog.Result{}, err
			}
			st, err := d.store()
			if err != nil {
				return catalog.Result{}, err
			}
			ctx, cancel := context.WithTimeout(ctx, settings.Seconds(s.ScanTimeoutSeconds))
			defer cancel()
			rep, err := d.scan(ctx, st, call.Principal, prefix)
			if err != nil {
				return catalog.Result{}, err
			}
			return rep.result(), nil
		},
	})
}

// ScanReport is a finished (or bounded) scan, shared with the async scan of
// the tasks family.
type ScanReport struct {
	Findings     []security.Finding
	FilesScanned int
	FilesSkipped int
	Truncated    []string
}

func (r ScanReport) result() catalog.Result {
	findings := make([]any, 0, len(r.Findings))
	for _, f := range r.Findings {
		findings = append(findings, map[string]any{
			"type": string(f.Type), "path": content.SanitizeString(f.Path), "line": f.Line, "column": f.Column, "placeholder": f.Placeholder,
		})
	}
	truncated := make([]any, 0, len(r.Truncated))
	for _, t := range r.Truncated {
		truncated = append(truncated, t)
	}
	text := summarizeFindings(r)
	return catalog.Result{
		Structured: map[string]any{
			"findings":      findings,
			"files_scanned": r.FilesScanned,
			"files_skipped": r.FilesSkipped,
			"truncated":     truncated,
		},
		Text: text,
	}
}

// scan walks the authorized documents under prefix, finding secrets in the
// sanitized text of each (never returning a raw value).
func (d Deps) scan(ctx context.Context, st ports.DocumentStore, p ports.Principal, prefix string) (ScanReport, error) {
	s := d.Settings
	var rep ScanReport
	listed, truncated, err := st.List(ctx, prefix, s.ScanMaxFiles)
	if err != nil {
		return rep, storeRefusal(err)
	}
	if truncated {
		rep.Truncated = append(rep.Truncated, "files")
	}
	remaining := s.ScanMaxFindings
	allow := d.allowFunc(p, ports.ActionScan)
	for _, f := range listed {
		if ctx.Err() != nil {
			rep.Truncated = append(rep.Truncated, "timeout")
			break
		}
		if remaining <= 0 {
			rep.Truncated = append(rep.Truncated, "findings")
			break
		}
		if ok, _ := allow(ctx, f.Path); !ok {
			rep.FilesSkipped++
			continue
		}
		raw, _, err := st.Read(ctx, f.Path, int64(s.ScanPerFileMaxBytes))
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				rep.Truncated = append(rep.Truncated, "timeout")
				break
			}
			rep.FilesSkipped++
			continue
		}
		text, err := content.SanitizeText(raw)
		if err != nil {
			rep.FilesSkipped++
			continue
		}
		found := d.Scanner.ScanText(f.Path, text, remaining)
		rep.Findings = append(rep.Findings, found...)
		remaining -= len(found)
		rep.FilesScanned++
	}
	return rep, nil
}

func summarizeFindings(r ScanReport) string {
	var b []byte
	b = append(b, "Scanned "...)
	b = append(b, strconv.Itoa(r.FilesScanned)...)
	b = append(b, " documents; "...)
	b = append(b, strconv.Itoa(len(r.Findings))...)
	b = append(b, " findings.\n"...)
	for _, f := range r.Findings {
		b = append(b, content.SanitizeString(f.Path)...)
		b = append(b, ':')
		b = append(b, strconv.Itoa(f.Line)...)
		b = append(b, ':')
		b = append(b, strconv.Itoa(f.Column)...)
		b = append(b, ' ')
		b = append(b, f.Placeholder...)
		b = append(b, '\n')
	}
	return string(b)
}
