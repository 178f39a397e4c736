package core

import (
	"context"
	"fmt"
	"slices"

	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/settings"
)

// Family declares a tool family once: the Config it reads from the
// settings, the ports P it needs, the server S its handlers share, and one
// list each of its tools, resources (templates included) and prompts.
//
// A listing (list-tools, the reference docs, the golden surface, the
// integrity digest) reads the lists without constructing anything; serving
// binds the same lists to S. There is nothing to keep in agreement: a
// listed component is a served one.
//
// A family is served when the profile selects its ID and its Gate (if any)
// holds for its Config; Serves answers that one question for everyone,
// adapters/wire included. It is then bound: every field of P must be set,
// or New refuses to build the App and names the missing port. A field
// tagged `port:"optional"` may be nil; a tool that needs it says so with
// FamilyTool.Needs, and is then served as not configured.
type Family[C, P, S any] struct {
	ID catalog.Family
	// The Config is filled from the settings by its fields' tags, each
	// naming the variable it holds (`setting:"ARROWHEAD_EXEC_ENABLED"`, see
	// settings.Fill); Configure, when set, then adds what no one variable
	// holds (a value derived from several). It must be cheap and pure: the
	// gate, Serves and the build each read the Config (a few times per
	// start, never per call). Handlers see only the Config and the ports
	// (both through S).
	Configure func(*settings.Settings, *C)
	// Gate, when set, must also hold for the family to be served (exec
	// needs ARROWHEAD_EXEC_ENABLED, for instance).
	Gate func(C) bool
	// GateDoc states Gate's condition for the reference documentation,
	// naming each variable it reads in backquotes ("`ARROWHEAD_EXEC_ENABLED`
	// is true"); set exactly when Gate is. A conformance test holds the two
	// in agreement.
	GateDoc string
	// Bounds, when set, supplies the "$name" schema placeholders that come
	// from the Config (limits an operator sets) to every tool of the
	// family. A constant bound belongs in the tool's own ToolDef.Bounds.
	Bounds func(C) catalog.Bounds
	// Serve builds the server the handlers share from the Config and the
	// ports, once, after the ports were checked.
	Serve func(C, P) S

	Tools     []FamilyTool[S]
	Resources []FamilyResource[S]
	Prompts   []FamilyPrompt[S]
}

// FamilyTool is one entry of a family's tool list (see Tool).
type FamilyTool[S any] struct {
	// in is the tool as the family lists it (catalog.Tool.In); bind serves
	// it from s; unready serves it as not configured with the refusal.
	in      func(catalog.Family, catalog.Bounds) catalog.ToolSpec
	bind    func(catalog.Family, catalog.Bounds, S) catalog.ToolSpec
	unready func(catalog.Family, catalog.Bounds, string) catalog.ToolSpec
	ready   func(S) bool
	refusal string
}

// Tool lists tool t, served by handler h: typically a method expression
// such as (*server).search, so a reader can jump from the list to the
// code that runs. The list gives t its family: its definition need not.
func Tool[S, In, Out any](t catalog.Tool[In, Out], h func(S, context.Context, catalog.Call, In) (*catalog.Reply[Out], error)) FamilyTool[S] {
	return FamilyTool[S]{
		in: func(f catalog.Family, b catalog.Bounds) catalog.ToolSpec { return t.In(f, b).Spec() },
		bind: func(f catalog.Family, b catalog.Bounds, s S) catalog.ToolSpec {
			return t.In(f, b).Bind(func(ctx context.Context, call catalog.Call, in In) (*catalog.Reply[Out], error) {
				return h(s, ctx, call, in)
			})
		},
		unready: func(f catalog.Family, b catalog.Bounds, refusal string) catalog.ToolSpec {
			return t.In(f, b).NotConfigured(refusal)
		},
	}
}

