// Package core is the embeddable Arrowhead application: the catalog of
// tools, resources and prompts behind one guard chain. Every door (stdio,
// streamable HTTP, or a Go program calling App.Call directly) runs the same
// chain: span, audit, kill switch, rate limit, scope check, handler, error
// boundary, one audit line, span end.
//
// core imports only the standard library and ports; adapters supply the
// outside world through the Deps struct, and each tool family through the
// ports its Family binds.
package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/internal/chain"
	"github.com/arrowhead-go/arrowhead/core/security"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
)

const defaultLimitVar = settings.DefaultToolLimitVar

// Limits on what a single call may carry before any tool sees it.
const (
	// MaxArgumentBytes bounds the raw arguments object of one call.
	MaxArgumentBytes = 4 << 20
	// MaxArgumentDepth bounds nesting in the arguments object, checked
	// before it is parsed.
	MaxArgumentDepth = 32
)

// Deps are the adapters the application runs on. Every field is required;
// New refuses a nil dependency rather than run with an unguarded default.
type Deps struct {
	Settings   *settings.Settings
	Authorizer ports.Authorizer
	Rates      ports.RateStore
	Audit      ports.AuditSink
	Tracer     ports.Tracer
	Metrics    ports.Metrics
	Clock      ports.Clock
	// Scanner is the process's secret scanner, shared with the families
	// that redact on their own so placeholder tags agree. Nil builds one
	// keyed at random that knows the settings' secret values: never none.
	Scanner *security.Scanner
	// KillBoard keeps the live kill-switch rules every replica enforces;
	// nil is an in-process board (this process only).
	KillBoard ports.KillBoard
	// CanaryTokens are planted honeytoken values (from the canary file)
	// watched for beside ARROWHEAD_CANARY_TOKENS.
	CanaryTokens []string
	// Signer signs the attested surface (arrowhead://attestation). wire
	// always provides the server's key. Nil is an explicit choice for an
	// embedder with no key: the attestation and key resources are not
	// registered and Attest returns ErrNoSigner, while the unsigned
	// manifest digest (ManifestDigest) is still served.
	Signer ports.Signer
	// Version is the server version the manifest attests to; empty is the
	// main module's version from the build information.
	Version string
	// Families are the tool families, each bound to its ports (see
	// Family). Only those the profile selects and whose gate is open are
	// built; building one with a port missing is an error.
	Families []Member
}

type toolEntry struct {
	spec      catalog.ToolSpec
	perMinute int
	// killNames is what the kill switch matches the tool by: built once
	// here rather than on every call.
	killNames []string
}

// App is the guarded application. It is safe for concurrent use.
type App struct {
	settings   *settings.Settings
	authorizer ports.Authorizer
	rates      ports.RateStore
	audit      ports.AuditSink
	tracer     ports.Tracer
	metrics    ports.Metrics
	clock      ports.Clock
	scanner    *security.Scanner

	tools     map[string]toolEntry
	toolOrder []string
	resources []catalog.ResourceSpec
	prompts   map[string]catalog.PromptSpec

	killSwitch atomic.Pointer[map[string]bool]

	// egress is the exfiltration guard (egress.go); nil when it is off.
	egress *egressGuard
	// board and liveRules are the live kill switch (killswitch.go).
	board     ports.KillBoard
	liveRules atomic.Pointer[[]ports.KillRule]
	kills     liveKills
	// canaries are the planted honeytokens; tripFor is how long a trip
	// takes egress away (canary.go).
	canaries *security.Canaries
	tripFor  time.Duration
	// attestor caches each distinct visible surface's manifest, digest
	// and signature (attestation.go).
	attestor *attestor
	// promptOrder is every prompt name, sorted, fixed at New.
	promptOrder []string
}

// ErrMissingDependency is returned by New when a dependency is nil.
var ErrMissingDependency = errors.New("missing dependency")

