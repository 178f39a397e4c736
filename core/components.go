package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/ports"
)

// Resource limits.
const (
	// MaxResourceURIBytes bounds a resource URI before it is matched.
	MaxResourceURIBytes = 4096
	// MaxPromptArgBytes bounds each prompt argument unless the prompt sets a
	// tighter limit.
	MaxPromptArgBytes = 4096
	// MaxCompletionValueBytes bounds the partial value being completed.
	MaxCompletionValueBytes = 1024
)

// IntegrityURI is the resource carrying the tool-surface digest.
const IntegrityURI = "arrowhead://integrity"

// ListResources returns the static resources p may see.
func (a *App) ListResources(_ context.Context, p ports.Principal) []catalog.ResourceSpec {
	var out []catalog.ResourceSpec
	for _, r := range a.resources {
		if r.URI != "" && a.Visible(p, ports.ComponentResource, r.Name) {
			out = append(out, r)
		}
	}
	return out
}

// ListResourceTemplates returns the resource templates p may see.
func (a *App) ListResourceTemplates(_ context.Context, p ports.Principal) []catalog.ResourceSpec {
	var out []catalog.ResourceSpec
	for _, r := range a.resources {
		if r.Template != "" && a.Visible(p, ports.ComponentResource, r.Name) {
			out = append(out, r)
		}
	}
	return out
}

// Resources returns every registered resource and template.
func (a *App) Resources() []catalog.ResourceSpec { return slices.Clone(a.resources) }

// findResource resolves a concrete URI to its resource and template vars.
func (a *App) findResource(uri string) (catalog.ResourceSpec, map[string]string, bool) {
	for _, r := range a.resources {
		if r.URI != "" && r.URI == uri {
			return r, nil, true
		}
	}
	for _, r := range a.resources {
		if r.Template != "" {
			if vars, ok := r.Match(uri); ok {
				return r, vars, true
			}
		}
	}
	return catalog.ResourceSpec{}, nil, false
}

// ReadResource reads uri as p through the guard chain. The audit line names
// the resource and the shape of its URI, never the URI itself.
func (a *App) ReadResource(ctx context.Context, p ports.Principal, uri string, opts ...CallOption) ([]catalog.ResourceContent, error) {
	o := applyOptions(opts)
	var spec catalog.ResourceSpec
	var vars map[string]string
	known := false
	if len(uri) <= MaxResourceURIBytes && utf8.ValidString(uri) {
		spec, vars, known = a.findResource(uri)
	}
	adm := admission{
		kind:       ports.ComponentResource,
		name:       "unknown",
		known:      known,
		unknownMsg: catalog.MsgUnknownResource,
		carrier:    o.carrier,
		shapes:     uriShape(uri),
	}
	if known {
		adm.name = spec.Name
		adm.killNames = []string{spec.Name, spec.URI, spec.Template}
		adm.scope = spec.Scope
		adm.perMinute = a.settings.Limit("ARROWHEAD_RESOURCE_READ_PER_MINUTE", 0)
		if a.canaries.Len() > 0 {
			u := uri // a copy: only it moves to the heap, and only here
			adm.canary = func() (canaryHit, bool) { return a.scanStrings("uri", u) }
		}
	}
	var out []catalog.ResourceContent
	err := a.guard(ctx, p, adm, func(ctx context.Context) error {
		c, err := spec.Handler(ctx, catalog.ResourceCall{Principal: p, URI: uri, Vars: vars})
		if err != nil {
			return err
		}
		c = a.redactResources(c)
		// Resource contents carry no _meta labels; their marks are
		// remembered all the same.
		if _, err := a.egress.observe(ctx, p, func(fn func(key, s string)) {
			for _, rc := range c {
				fn("", rc.Text)
			}
		}); err != nil {
			return err
		}
		out = c
		return nil
	})
	return out, err
}

func uriShape(uri string) map[string]string {
	scheme := "invalid"
	if u, err := url.Parse(uri); err == nil && u.Scheme != "" && len(u.Scheme) <= 16 {
		scheme = strings.ToLower(u.Scheme)
		if !isToken(scheme) {
			scheme = "invalid"
		}
	}
	return map[string]string{"scheme": scheme, "uri": "string(" + strconv.Itoa(utf8.RuneCountInString(uri)) + ")"}
}