// Needs serves the tool only when ready holds for the family's server (an
// optional port is set, say); otherwise it is listed as usual and every
// valid call is refused as unavailable with refusal, which names the
// variable to set.
func (ft FamilyTool[S]) Needs(ready func(S) bool, refusal string) FamilyTool[S] {
	ft.ready, ft.refusal = ready, refusal
	return ft
}

func (ft FamilyTool[S]) served(f catalog.Family, b catalog.Bounds, s S) catalog.ToolSpec {
	if ft.ready != nil && !ft.ready(s) {
		return ft.unready(f, b, ft.refusal)
	}
	return ft.bind(f, b, s)
}

// FamilyResource is one entry of a family's resource list (see Resource).
type FamilyResource[S any] struct {
	decl     catalog.ResourceSpec
	handler  func(S, context.Context, catalog.ResourceCall) ([]catalog.ResourceContent, error)
	complete func(S, context.Context, catalog.CompletionCall) (catalog.Completion, error)
}

// Resource lists a resource or template: decl without Handler or Complete
// (the listing reads it as it is), served by handler and, when not nil,
// completed by complete.
func Resource[S any](decl catalog.ResourceSpec,
	handler func(S, context.Context, catalog.ResourceCall) ([]catalog.ResourceContent, error),
	complete func(S, context.Context, catalog.CompletionCall) (catalog.Completion, error),
) FamilyResource[S] {
	return FamilyResource[S]{decl: decl, handler: handler, complete: complete}
}

func (fr FamilyResource[S]) declared() catalog.ResourceSpec {
	r := fr.decl
	r.Handler = func(context.Context, catalog.ResourceCall) ([]catalog.ResourceContent, error) {
		return nil, catalog.ErrNotBound
	}
	if fr.complete != nil {
		r.Complete = func(context.Context, catalog.CompletionCall) (catalog.Completion, error) {
			return catalog.Completion{}, catalog.ErrNotBound
		}
	}
	return r
}

func (fr FamilyResource[S]) served(s S) catalog.ResourceSpec {
	r := fr.decl
	r.Handler = func(ctx context.Context, call catalog.ResourceCall) ([]catalog.ResourceContent, error) {
		return fr.handler(s, ctx, call)
	}
	if fr.complete != nil {
		r.Complete = func(ctx context.Context, call catalog.CompletionCall) (catalog.Completion, error) {
			return fr.complete(s, ctx, call)
		}
	}
	return r
}

// FamilyPrompt is one entry of a family's prompt list (see Prompt).
type FamilyPrompt[S any] struct {
	decl     catalog.PromptSpec
	handler  func(S, context.Context, catalog.PromptCall) (catalog.PromptResult, error)
	complete func(S, context.Context, catalog.CompletionCall) (catalog.Completion, error)
}

// Prompt lists a prompt: decl without Handler or Complete, served by
// handler and, when not nil, completed by complete.
func Prompt[S any](decl catalog.PromptSpec,
	handler func(S, context.Context, catalog.PromptCall) (catalog.PromptResult, error),
	complete func(S, context.Context, catalog.CompletionCall) (catalog.Completion, error),
) FamilyPrompt[S] {
	return FamilyPrompt[S]{decl: decl, handler: handler, complete: complete}
}

func (fp FamilyPrompt[S]) declared() catalog.PromptSpec {
	p := fp.decl
	p.Handler = func(context.Context, catalog.PromptCall) (catalog.PromptResult, error) {
		return catalog.PromptResult{}, catalog.ErrNotBound
	}
	if fp.complete != nil {
		p.Complete = func(context.Context, catalog.CompletionCall) (catalog.Completion, error) {
			return catalog.Completion{}, catalog.ErrNotBound
		}
	}
	return p
}

func (fp FamilyPrompt[S]) served(s S) catalog.PromptSpec {
	p := fp.decl
	p.Handler = func(ctx context.Context, call catalog.PromptCall) (catalog.PromptResult, error) {
		return fp.handler(s, ctx, call)
	}
	if fp.complete != nil {
		p.Complete = func(ctx context.Context, call catalog.CompletionCall) (catalog.Completion, error) {
			return fp.complete(s, ctx, call)
		}
	}
	return p
}