// New builds the application. Only families in the active profile whose
// gate is open are built and registered.
func New(d Deps) (*App, error) {
	switch {
	case d.Settings == nil:
		return nil, fmt.Errorf("%w: settings", ErrMissingDependency)
	case d.Authorizer == nil:
		return nil, fmt.Errorf("%w: authorizer", ErrMissingDependency)
	case d.Rates == nil:
		return nil, fmt.Errorf("%w: rate store", ErrMissingDependency)
	case d.Audit == nil:
		return nil, fmt.Errorf("%w: audit sink", ErrMissingDependency)
	case d.Tracer == nil:
		return nil, fmt.Errorf("%w: tracer", ErrMissingDependency)
	case d.Metrics == nil:
		return nil, fmt.Errorf("%w: metrics", ErrMissingDependency)
	case d.Clock == nil:
		return nil, fmt.Errorf("%w: clock", ErrMissingDependency)
	}
	a := &App{
		settings:   d.Settings,
		authorizer: d.Authorizer,
		rates:      d.Rates,
		audit:      d.Audit,
		tracer:     d.Tracer,
		metrics:    d.Metrics,
		clock:      d.Clock,
		scanner:    d.Scanner,
		tools:      map[string]toolEntry{},
		prompts:    map[string]catalog.PromptSpec{},
		board:      d.KillBoard,
		tripFor:    time.Duration(d.Settings.CanaryTripSeconds) * time.Second,
		attestor:   newAttestor(d.Signer, d.Version),
	}
	if a.scanner == nil {
		a.scanner = security.NewRandomScanner().WithKnown(d.Settings.SecretValues()...)
	}
	eg, err := newEgressGuard(d.Settings, d.Rates)
	if err != nil {
		return nil, err
	}
	a.egress = eg
	if a.board == nil {
		a.board = NewLocalKillBoard(d.Clock)
	}
	if a.tripFor <= 0 {
		a.tripFor = DefaultCanaryTrip
	}
	canaries, err := security.NewCanaries(append(slices.Clone(d.Settings.CanaryTokens), d.CanaryTokens...))
	if err != nil {
		return nil, fmt.Errorf("ARROWHEAD_CANARY_TOKENS: %w", err)
	}
	a.canaries = canaries
	profile := catalog.Profiles[d.Settings.Profile]
	for _, m := range d.Families {
		if !slices.Contains(profile, m.familyID()) || !m.gate(d.Settings) {
			continue
		}
		c, err := m.components(d.Settings)
		if err != nil {
			return nil, err
		}
		if err := a.register(c); err != nil {
			return nil, err
		}
	}
	sort.Strings(a.toolOrder)
	a.resources = append(a.resources, a.integrityResource())
	if d.Signer != nil {
		a.resources = append(a.resources, a.attestationResources()...)
	}
	a.promptOrder = a.promptNames()
	a.SetDisabled(d.Settings.DisabledTools)
	return a, nil
}

// register adds one family's components, refusing an incomplete or
// duplicate one.
func (a *App) register(c Components) error {
	for _, t := range c.Tools {
		if err := t.Check(); err != nil {
			return err
		}
		if _, dup := a.tools[t.Name()]; dup {
			return fmt.Errorf("duplicate tool %q", t.Name())
		}
		a.tools[t.Name()] = toolEntry{spec: t, perMinute: a.settings.Limit(t.Ceiling().Var, t.Ceiling().Default), killNames: []string{t.Name()}}
		a.toolOrder = append(a.toolOrder, t.Name())
	}
	for _, r := range c.Resources {
		if err := checkResource(r); err != nil {
			return err
		}
		a.resources = append(a.resources, r)
	}
	for _, p := range c.Prompts {
		if p.Name == "" || p.Handler == nil || p.Scope == "" {
			return fmt.Errorf("%w: prompt %q needs a name, scope and handler", catalog.ErrIncompleteSpec, p.Name)
		}
		a.prompts[p.Name] = p
	}
	return nil
}

func checkResource(r catalog.ResourceSpec) error {
	if r.Name == "" || r.Handler == nil || (r.URI == "") == (r.Template == "") {
		return fmt.Errorf("%w: resource %q needs a name, a handler and exactly one of URI or template", catalog.ErrIncompleteSpec, r.Name)
	}
	if r.Template != "" && r.Match == nil {
		return fmt.Errorf("%w: resource template %q needs a matcher", catalog.ErrIncompleteSpec, r.Name)
	}
	return nil
}

