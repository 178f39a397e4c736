package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

type probePorts struct {
	Clock ports.Clock
	Rates ports.RateStore `port:"optional"`
}

func probeFamily(bind func(*settings.Settings, probePorts) core.Components) core.LegacyFamily[probePorts] {
	return core.LegacyFamily[probePorts]{
		ID: catalog.FamilyCore,
		Declare: func(*settings.Settings) core.Components {
			return core.Components{Tools: []catalog.ToolSpec{echoDef().Spec()}}
		},
		Bind: bind,
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
	return core.New(core.Deps{Settings: coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "core"}), Authorizer: portstest.AllowAll{},
		Rates: &portstest.Counter{}, Audit: &portstest.Audit{}, Tracer: portstest.NoopTracer{}, Metrics: portstest.NoopMetrics{},
		Clock: ports.SystemClock{}, Families: []core.Member{m}})
}

func TestFamilyBinding(t *testing.T) {
	served := probeFamily(func(*settings.Settings, probePorts) core.Components {
		return core.Components{Tools: []catalog.ToolSpec{echoTool()}}
	})
	t.Run("a missing port is a construction error naming it", func(t *testing.T) {
		_, err := build(t, served.With(probePorts{}))
		if !errors.Is(err, core.ErrMissingDependency) || !strings.Contains(err.Error(), "Clock") || strings.Contains(err.Error(), "Rates") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("an optional port may be nil", func(t *testing.T) {
		if _, err := build(t, served.With(probePorts{Clock: ports.SystemClock{}})); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("binding other tools than declared is refused", func(t *testing.T) {
		drifted := probeFamily(func(*settings.Settings, probePorts) core.Components { return core.Components{} })
		if _, err := build(t, drifted.With(probePorts{Clock: ports.SystemClock{}})); !errors.Is(err, catalog.ErrIncompleteSpec) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a tool left unbound is refused", func(t *testing.T) {
		unbound := probeFamily(func(*settings.Settings, probePorts) core.Components {
			return core.Components{Tools: []catalog.ToolSpec{echoDef().Spec()}}
		})
		if _, err := build(t, unbound.With(probePorts{Clock: ports.SystemClock{}})); !errors.Is(err, catalog.ErrIncompleteSpec) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a declared family lists its tools and runs none", func(t *testing.T) {
		app, err := build(t, served.Declared())
		if err != nil {
			t.Fatal(err)
		}
		if len(app.Tools()) != 1 {
			t.Fatalf("%d tools listed", len(app.Tools()))
		}
		_, err = app.Call(t.Context(), reader, "echo", map[string]any{"text": "x"})
		if te, ok := catalog.AsToolError(err); !ok || te.Kind != catalog.KindInternal {
			t.Fatalf("a declared tool ran: %v", err)
		}
	})
}