func isToken(s string) bool {
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return s != ""
}

// ListPrompts returns the prompts p may see, in name order.
func (a *App) ListPrompts(_ context.Context, p ports.Principal) []catalog.PromptSpec {
	var out []catalog.PromptSpec
	for _, name := range a.promptNames() {
		if a.Visible(p, ports.ComponentPrompt, name) {
			out = append(out, a.prompts[name])
		}
	}
	return out
}

// Prompts returns every registered prompt in name order.
func (a *App) Prompts() []catalog.PromptSpec {
	var out []catalog.PromptSpec
	for _, n := range a.promptNames() {
		out = append(out, a.prompts[n])
	}
	return out
}

func (a *App) promptNames() []string {
	names := make([]string, 0, len(a.prompts))
	for n := range a.prompts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// GetPrompt renders the named prompt as p through the guard chain.
func (a *App) GetPrompt(ctx context.Context, p ports.Principal, name string, args map[string]string, opts ...CallOption) (catalog.PromptResult, error) {
	o := applyOptions(opts)
	spec, known := a.prompts[name]
	adm := admission{
		kind:       ports.ComponentPrompt,
		name:       "unknown",
		known:      known,
		unknownMsg: catalog.MsgUnknownPrompt,
		carrier:    o.carrier,
	}
	if known {
		adm.name = name
		adm.killNames = []string{name}
		adm.scope = spec.Scope
		adm.perMinute = a.settings.Limit("ARROWHEAD_PROMPT_GET_PER_MINUTE", 0)
		adm.shapes = stringShapes(func(k string) bool { return spec.Arg(k) != nil }, args)
		if a.canaries.Len() > 0 {
			sp, as := spec, args // copies: only they move to the heap, and only here
			adm.canary = func() (canaryHit, bool) { return a.scanPromptArgs(sp, as) }
		}
	}
	var out catalog.PromptResult
	err := a.guard(ctx, p, adm, func(ctx context.Context) error {
		if err := checkPromptArgs(spec, args); err != nil {
			return err
		}
		r, err := spec.Handler(ctx, catalog.PromptCall{Principal: p, Args: args})
		if err != nil {
			return err
		}
		r = a.redactPrompt(r)
		if _, err := a.egress.observe(ctx, p, func(fn func(key, s string)) {
			for _, m := range r.Messages {
				fn("", m.Text)
			}
		}); err != nil {
			return err
		}
		out = r
		return nil
	})
	return out, err
}

func checkPromptArgs(spec catalog.PromptSpec, args map[string]string) error {
	for k, v := range args {
		arg := spec.Arg(k)
		if arg == nil {
			return catalog.Invalid("The prompt has no such argument.")
		}
		limit := MaxPromptArgBytes
		if arg.MaxLength > 0 {
			limit = arg.MaxLength
		}
		if len(v) > limit {
			return catalog.Invalid("Argument '%s' exceeds %d bytes.", arg.Name, limit)
		}
		if !utf8.ValidString(v) {
			return catalog.Invalid("Argument '%s' must be valid UTF-8.", arg.Name)
		}
	}
	for _, arg := range spec.Args {
		if _, ok := args[arg.Name]; arg.Required && !ok {
			return catalog.Invalid("Argument '%s' is required.", arg.Name)
		}
	}
	return nil
}

// CompletionRef names what is being completed: a prompt (by name) or a
// resource template (by its URI template).
type CompletionRef struct {
	// Type is "prompt" or "resource".
	Type string
	Name string
}

// Complete offers values for one argument of a prompt or template, through
// the same kill switch, rate limit, scope check and audit line as a call.
func (a *App) Complete(ctx context.Context, p ports.Principal, ref CompletionRef, argument, value string, resolved map[string]string, opts ...CallOption) (catalog.Completion, error) {
	o := applyOptions(opts)
	adm := admission{
		kind:       ports.ComponentCompletion,
		name:       "unknown",
		unknownMsg: catalog.MsgUnknownComponent,
		carrier:    o.carrier,
		shapes: map[string]string{
			"argument": "string(" + strconv.Itoa(utf8.RuneCountInString(argument)) + ")",
			"value":    "string(" + strconv.Itoa(utf8.RuneCountInString(value)) + ")",
		},
	}
	var handler catalog.CompletionHandler
	switch ref.Type {
	case "prompt":
		if spec, ok := a.prompts[ref.Name]; ok && spec.Complete != nil {
			handler = spec.Complete
			adm.known, adm.name, adm.scope = true, "prompt:"+spec.Name, spec.Scope
			adm.killNames = []string{spec.Name, "completion"}
		}
	case "resource":
		for _, r := range a.resources {
			if r.Template != "" && r.Template == ref.Name && r.Complete != nil {
				handler = r.Complete
				adm.known, adm.name, adm.scope = true, "resource:"+r.Name, r.Scope
				adm.killNames = []string{r.Name, r.Template, "completion"}
			}
		}
	}
	adm.perMinute = a.settings.Limit("ARROWHEAD_COMPLETION_PER_MINUTE", 0)
	if adm.known && a.canaries.Len() > 0 {
		v, ctxVals := value, resolved // copies: only they move to the heap, and only here
		adm.canary = func() (canaryHit, bool) {
			values := []string{v}
			for _, v := range ctxVals {
				values = append(values, v)
			}
			return a.scanStrings("completion", values...)
		}
	}
	var out catalog.Completion
	err := a.guard(ctx, p, adm, func(ctx context.Context) error {
		if len(value) > MaxCompletionValueBytes || len(argument) > 128 {
			return catalog.Invalid("The completion request is too large.")
		}
		c, err := handler(ctx, catalog.CompletionCall{Principal: p, Argument: argument, Value: value, Context: resolved})
		if err != nil {
			return err
		}
		if len(c.Values) > catalog.MaxCompletionValues {
			c.HasMore = true
			c.Values = c.Values[:catalog.MaxCompletionValues]
		}
		out = c
		return nil
	})
	return out, err
}

// integrityResource serves the sha256 digest of the enabled tool surface.
func (a *App) integrityResource() catalog.ResourceSpec {
	return catalog.ResourceSpec{
		Name:        "integrity",
		URI:         IntegrityURI,
		Description: "SHA-256 digest of the enabled tools' names, descriptions, schemas and annotations (a tool disabled for everyone, statically or by a live kill rule, is left out); pin it to detect a changed tool surface.",
		MimeType:    "application/json",
		Handler: func(ctx context.Context, _ catalog.ResourceCall) ([]catalog.ResourceContent, error) {
			digest, names := a.Integrity()
			body, err := json.Marshal(map[string]any{"algorithm": "sha256", "digest": digest, "tools": names})
			if err != nil {
				return nil, err
			}
			return []catalog.ResourceContent{{URI: IntegrityURI, MimeType: "application/json", Text: string(body)}}, nil
		},
	}
}

// Integrity returns the hex sha256 over the canonical JSON of every enabled
// tool's semantic surface, and the tool names it covers. A tool is enabled
// unless ARROWHEAD_DISABLED_TOOLS (SetDisabled) or a live kill rule for
// everyone takes it out; rules for one caller do not change the digest.
func (a *App) Integrity() (string, []string) {
	var surface []map[string]any
	var names []string
	for _, t := range a.Tools() {
		if a.disabled(t.Spec.Name()) || a.killedForEveryone(a.toolTarget(t.Spec.Name())) {
			continue
		}
		surface = append(surface, ToolSurface(t.Spec))
		names = append(names, t.Spec.Name())
	}
	b, err := canonicalJSON(surface)
	if err != nil {
		// Our own schemas always marshal; an error here is a programming bug.
		panic(fmt.Sprintf("integrity: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), names
}

// ToolSurface is the semantic surface of a tool as a client sees it: name,
// description, schemas and annotations.
func ToolSurface(t catalog.ToolSpec) map[string]any {
	ann := t.Annotations()
	return map[string]any{
		"name":         t.Name(),
		"description":  t.Description(),
		"inputSchema":  t.Input(),
		"outputSchema": t.Output(),
		"annotations": map[string]any{
			"title":           ann.Title,
			"readOnlyHint":    ann.ReadOnly,
			"destructiveHint": ann.Destructive,
			"idempotentHint":  ann.Idempotent,
			"openWorldHint":   ann.OpenWorld,
		},
	}
}

// canonicalJSON marshals with sorted keys and no HTML escaping.
func canonicalJSON(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}