// SetDisabled replaces the kill-switch set: names of tools, prompts,
// resources (by name, URI or URI template) taken out of service.
func (a *App) SetDisabled(names []string) {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[strings.TrimSpace(n)] = true
	}
	a.killSwitch.Store(&m)
}

func (a *App) disabled(names ...string) bool {
	m := *a.killSwitch.Load()
	for _, n := range names {
		if n != "" && m[n] {
			return true
		}
	}
	return false
}

// Settings returns the effective settings.
func (a *App) Settings() *settings.Settings { return a.settings }

// ToolInfo is one tool as a caller may see it.
type ToolInfo struct {
	Spec      catalog.ToolSpec
	PerMinute int
}

// Tools returns every registered tool regardless of caller, kill switch
// included, in name order. The CLI listing and the transport registration use
// it; callers see ListTools.
func (a *App) Tools() []ToolInfo {
	out := make([]ToolInfo, 0, len(a.toolOrder))
	for _, n := range a.toolOrder {
		e := a.tools[n]
		out = append(out, ToolInfo{Spec: e.spec, PerMinute: e.perMinute})
	}
	return out
}

// ListTools returns the tools p may see: registered, not disabled, and
// within p's scopes.
func (a *App) ListTools(_ context.Context, p ports.Principal) []ToolInfo {
	var out []ToolInfo
	for _, t := range a.Tools() {
		if a.Visible(p, ports.ComponentTool, t.Spec.Name()) {
			out = append(out, t)
		}
	}
	return out
}

// Visible reports whether p may see the named component in a listing.
func (a *App) Visible(p ports.Principal, kind ports.ComponentKind, name string) bool {
	if !p.Authenticated {
		return false
	}
	switch kind {
	case ports.ComponentTool:
		e, ok := a.tools[name]
		return ok && !a.disabled(name) && !a.killedBy(p, a.toolTarget(name)) && p.HasScope(e.spec.Scope())
	case ports.ComponentPrompt:
		s, ok := a.prompts[name]
		return ok && !a.disabled(name) && !a.killedBy(p, killTarget{names: []string{name}}) && p.HasScope(s.Scope)
	case ports.ComponentResource:
		for _, r := range a.resources {
			if r.Name == name || r.URI == name || r.Template == name {
				names := []string{r.Name, r.URI, r.Template}
				return !a.disabled(names...) && !a.killedBy(p, killTarget{names: names}) && (r.Scope == "" || p.HasScope(r.Scope))
			}
		}
	}
	return false
}

// CallOption adjusts one call.
type CallOption func(*callOptions)

type callOptions struct {
	carrier    ports.TraceCarrier
	caps       catalog.ClientCaps
	inputs     map[string]catalog.InputAnswer
	inputState string
	progress   func(done, total float64, message string)
}

