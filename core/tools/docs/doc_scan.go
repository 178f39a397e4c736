package docs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/content"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/ports"
)

type docScanInput struct {
	PathPrefix string `json:"path_prefix,omitempty" description:"Only documents under this prefix." maxLength:"$path"`
}

// ScanFinding is one redacted finding of a scan.
type ScanFinding struct {
	Type        string `json:"type" description:"Secret or PII type."`
	Path        string `json:"path" description:"Document path."`
	Line        int    `json:"line" description:"1-based line." minimum:"1" maximum:"$count"`
	Column      int    `json:"column" description:"1-based column, in characters." minimum:"1" maximum:"$count"`
	Placeholder string `json:"placeholder" description:"[REDACTED:TYPE:tag]; the tag is a keyed hash, never the value."`
}

// ScanOutput is a scan's result: doc_scan's output, and the result of a
// completed scan_corpus_async task.
type ScanOutput struct {
	Findings     []ScanFinding `json:"findings" description:"Redacted findings."`
	FilesScanned int           `json:"files_scanned" description:"Documents scanned." minimum:"0" maximum:"$count"`
	FilesSkipped int           `json:"files_skipped" description:"Documents not scanned (not authorized, too large or unreadable)." minimum:"0" maximum:"$count"`
	Truncated    []string      `json:"truncated" description:"Bounds that cut the scan short."`
}

// docScan defines doc_scan.
var docScan = catalog.Define[docScanInput, ScanOutput](catalog.ToolDef{
	Name:        "doc_scan",
	Scope:       "docs:scan",
	Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_DOC_SCAN_PER_MINUTE", Default: 20},
	Description: "Scan corpus documents for secrets and PII; returns type, location and a hashed placeholder, never the raw value. Example: doc_scan(path_prefix=\"exports/\")",
	Annotations: catalog.Annotations{Title: "Scan documents for secrets", ReadOnly: true, Idempotent: true},
})

// Scanner is doc_scan's work for other families: scan_corpus_async runs it
// in the background, under the principal authorized when the task started.
type Scanner struct{ c *corpus }

// NewScanner scans store's documents, each authorized by authorizer, with
// the ARROWHEAD_SCAN_* bounds Configure reads from s.
func NewScanner(c Config, store ports.DocumentStore, authorizer ports.Authorizer, secrets *security.Scanner) Scanner {
	return Scanner{&corpus{config: c, store: store, authorizer: authorizer, scanner: secrets}}
}

// Scan scans the documents under prefix (already cleaned by CleanPrefix)
// that p may scan. between runs before each document; an error from it
// stops the scan and is returned (a cancelled task's ports.ErrTaskCancelled).
func (s Scanner) Scan(ctx context.Context, p ports.Principal, prefix string, between func(context.Context) error) (ScanReport, error) {
	return s.c.scan(ctx, p, prefix, between)
}

func (c *corpus) scanTool(ctx context.Context, call catalog.Call, in docScanInput) (*catalog.Reply[ScanOutput], error) {
	prefix, err := catalog.CleanPrefix(in.PathPrefix)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.config.ScanTimeout)
	defer cancel()
	rep, err := c.scan(ctx, call.Principal, prefix, nil)
	if err != nil {
		return nil, err
	}
	return catalog.Answer(rep.Output(), summarizeFindings(rep, c.config)), nil
}

// ScanReport is a finished (or bounded) scan, shared with the async scan of
// the tasks family.
type ScanReport struct {
	Findings     []security.Finding
	FilesScanned int
	FilesSkipped int
	Truncated    []string
}

// Output is the report as doc_scan returns it: paths sanitized, values
// never included.
func (r ScanReport) Output() ScanOutput {
	out := ScanOutput{
		Findings:     make([]ScanFinding, 0, len(r.Findings)),
		FilesScanned: r.FilesScanned,
		FilesSkipped: r.FilesSkipped,
		Truncated:    append([]string{}, r.Truncated...), // [] rather than null in a task result
	}
	for _, f := range r.Findings {
		out.Findings = append(out.Findings, ScanFinding{
			Type: string(f.Type), Path: content.SanitizeString(f.Path), Line: f.Line, Column: f.Column, Placeholder: f.Placeholder,
		})
	}
	return out
}

// scan walks the authorized documents under prefix, finding secrets in the
// sanitized text of each (never returning a raw value). between, when set,
// runs before each document and stops the scan with its error.
func (c *corpus) scan(ctx context.Context, p ports.Principal, prefix string, between func(context.Context) error) (ScanReport, error) {
	cfg, st := c.config, c.store
	var rep ScanReport
	listed, truncated, err := st.List(ctx, prefix, cfg.ScanMaxFiles)
	if err != nil {
		return rep, storeRefusal(err)
	}
	if truncated {
		rep.Truncated = append(rep.Truncated, "files")
	}
	remaining := cfg.ScanMaxFindings
	allow := c.allowFunc(p, ports.ActionScan)
	for _, f := range listed {
		if between != nil {
			if err := between(ctx); err != nil {
				return rep, err
			}
		}
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
		raw, _, err := st.Read(ctx, f.Path, int64(cfg.ScanFileMaxBytes))
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
		found := c.scanner.ScanText(f.Path, text, remaining)
		rep.Findings = append(rep.Findings, found...)
		remaining -= len(found)
		rep.FilesScanned++
	}
	return rep, nil
}

// summarizeFindings is doc_scan's text: the counts, every document it
// passed over and every bound that cut it short (a model reading "no
// findings" must know whether the whole corpus was read), then the
// findings.
func summarizeFindings(r ScanReport, cfg Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Scanned %s; %s.", catalog.Count(r.FilesScanned, "documents"), catalog.Count(len(r.Findings), "findings"))
	if r.FilesSkipped > 0 {
		fmt.Fprintf(&b, " Skipped %s: not authorized, larger than ARROWHEAD_SCAN_PER_FILE_MAX_BYTES (%d bytes) or unreadable.",
			catalog.Count(r.FilesSkipped, "documents"), cfg.ScanFileMaxBytes)
	}
	for _, bound := range r.Truncated {
		switch bound {
		case "files":
			fmt.Fprintf(&b, " The scan did not finish: it lists at most ARROWHEAD_SCAN_MAX_FILES (%d) documents, and more exist; narrow it with path_prefix.", cfg.ScanMaxFiles)
		case "findings":
			fmt.Fprintf(&b, " The scan did not finish: it stopped at ARROWHEAD_SCAN_MAX_FINDINGS (%d) findings, before the rest of the documents.", cfg.ScanMaxFindings)
		case "timeout":
			fmt.Fprintf(&b, " The scan did not finish: ARROWHEAD_SCAN_TIMEOUT_SECONDS (%s) ran out before the rest of the documents.", cfg.ScanTimeout)
		}
	}
	b.WriteByte('\n')
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "%s:%d:%d %s\n", content.SanitizeString(f.Path), f.Line, f.Column, f.Placeholder)
	}
	return b.String()
}
