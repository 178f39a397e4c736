package core

import (
	"encoding/json"

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

// redactResult redacts a tool result in place of the original.
func (a *App) redactResult(r catalog.Result) catalog.Result {
	if r.NeedInput != nil && r.NeedInput.Sample != nil {
		sample := *r.NeedInput.Sample
		sample.System, _ = a.scanner.Redact(sample.System)
		sample.Prompt, _ = a.scanner.Redact(sample.Prompt)
		req := *r.NeedInput
		req.Sample = &sample
		r.NeedInput = &req
	}
	if !a.settings.RedactReads {
		return r
	}
	r.Text, _ = a.scanner.Redact(r.Text)
	if r.Structured != nil {
		r.Structured = a.redactValue(r.Structured).(map[string]any)
	}
	if r.NeedInput != nil && r.NeedInput.Sample == nil {
		req := *r.NeedInput
		req.Message, _ = a.scanner.Redact(req.Message)
		r.NeedInput = &req
	}
	return r
}

// redactValue redacts every string in a rendered value (see catalog's
// render: maps, slices, strings and scalars; a value typed any is already
// JSON-shaped but may be any Go type, so one not listed is taken through
// JSON first rather than passed unread).
func (a *App) redactValue(v any) any {
	switch x := v.(type) {
	case nil, bool, int, int64, float64, json.Number:
		return v
	case string:
		out, _ := a.scanner.Redact(x)
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = a.redactValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = a.redactValue(e)
		}
		return out
	}
	raw, err := json.Marshal(v)
	if err != nil {
		// Not JSON-shaped: nothing a transport could send either.
		return nil
	}
	var generic any
	if json.Unmarshal(raw, &generic) != nil {
		return nil
	}
	return a.redactValue(generic)
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
