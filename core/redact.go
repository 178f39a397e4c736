package core

import (
	"fmt"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/security"
)

// The one redaction rule, on the way out of the guard chain: every tool
// result, resource read and prompt passes the process's secret scanner
// before any door sees it, whichever tool produced it, so file, document,
// repository, memory, fetched and model content cannot reach a caller
// raw by a path that forgot to redact. ARROWHEAD_REDACT_READS=false turns
// this half off; a sampling request (content the server asks the client's
// model to read) is a model request and is redacted regardless.

// redactResult redacts a tool result in place of the original: every
// string value of its structured content (object keys are the tool's
// property names, or keys of maps it built) and its text.
func (a *App) redactResult(r catalog.Result) (catalog.Result, error) {
	if r.NeedInput != nil && r.NeedInput.Sample != nil {
		sample := *r.NeedInput.Sample
		sample.System, _ = a.scanner.Redact(sample.System)
		sample.Prompt, _ = a.scanner.Redact(sample.Prompt)
		req := *r.NeedInput
		req.Sample = &sample
		r.NeedInput = &req
	}
	if !a.settings.RedactReads {
		return r, nil
	}
	r.Text, _ = a.scanner.Redact(r.Text)
	if r.JSON != nil {
		doc, err := catalog.RewriteStrings(r.JSON, func(s string) (string, bool) {
			out, found := a.scanner.Redact(s)
			return out, len(found) > 0
		})
		if err != nil {
			// The catalog encoded it; content it cannot read is not sent.
			return catalog.Result{}, fmt.Errorf("redacting a result: %w", err)
		}
		r.JSON = doc
	}
	if r.NeedInput != nil && r.NeedInput.Sample == nil {
		req := *r.NeedInput
		req.Message, _ = a.scanner.Redact(req.Message)
		r.NeedInput = &req
	}
	return r, nil
}

func (a *App) redactResources(cs []catalog.ResourceContent) []catalog.ResourceContent {
	if !a.settings.RedactReads {
		return cs
	}
	out := make([]catalog.ResourceContent, len(cs))
	for i, c := range cs {
		c.Text, _ = a.scanner.Redact(c.Text)
		out[i] = c
	}
	return out
}

func (a *App) redactPrompt(p catalog.PromptResult) catalog.PromptResult {
	if !a.settings.RedactReads {
		return p
	}
	msgs := make([]catalog.PromptMessage, len(p.Messages))
	for i, m := range p.Messages {
		m.Text, _ = a.scanner.Redact(m.Text)
		msgs[i] = m
	}
	p.Messages = msgs
	return p
}

// Scanner is the process's secret scanner: the one every redaction uses,
// so equal secrets get equal placeholder tags wherever they appear.
func (a *App) Scanner() *security.Scanner { return a.scanner }
