package core_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

// probeConfig is the probe family's Config: the one setting it reads.
type probeConfig struct{ maxText int }

type probePorts struct {
	Clock ports.Clock
	Rates ports.RateStore `port:"optional"`
}

// probeServer is what the probe's handlers share.
type probeServer struct {
	config probeConfig
	ports  probePorts
}

type probeInput struct {
	Text string `json:"text" description:"Text." maxLength:"$max_text"`
}

var (
	probeEcho = catalog.Define[probeInput, echoOutput](catalog.ToolDef{
		Name: "echo", Family: catalog.FamilyCore, Scope: "tools:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CALCULATE_PER_MINUTE", Default: 120},
		Description: "Echo text. Example: echo(text=\"hi\")",
	})
	probeRated = catalog.Define[probeInput, echoOutput](catalog.ToolDef{
		Name: "rated_echo", Family: catalog.FamilyCore, Scope: "tools:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CALCULATE_PER_MINUTE", Default: 120},
		Description: "Echo text when the rate store is set. Example: rated_echo(text=\"hi\")",
	})
)

const msgNoRates = "rated_echo is not configured (ARROWHEAD_PROBE_RATES)."

func (p *probeServer) echo(_ context.Context, _ catalog.Call, in probeInput) (*catalog.Reply[echoOutput], error) {
	return catalog.Answer(echoOutput{Text: in.Text}, in.Text), nil
}

func (p *probeServer) readNote(context.Context, catalog.ResourceCall) ([]catalog.ResourceContent, error) {
	return []catalog.ResourceContent{{URI: "probe://note", MimeType: "text/plain", Text: "note"}}, nil
}

func (p *probeServer) complete(context.Context, catalog.CompletionCall) (catalog.Completion, error) {
	return catalog.Completion{Values: []string{"a"}}, nil
}

func (p *probeServer) greet(context.Context, catalog.PromptCall) (catalog.PromptResult, error) {
	return catalog.PromptResult{Messages: []catalog.PromptMessage{{Role: "user", Text: "hello"}}}, nil
}

// probeFamily is a family of the new shape with every kind of entry: a
// Config-derived bound, an optional port a tool Needs, a resource and a
// prompt with completions, and a gate on its Config.
func probeFamily() core.Family[probeConfig, probePorts, *probeServer] {
	return core.Family[probeConfig, probePorts, *probeServer]{
		ID:        catalog.FamilyCore,
		Configure: func(s *settings.Settings, c *probeConfig) { c.maxText = s.ExpressionMaxLength },
		Gate:      func(c probeConfig) bool { return c.maxText > 10 },
		GateDoc:   "`ARROWHEAD_EXPRESSION_MAX_LENGTH` is over 10",
		Bounds:    func(c probeConfig) catalog.Bounds { return catalog.Bounds{"max_text": c.maxText} },
		Serve:     func(c probeConfig, p probePorts) *probeServer { return &probeServer{config: c, ports: p} },
		Tools: []core.FamilyTool[*probeServer]{
			core.Tool(probeEcho, (*probeServer).echo),
			core.Tool(probeRated, (*probeServer).echo).Needs(func(s *probeServer) bool { return s.ports.Rates != nil }, msgNoRates),
		},
		Resources: []core.FamilyResource[*probeServer]{
			core.Resource(catalog.ResourceSpec{Name: "note", URI: "probe://note", Description: "A note.", MimeType: "text/plain", Scope: "tools:read"},
				(*probeServer).readNote, (*probeServer).complete),
		},
		Prompts: []core.FamilyPrompt[*probeServer]{
			core.Prompt(catalog.PromptSpec{Name: "greet", Description: "Greet.", Scope: "tools:read"}, (*probeServer).greet, (*probeServer).complete),
		},
	}
}

func echoDef() catalog.Tool[echoInput, echoOutput] {
	return catalog.Define[echoInput, echoOutput](catalog.ToolDef{
		Name: "echo", Family: catalog.FamilyCore, Scope: "tools:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CALCULATE_PER_MINUTE", Default: 120},
		Description: "Echo text. Example: echo(text=\"hi\")",
	})
}

func build(t *testing.T, m core.Member) (*core.App, error) {
	t.Helper()
	return buildUnder(t, map[string]string{"ARROWHEAD_PROFILE": "core"}, m)
}

func buildUnder(t *testing.T, env map[string]string, m core.Member) (*core.App, error) {
	t.Helper()
	return core.New(core.Deps{Settings: coretest.Settings(t, env), Authorizer: portstest.AllowAll{},
		Rates: &portstest.Counter{}, Audit: &portstest.Audit{}, Tracer: nop.Tracer{}, Metrics: nop.Metrics{},
		Clock: ports.SystemClock{}, Families: []core.Member{m}})
}

