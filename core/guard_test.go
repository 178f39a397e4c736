package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arrowhead-go/arrowhead/core"
	"github.com/arrowhead-go/arrowhead/core/catalog"
	"github.com/arrowhead-go/arrowhead/core/coretest"
	"github.com/arrowhead-go/arrowhead/core/settings"
	"github.com/arrowhead-go/arrowhead/core/tools/coretools"
	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/nop"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

const canary = "CANARY-7f3a9c-never-log-me"

type fixture struct {
	app    *core.App
	audit  *portstest.Audit
	tracer *portstest.Tracer
	rates  *portstest.Counter
}

type echoInput struct {
	Text string `json:"text" description:"Text." maxLength:"64"`
}

type echoOutput struct {
	Text string `json:"text" description:"Text."`
}

// echoTool echoes its argument; behaviours are selected by the argument.
func echoTool() catalog.ToolSpec {
	return catalog.Define[echoInput, echoOutput](catalog.ToolDef{
		Name:        "echo",
		Family:      catalog.FamilyCore,
		Scope:       "tools:read",
		Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CALCULATE_PER_MINUTE", Default: 120},
		Description: "Echo text. Example: echo(text=\"hi\")",
	}).Bind(func(_ context.Context, _ catalog.Call, in echoInput) (*catalog.Reply[echoOutput], error) {
		switch {
		case strings.HasPrefix(in.Text, "panic"):
			panic("boom " + in.Text)
		case strings.HasPrefix(in.Text, "fail"):
			return nil, fmt.Errorf("driver said: %s at /etc/secret", in.Text)
		case strings.HasPrefix(in.Text, "deliberate"):
			return nil, catalog.Failed("Upstream answered badly.")
		}
		return catalog.Answer(echoOutput{Text: in.Text}, in.Text), nil
	})
}

func newFixture(t testing.TB, env map[string]string) fixture {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["ARROWHEAD_PROFILE"]; !ok {
		env["ARROWHEAD_PROFILE"] = "core"
	}
	f := fixture{audit: &portstest.Audit{}, tracer: &portstest.Tracer{}, rates: &portstest.Counter{}}
	app, err := core.New(core.Deps{
		Settings:   coretest.Settings(t, env),
		Authorizer: portstest.AllowAll{},
		Rates:      f.rates,
		Audit:      f.audit,
		Tracer:     f.tracer,
		Metrics:    nop.Metrics{},
		Clock:      ports.SystemClock{},
		Families:   []core.Member{coretest.Tools(echoTool())},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.app = app
	return f
}

var reader = ports.NewPrincipal("alice", "tools:read")

func TestCallRefusalKindsAreDistinct(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		p       ports.Principal
		tool    string
		args    string
		kind    catalog.RefusalKind
		status  string
		message string
	}{
		{"ok", nil, reader, "echo", `{"text":"hi"}`, "", ports.StatusOK, ""},
		{"unknown tool", nil, reader, "nope", `{}`, catalog.KindUnknown, ports.StatusRefused, catalog.MsgUnknownTool},
		{"missing scope is unknown", nil, ports.NewPrincipal("bob", "docs:read"), "echo", `{"text":"hi"}`, catalog.KindUnknown, ports.StatusRefused, catalog.MsgUnknownTool},
		{"anonymous", nil, ports.Anonymous(), "echo", `{"text":"hi"}`, catalog.KindUnauthenticated, ports.StatusRefused, catalog.MsgUnknownTool},
		{"disabled", map[string]string{"ARROWHEAD_DISABLED_TOOLS": "echo"}, reader, "echo", `{"text":"hi"}`, catalog.KindDisabled, ports.StatusRefused, catalog.MsgDisabled},
		{"validation wrong type", nil, reader, "echo", `{"text":5}`, catalog.KindValidation, ports.StatusRefused, "Argument 'text' must be a string."},
		{"validation missing", nil, reader, "echo", `{}`, catalog.KindValidation, ports.StatusRefused, "Argument 'text' is required."},
		{"validation extra key", nil, reader, "echo", `{"text":"a","` + canary + `":1}`, catalog.KindValidation, ports.StatusRefused, "Arguments has an unexpected property."},
		{"validation not object", nil, reader, "echo", `[1]`, catalog.KindValidation, ports.StatusRefused, "Arguments must be a JSON object."},
		{"validation malformed", nil, reader, "echo", `{"text":"hi"`, catalog.KindValidation, ports.StatusRefused, "Arguments must be a JSON object."},
		{"validation two objects", nil, reader, "echo", `{"text":"hi"} {}`, catalog.KindValidation, ports.StatusRefused, "Arguments must be a single JSON object."},
		// encoding/json's Decoder.More lets a stray closing bracket by; the
		// typed decode does not.
		{"stray closing bracket", nil, reader, "echo", `{"text":"hi"}]`, catalog.KindValidation, ports.StatusRefused, "Arguments do not fit the tool's input type."},
		{"internal masked", nil, reader, "echo", `{"text":"fail ` + canary + `"}`, catalog.KindInternal, ports.StatusError, catalog.MsgInternal},
		{"panic masked", nil, reader, "echo", `{"text":"panic ` + canary + `"}`, catalog.KindInternal, ports.StatusError, catalog.MsgInternal},
		{"deliberate verbatim", nil, reader, "echo", `{"text":"deliberate"}`, catalog.KindFailed, ports.StatusError, "Upstream answered badly."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.env)
			_, err := f.app.Call(t.Context(), tc.p, tc.tool, json.RawMessage(tc.args))
			recs := f.audit.Records()
			if len(recs) != 1 {
				t.Fatalf("want exactly one audit line, got %d", len(recs))
			}
			rec := recs[0]
			if rec.Status != tc.status || rec.Refusal != string(tc.kind) {
				t.Fatalf("audit status/refusal = %q/%q, want %q/%q", rec.Status, rec.Refusal, tc.status, tc.kind)
			}
			if len(f.tracer.Spans) != 1 || !f.tracer.Spans[0].Ended || f.tracer.Spans[0].Status != tc.status {
				t.Fatalf("span not closed with status %q: %+v", tc.status, f.tracer.Spans)
			}
			if tc.kind == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			te, ok := catalog.AsToolError(err)
			if !ok {
				t.Fatalf("error %T is not a ToolError", err)
			}
			if te.Kind != tc.kind || te.Message != tc.message {
				t.Fatalf("got %q/%q, want %q/%q", te.Kind, te.Message, tc.kind, tc.message)
			}
			if strings.Contains(te.Message, canary) || strings.Contains(fmt.Sprintf("%+v", rec), canary) {
				t.Fatal("a caller value leaked into the refusal or the audit record")
			}
		})
	}
}