func applyOptions(opts []CallOption) callOptions {
	var o callOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithTraceContext joins the caller's W3C trace context.
func WithTraceContext(c ports.TraceCarrier) CallOption {
	return func(o *callOptions) { o.carrier = c }
}

// WithClientCaps declares what the calling client supports.
func WithClientCaps(c catalog.ClientCaps) CallOption {
	return func(o *callOptions) { o.caps = c }
}

// WithInputs passes the client's answers to earlier input requests.
func WithInputs(answers map[string]catalog.InputAnswer, state string) CallOption {
	return func(o *callOptions) { o.inputs, o.inputState = answers, state }
}

// WithProgress reports progress to a client that asked for it.
func WithProgress(fn func(done, total float64, message string)) CallOption {
	return func(o *callOptions) { o.progress = fn }
}

// Call runs the named tool as p through the guard chain. args is a JSON
// object as json.RawMessage, []byte or string, or any other value that
// marshals to one (a map or a struct), marshalled once: the tool's input
// is decoded from these bytes.
// The error is always nil or a *catalog.ToolError.
func (a *App) Call(ctx context.Context, p ports.Principal, name string, args any, opts ...CallOption) (catalog.Result, error) {
	o := applyOptions(opts)
	raw, err := rawArgs(args)
	var parsed map[string]any
	if err == nil {
		parsed, err = decodeArgs(raw)
	}
	e, known := a.tools[name]
	adm := admission{
		kind:       ports.ComponentTool,
		name:       "unknown",
		known:      known,
		unknownMsg: catalog.MsgUnknownTool,
		carrier:    o.carrier,
	}
	if known {
		adm.name = name
		adm.killNames = e.killNames
		adm.target = killTarget{names: adm.killNames, family: e.spec.Family(), egress: e.spec.Annotations().OpenWorld}
		adm.scope = e.spec.Scope()
		adm.perMinute = e.perMinute
		adm.shapes = argShapes(e.spec.Input(), parsed, raw, err)
		if parsed != nil && a.canaries.Len() > 0 {
			// Copies, so the closure moves only them to the heap, and only
			// when canaries are armed.
			args, schema := parsed, e.spec.Input()
			adm.canary = func() (canaryHit, bool) { return a.scanArgs(args, schema) }
		}
	}
	argErr := err
	var result catalog.Result
	var verdict egressVerdict
	adm.egressNote = &verdict.note
	err = a.guard(ctx, p, adm, func(ctx context.Context) error {
		if argErr != nil {
			return argErr
		}
		call := catalog.Call{
			Principal:  p,
			Caps:       o.caps,
			Inputs:     o.inputs,
			InputState: o.inputState,
			Progress:   o.progress,
		}
		if a.egress != nil && e.spec.Annotations().OpenWorld {
			// The assist family's requests go to the operator's model, not
			// the open world (see repoKinds).
			modelBound := e.spec.Family() == catalog.FamilyAssist
			v, err := a.egress.check(ctx, p, name, modelBound, raw, parsed, &call)
			verdict = v
			if err != nil {
				return err
			}
			if v.confirmed {
				verdict.note = egressNoteConfirmed
			}
		}
		// Admitted: the only place a tool's handler runs (see
		// core/internal/chain).
		r, err := e.spec.Invoke(ctx, chain.Admit(), call, raw, parsed)
		if err != nil {
			return err
		}
		// Redacted before anything else sees it: the labels and the
		// egress guard's marks describe what the caller receives.
		if r, err = a.redactResult(r); err != nil {
			return err
		}
		if r.NeedInput != nil {
			a.egress.carryAcceptance(ctx, verdict, r.NeedInput)
			result = r
			return nil
		}
		r.Labels, err = a.egress.observe(ctx, p, func(fn func(key, s string)) {
			// The catalog walked these bytes as it encoded them: they are
			// well formed, so there is no error to see.
			_ = catalog.EachString(r.JSON, fn)
			fn("", r.Text)
		})
		result = r
		return err
	})
	if verdict.ask != nil {
		// Held for confirmation: the audit line says egress_confirm; the
		// client gets the question.
		return catalog.Result{NeedInput: verdict.ask}, nil
	}
	if err != nil {
		return catalog.Result{}, err
	}
	return result, nil
}

func rawArgs(args any) (json.RawMessage, error) {
	var raw []byte
	switch v := args.(type) {
	case nil:
		raw = []byte("{}")
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	case string:
		raw = []byte(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, catalog.Invalid("Arguments must be a JSON object.")
		}
		raw = b
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	if len(raw) > MaxArgumentBytes {
		return nil, catalog.Invalid("Arguments exceed the %d byte limit.", MaxArgumentBytes)
	}
	return raw, nil
}

// decodeArgs parses the arguments object after bounding its nesting depth,
// so a deeply nested payload is refused before the parser walks it.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	if jsonDepth(raw) > MaxArgumentDepth {
		return nil, catalog.Invalid("Arguments are nested more than %d levels deep.", MaxArgumentDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, catalog.Invalid("Arguments must be a JSON object.")
	}
	if dec.More() {
		return nil, catalog.Invalid("Arguments must be a single JSON object.")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, catalog.Invalid("Arguments must be a JSON object.")
	}
	return m, nil
}

// jsonDepth returns the maximum bracket nesting of a JSON text, ignoring
// brackets inside strings.
func jsonDepth(b []byte) int {
	depth, maxDepth := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > maxDepth {
				maxDepth = depth
			}
		case '}', ']':
			depth--
		}
	}
	return maxDepth
}