// TestFamilyConfigFromTags: a Config is filled from its fields' setting
// tags, and a tag naming no variable stops the build (and a listing)
// rather than leaving the field zero.
func TestFamilyConfigFromTags(t *testing.T) {
	type tagged struct {
		MaxText int `setting:"ARROWHEAD_EXPRESSION_MAX_LENGTH"`
	}
	f := core.Family[tagged, probePorts, *probeServer]{
		ID:     catalog.FamilyCore,
		Bounds: func(c tagged) catalog.Bounds { return catalog.Bounds{"max_text": c.MaxText} },
		Serve:  func(tagged, probePorts) *probeServer { return &probeServer{} },
		Tools:  []core.FamilyTool[*probeServer]{core.Tool(probeEcho, (*probeServer).echo)},
	}
	s := coretest.Settings(t, map[string]string{"ARROWHEAD_EXPRESSION_MAX_LENGTH": "9"})
	if c, err := f.Config(s); err != nil || c.MaxText != 9 {
		t.Fatalf("config %+v, %v", c, err)
	}
	type mistagged struct {
		MaxText int `setting:"ARROWHEAD_EXPRESSION_MAX_LENGHT"`
	}
	g := core.Family[mistagged, probePorts, *probeServer]{ID: catalog.FamilyCore,
		Serve: func(mistagged, probePorts) *probeServer { return &probeServer{} }}
	if _, err := build(t, g.With(probePorts{Clock: ports.SystemClock{}})); !errors.Is(err, catalog.ErrIncompleteSpec) ||
		!strings.Contains(err.Error(), "ARROWHEAD_EXPRESSION_MAX_LENGHT") {
		t.Fatalf("a mistagged Config built: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a mistagged Config was declared")
		}
	}()
	g.Declare(s)
}