func TestRateLimitRefusalCarriesRetryHint(t *testing.T) {
	f := newFixture(t, map[string]string{"ARROWHEAD_CALCULATE_PER_MINUTE": "2"})
	for i := 0; i < 2; i++ {
		if _, err := f.app.Call(t.Context(), reader, "echo", `{"text":"a"}`); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	_, err := f.app.Call(t.Context(), reader, "echo", json.RawMessage(`{"text":"a"}`))
	te, ok := catalog.AsToolError(err)
	if !ok || te.Kind != catalog.KindRateLimited || te.RetryAfter <= 0 {
		t.Fatalf("want rate_limited with retry hint, got %v", err)
	}
	if got := f.audit.Last().Refusal; got != string(catalog.KindRateLimited) {
		t.Fatalf("audit refusal %q", got)
	}
	// Another caller has its own bucket.
	if _, err := f.app.Call(t.Context(), ports.NewPrincipal("carol", "tools:read"), "echo", json.RawMessage(`{"text":"a"}`)); err != nil {
		t.Fatalf("other caller limited: %v", err)
	}
}

func TestRateStoreFailureFailsClosed(t *testing.T) {
	f := newFixture(t, nil)
	f.rates.Err = errors.New("store down")
	_, err := f.app.Call(t.Context(), reader, "echo", json.RawMessage(`{"text":"a"}`))
	if te, ok := catalog.AsToolError(err); !ok || te.Kind != catalog.KindRateLimited {
		t.Fatalf("want a refusal when the store fails, got %v", err)
	}
}

func TestRateLimitDisabled(t *testing.T) {
	f := newFixture(t, map[string]string{"ARROWHEAD_RATE_LIMIT_ENABLED": "false", "ARROWHEAD_CALCULATE_PER_MINUTE": "1"})
	for i := 0; i < 3; i++ {
		if _, err := f.app.Call(t.Context(), reader, "echo", json.RawMessage(`{"text":"a"}`)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if f.rates.Calls != 0 {
		t.Fatalf("rate store consulted %d times with limiting off", f.rates.Calls)
	}
}

// The guard order is kill switch, then rate limit, then scope: a disabled
// tool never consumes budget, and an unscoped caller is limited before it
// learns anything.
func TestGuardOrder(t *testing.T) {
	f := newFixture(t, map[string]string{"ARROWHEAD_DISABLED_TOOLS": "echo"})
	_, _ = f.app.Call(t.Context(), reader, "echo", json.RawMessage(`{"text":"a"}`))
	if f.rates.Calls != 0 {
		t.Fatal("a disabled tool consumed rate budget")
	}
	g := newFixture(t, map[string]string{"ARROWHEAD_CALCULATE_PER_MINUTE": "1"})
	unscoped := ports.NewPrincipal("mallory", "docs:read")
	_, _ = g.app.Call(t.Context(), unscoped, "echo", json.RawMessage(`{"text":"a"}`))
	_, err := g.app.Call(t.Context(), unscoped, "echo", json.RawMessage(`{"text":"a"}`))
	if te, _ := catalog.AsToolError(err); te == nil || te.Kind != catalog.KindRateLimited {
		t.Fatalf("unscoped caller should hit the rate limit before the scope check, got %v", err)
	}
}

func TestKillSwitchAtRuntime(t *testing.T) {
	f := newFixture(t, nil)
	before, _ := f.app.Integrity()
	f.app.SetDisabled([]string{"echo"})
	if len(f.app.ListTools(t.Context(), reader)) != 0 {
		t.Fatal("a disabled tool is still listed")
	}
	after, names := f.app.Integrity()
	if before == after || len(names) != 0 {
		t.Fatal("the integrity digest did not change when the tool was disabled")
	}
	_, err := f.app.Call(t.Context(), reader, "echo", json.RawMessage(`{"text":"a"}`))
	if te, _ := catalog.AsToolError(err); te == nil || te.Kind != catalog.KindDisabled {
		t.Fatalf("got %v", err)
	}
}

func TestListToolsFiltersByScope(t *testing.T) {
	f := newFixture(t, nil)
	if n := len(f.app.ListTools(t.Context(), reader)); n != 1 {
		t.Fatalf("scoped caller sees %d tools", n)
	}
	if n := len(f.app.ListTools(t.Context(), ports.NewPrincipal("x", "docs:read"))); n != 0 {
		t.Fatalf("unscoped caller sees %d tools", n)
	}
	if n := len(f.app.ListTools(t.Context(), ports.Anonymous())); n != 0 {
		t.Fatalf("anonymous caller sees %d tools", n)
	}
	if n := len(f.app.ListTools(t.Context(), ports.Operator())); n != 1 {
		t.Fatalf("operator sees %d tools", n)
	}
}

func TestProfileExcludesFamilies(t *testing.T) {
	f := newFixture(t, map[string]string{"ARROWHEAD_PROFILE": "docs"})
	if len(f.app.Tools()) != 1 {
		t.Fatal("the core family is part of the docs profile")
	}
}

// TestFamilyGate: a family the profile selects is still not served while
// its gate is closed (exec without ARROWHEAD_EXEC_ENABLED, for one).
func TestFamilyGate(t *testing.T) {
	for _, enabled := range []string{"false", "true"} {
		s := coretest.Settings(t, map[string]string{"ARROWHEAD_PROFILE": "coding", "ARROWHEAD_EXEC_ENABLED": enabled})
		gated := core.Family[bool, struct{}, struct{}]{
			ID:        catalog.FamilyExec,
			Configure: func(s *settings.Settings, c *bool) { *c = s.ExecEnabled },
			Gate:      func(enabled bool) bool { return enabled },
			GateDoc:   "`ARROWHEAD_EXEC_ENABLED` is true",
			Serve:     func(bool, struct{}) struct{} { return struct{}{} },
			Tools: []core.FamilyTool[struct{}]{
				core.Tool(catalog.Define[echoInput, echoOutput](catalog.ToolDef{
					Name: "echo", Scope: "tools:read", // its family is the list's: exec
					Ceiling:     catalog.Ceiling{Var: "ARROWHEAD_CALCULATE_PER_MINUTE", Default: 120},
					Description: "Echo text. Example: echo(text=\"hi\")",
				}), func(_ struct{}, _ context.Context, _ catalog.Call, in echoInput) (*catalog.Reply[echoOutput], error) {
					return catalog.Answer(echoOutput(in), in.Text), nil
				}),
			},
		}
		app, err := core.New(coretest.Deps(s, portstest.AllowAll{}, gated.With(struct{}{})))
		if err != nil {
			t.Fatal(err)
		}
		if served := len(app.Tools()) == 1; served != (enabled == "true") {
			t.Errorf("ARROWHEAD_EXEC_ENABLED=%s: served=%v", enabled, served)
		}
	}
}

func TestDeepArgumentsRefusedBeforeParsing(t *testing.T) {
	f := newFixture(t, nil)
	deep := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)
	_, err := f.app.Call(t.Context(), reader, "echo", json.RawMessage(deep))
	if te, _ := catalog.AsToolError(err); te == nil || te.Kind != catalog.KindValidation {
		t.Fatalf("got %v", err)
	}
}

func TestAuditShapesNeverValues(t *testing.T) {
	f := newFixture(t, nil)
	_, _ = f.app.Call(t.Context(), reader, "echo", map[string]any{"text": canary})
	rec := f.audit.Last()
	if rec.ArgShapes["text"] != fmt.Sprintf("string(%d)", len(canary)) {
		t.Fatalf("shape = %q", rec.ArgShapes["text"])
	}
	if strings.Contains(fmt.Sprintf("%+v", f.audit.Records()), canary) {
		t.Fatal("canary in audit record")
	}
}

func TestTraceCarrierReachesTracer(t *testing.T) {
	f := newFixture(t, nil)
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	_, _ = f.app.Call(t.Context(), reader, "echo", json.RawMessage(`{"text":"a"}`), core.WithTraceContext(ports.TraceCarrier{"traceparent": tp}))
	if f.audit.Last().TraceID != tp {
		t.Fatalf("trace id not carried: %q", f.audit.Last().TraceID)
	}
}

func TestNewRefusesMissingDependencies(t *testing.T) {
	_, err := core.New(core.Deps{Settings: settings.Defaults()})
	if !errors.Is(err, core.ErrMissingDependency) {
		t.Fatalf("got %v", err)
	}
}

func TestIntegrityResourceIsGuarded(t *testing.T) {
	f := newFixture(t, nil)
	got, err := f.app.ReadResource(t.Context(), reader, core.IntegrityURI)
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := f.app.Integrity()
	if len(got) != 1 || !strings.Contains(got[0].Text, digest) {
		t.Fatalf("integrity resource does not carry the digest: %+v", got)
	}
	if _, err := f.app.ReadResource(t.Context(), ports.Anonymous(), core.IntegrityURI); err == nil {
		t.Fatal("anonymous caller read the integrity resource")
	}
	_, err = f.app.ReadResource(t.Context(), reader, "doc://"+canary)
	if te, _ := catalog.AsToolError(err); te == nil || te.Kind != catalog.KindUnknown {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(fmt.Sprintf("%+v", f.audit.Records()), canary) {
		t.Fatal("a resource URI reached the audit record")
	}
}

// BenchmarkChainOverhead measures the guard chain around a trivial handler
// with in-memory doubles: the cost the chain adds per call.
func BenchmarkChainOverhead(b *testing.B) {
	f := newFixture(b, map[string]string{"ARROWHEAD_RATE_LIMIT_ENABLED": "false"})
	args := json.RawMessage(`{"text":"hello"}`)
	ctx := context.Background()
	lat := make([]time.Duration, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := f.app.Call(ctx, reader, "echo", args); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(start)
	}
	b.StopTimer()
	// Budgets are stated at p50: report it beside the mean, which a loaded
	// machine's stalls inflate.
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
}

// BenchmarkCalculateHandlerOnly is calculate's validation and handler
// without the chain. adapters/wire's BenchmarkCallGuarded is the same call
// through the whole chain with the real adapters; their difference is what
// the chain adds per call (budget: 15 µs).
func BenchmarkCalculateHandlerOnly(b *testing.B) {
	app, err := core.New(coretest.Deps(settings.Defaults(), portstest.AllowAll{},
		coretools.Family.With(coretools.Ports{Egress: &portstest.Egress{}, Sandbox: &portstest.FileJail{}})))
	if err != nil {
		b.Fatal(err)
	}
	var spec catalog.ToolSpec
	for _, t := range app.Tools() {
		if t.Spec.Name() == "calculate" {
			spec = t.Spec
		}
	}
	args := json.RawMessage(`{"expression":"2 * (3 + 4)"}`)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var parsed map[string]any
		if err := json.Unmarshal(args, &parsed); err != nil {
			b.Fatal(err)
		}
		if _, err := core.InvokeTool(spec, ctx, catalog.Call{Principal: ports.Operator()}, args, parsed); err != nil {
			b.Fatal(err)
		}
	}
}