// With binds the family to its ports.
func (f Family[C, P, S]) With(p P) Member { return listed[C, P, S]{f: f, ports: p, bound: true} }

// Declared is the family unbound, for listings: its components refuse to
// run.
func (f Family[C, P, S]) Declared() Member { return listed[C, P, S]{f: f} }

// Serves reports whether s serves the family: the profile selects it and
// its gate holds. It is the one answer to that question; adapters/wire
// asks it before opening what the family's ports need.
func (f Family[C, P, S]) Serves(s *settings.Settings) bool {
	return slices.Contains(catalog.Profiles[s.Profile], f.ID) && f.gateOpen(s)
}

func (f Family[C, P, S]) gateOpen(s *settings.Settings) bool {
	c, err := f.Config(s)
	// A Config that cannot be filled opens the gate, so that building
	// the family reports why.
	return f.Gate == nil || err != nil || f.Gate(c)
}

// Config is the family's Config under s.
func (f Family[C, P, S]) Config(s *settings.Settings) (C, error) {
	var c C
	if err := s.Fill(&c); err != nil {
		return c, fmt.Errorf("%w: the %s family's Config: %w", catalog.ErrIncompleteSpec, f.ID, err)
	}
	if f.Configure != nil {
		f.Configure(s, &c)
	}
	return c, nil
}

func (f Family[C, P, S]) bounds(c C) catalog.Bounds {
	if f.Bounds == nil {
		return nil
	}
	return f.Bounds(c)
}

// listed is a Family as a Member: bound to its ports or declared only.
type listed[C, P, S any] struct {
	f     Family[C, P, S]
	ports P
	bound bool
}

func (l listed[C, P, S]) familyID() catalog.Family       { return l.f.ID }
func (l listed[C, P, S]) unbound() Member                { return listed[C, P, S]{f: l.f} }
func (l listed[C, P, S]) gate(s *settings.Settings) bool { return l.f.gateOpen(s) }
func (l listed[C, P, S]) gateDoc() (string, bool)        { return l.f.GateDoc, l.f.Gate != nil }

func (l listed[C, P, S]) components(s *settings.Settings) (Components, error) {
	f := l.f
	c, err := f.Config(s)
	if err != nil {
		return Components{}, err
	}
	b := f.bounds(c)
	var out Components
	if !l.bound {
		for _, t := range f.Tools {
			out.Tools = append(out.Tools, t.in(f.ID, b))
		}
		for _, r := range f.Resources {
			out.Resources = append(out.Resources, r.declared())
		}
		for _, p := range f.Prompts {
			out.Prompts = append(out.Prompts, p.declared())
		}
		return out, nil
	}
	if f.Serve == nil {
		return Components{}, fmt.Errorf("%w: the %s family has no Serve", catalog.ErrIncompleteSpec, f.ID)
	}
	if missing := missingPorts(l.ports); len(missing) > 0 {
		return Components{}, fmt.Errorf("%w: the %s family needs %v", ErrMissingDependency, f.ID, missing)
	}
	srv := f.Serve(c, l.ports)
	for _, t := range f.Tools {
		out.Tools = append(out.Tools, t.served(f.ID, b, srv))
	}
	for _, r := range f.Resources {
		out.Resources = append(out.Resources, r.served(srv))
	}
	for _, p := range f.Prompts {
		out.Prompts = append(out.Prompts, p.served(srv))
	}
	return out, nil
}

// Declare lists the family's components under s, unbound: what a listing
// or a test reads. Nothing is constructed and nothing runs. It panics on a
// Config whose tags name no variable, a mistake every start reports.
func (f Family[C, P, S]) Declare(s *settings.Settings) Components {
	c, err := f.Declared().components(s)
	if err != nil {
		panic(err)
	}
	return c
}