func TestFamilyBinding(t *testing.T) {
	f := probeFamily()
	clock := probePorts{Clock: ports.SystemClock{}}
	t.Run("a missing port is a construction error naming it", func(t *testing.T) {
		_, err := build(t, f.With(probePorts{}))
		if !errors.Is(err, core.ErrMissingDependency) || !strings.Contains(err.Error(), "Clock") || strings.Contains(err.Error(), "Rates") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a family without Serve is refused", func(t *testing.T) {
		g := probeFamily()
		g.Serve = nil
		if _, err := build(t, g.With(clock)); !errors.Is(err, catalog.ErrIncompleteSpec) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("an optional port may be nil, and the tool that Needs it is served as not configured", func(t *testing.T) {
		app, err := build(t, f.With(clock))
		if err != nil {
			t.Fatal(err)
		}
		if len(app.Tools()) != 2 {
			t.Fatalf("%d tools served, want both listed", len(app.Tools()))
		}
		res, err := app.Call(t.Context(), reader, "echo", map[string]any{"text": "hi"})
		if err != nil || res.Text != "hi" {
			t.Fatalf("echo: %+v, %v", res, err)
		}
		_, err = app.Call(t.Context(), reader, "rated_echo", map[string]any{"text": "hi"})
		if te, ok := catalog.AsToolError(err); !ok || te.Kind != catalog.KindUnavailable || te.Message != msgNoRates {
			t.Fatalf("rated_echo without its port: %v", err)
		}
	})
	t.Run("a tool whose optional port is set is served", func(t *testing.T) {
		app, err := build(t, f.With(probePorts{Clock: ports.SystemClock{}, Rates: &portstest.Counter{}}))
		if err != nil {
			t.Fatal(err)
		}
		if res, err := app.Call(t.Context(), reader, "rated_echo", map[string]any{"text": "hi"}); err != nil || res.Text != "hi" {
			t.Fatalf("rated_echo: %+v, %v", res, err)
		}
	})
	t.Run("the family's bounds come from its Config", func(t *testing.T) {
		app, err := buildUnder(t, map[string]string{"ARROWHEAD_PROFILE": "core", "ARROWHEAD_EXPRESSION_MAX_LENGTH": "12"}, f.With(clock))
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range app.Tools() {
			if m := tool.Spec.Input().Properties["text"].MaxLength; m == nil || *m != 12 {
				t.Errorf("%s: maxLength %v, want the Config's 12", tool.Spec.Name(), m)
			}
		}
		_, err = app.Call(t.Context(), reader, "echo", map[string]any{"text": strings.Repeat("x", 13)})
		if te, ok := catalog.AsToolError(err); !ok || te.Kind != catalog.KindValidation {
			t.Fatalf("an argument over the Config's bound: %v", err)
		}
	})
	t.Run("served resources and prompts run their handlers", func(t *testing.T) {
		app, err := build(t, f.With(clock))
		if err != nil {
			t.Fatal(err)
		}
		rc, err := app.ReadResource(t.Context(), reader, "probe://note")
		if err != nil || len(rc) != 1 || rc[0].Text != "note" {
			t.Fatalf("resource: %+v, %v", rc, err)
		}
		pr, err := app.GetPrompt(t.Context(), reader, "greet", nil)
		if err != nil || len(pr.Messages) != 1 || pr.Messages[0].Text != "hello" {
			t.Fatalf("prompt: %+v, %v", pr, err)
		}
	})
	t.Run("a declared family lists its components and runs none", func(t *testing.T) {
		app, err := build(t, f.Declared())
		if err != nil {
			t.Fatal(err)
		}
		note := slices.IndexFunc(app.Resources(), func(r catalog.ResourceSpec) bool { return r.Name == "note" })
		greet := slices.IndexFunc(app.Prompts(), func(p catalog.PromptSpec) bool { return p.Name == "greet" })
		if len(app.Tools()) != 2 || note < 0 || greet < 0 {
			t.Fatalf("%d tools listed, note at %d, greet at %d", len(app.Tools()), note, greet)
		}
		if _, err := app.ReadResource(t.Context(), reader, "probe://note"); err == nil {
			t.Fatal("a declared resource was read")
		}
		_, err = app.Call(t.Context(), reader, "echo", map[string]any{"text": "x"})
		if te, ok := catalog.AsToolError(err); !ok || te.Kind != catalog.KindInternal {
			t.Fatalf("a declared tool ran: %v", err)
		}
	})
	t.Run("declared resources and prompts refuse as not bound instead of panicking", func(t *testing.T) {
		c := f.Declare(coretest.Settings(t, nil))
		if len(c.Tools) != 2 || len(c.Resources) != 1 || len(c.Prompts) != 1 {
			t.Fatalf("declared %d tools, %d resources, %d prompts", len(c.Tools), len(c.Resources), len(c.Prompts))
		}
		for _, tool := range c.Tools {
			if tool.Bound() {
				t.Errorf("declared tool %s is bound", tool.Name())
			}
		}
		r, p := c.Resources[0], c.Prompts[0]
		if _, err := r.Handler(t.Context(), catalog.ResourceCall{}); !errors.Is(err, catalog.ErrNotBound) {
			t.Errorf("declared resource: %v", err)
		}
		if _, err := r.Complete(t.Context(), catalog.CompletionCall{}); !errors.Is(err, catalog.ErrNotBound) {
			t.Errorf("declared resource completion: %v", err)
		}
		if _, err := p.Handler(t.Context(), catalog.PromptCall{}); !errors.Is(err, catalog.ErrNotBound) {
			t.Errorf("declared prompt: %v", err)
		}
		if _, err := p.Complete(t.Context(), catalog.CompletionCall{}); !errors.Is(err, catalog.ErrNotBound) {
			t.Errorf("declared prompt completion: %v", err)
		}
	})
}

// TestFamilyServes: Serves is the profile and the gate together, and New
// serves exactly the families it answers true for.
func TestFamilyServes(t *testing.T) {
	f := probeFamily()
	if id, doc, gated := core.GateOf(f.Declared()); id != catalog.FamilyCore || !gated || doc != f.GateDoc {
		t.Errorf("GateOf: %s %q %v", id, doc, gated)
	}
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{"ARROWHEAD_PROFILE": "core"}, true},
		{map[string]string{"ARROWHEAD_PROFILE": "core", "ARROWHEAD_EXPRESSION_MAX_LENGTH": "10"}, false},
		{map[string]string{"ARROWHEAD_PROFILE": "docs"}, true},
		{map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_EXPRESSION_MAX_LENGTH": "10"}, false},
	} {
		if got := f.Serves(coretest.Settings(t, tc.env)); got != tc.want {
			t.Errorf("%v: Serves = %v, want %v", tc.env, got, tc.want)
		}
		app, err := buildUnder(t, tc.env, f.With(probePorts{Clock: ports.SystemClock{}}))
		if err != nil {
			t.Fatal(err)
		}
		if served := len(app.Tools()) > 0; served != tc.want {
			t.Errorf("%v: served = %v, want %v", tc.env, served, tc.want)
		}
	}
	// A family the profile leaves out is not served whatever its gate.
	other := probeFamily()
	other.ID = catalog.FamilyExec
	if other.Serves(coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "docs"})) {
		t.Error("a family outside the profile is served")
	}
}

// TestAssembledFamily: coretest's pre-built components are served as they
// are, and an unbound tool among them is refused.
func TestAssembledFamily(t *testing.T) {
	if _, err := build(t, core.Assembled(catalog.FamilyCore, core.Components{Tools: []catalog.ToolSpec{echoTool()}})); err != nil {
		t.Fatal(err)
	}
	unbound := core.Assembled(catalog.FamilyCore, core.Components{Tools: []catalog.ToolSpec{echoDef().Spec()}})
	if _, err := build(t, unbound); !errors.Is(err, catalog.ErrIncompleteSpec) {
		t.Fatalf("got %v", err)
	}
	if _, err := build(t, core.Declared([]core.Member{unbound})[0]); err != nil {
		t.Fatalf("a listing of an unbound tool: %v", err)
	}
}
